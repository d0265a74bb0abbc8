// The Go peer of bench/idle: net/http's server answering GET /hello with
// "Hello, World!" as `corio serve` and the suite's nginx do, over HTTP/1.1,
// or over TLS with -tls-cert and -tls-key (crypto/tls; the client offers no
// ALPN, so HTTP/1.1 there too). Standard library only: `go build go_hello.go`.
//
//	go_hello -port P [-idle-timeout S] [-tls-cert F -tls-key F]
//
// The first line on stdout is "listening on 127.0.0.1:P". The runtime takes
// its GOMAXPROCS from the CPU affinity: pinned to one core, one thread runs Go.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	port := flag.Int("port", 8080, "port on 127.0.0.1")
	idle := flag.Int("idle-timeout", 75, "keep-alive: seconds between two requests")
	cert := flag.String("tls-cert", "", "certificate (PEM): serve TLS")
	key := flag.String("tls-key", "", "its private key (PEM)")
	flag.Parse()

	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Hello, World!"))
	})
	// No log line per failed handshake: the harness's listening probe is one.
	srv := &http.Server{Handler: mux, IdleTimeout: time.Duration(*idle) * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	if *cert != "" {
		err = srv.ServeTLS(ln, *cert, *key)
	} else {
		err = srv.Serve(ln)
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
