// The Go peer of bench/echo: a TCP echo server on net, one goroutine per
// connection reading up to 64 KiB and writing back what it read, as the
// suite's other servers do. Standard library only: `go build go_echo.go`.
//
//	go_echo --port P
//
// The first line on stdout is "listening on 127.0.0.1:P". The runtime takes
// its GOMAXPROCS from the CPU affinity: pinned to one core, one thread runs Go.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
)

func echo(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64*1024)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: any free port)")
	flag.Parse()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go echo(c) // net sets TCP_NODELAY on TCP connections by default
	}
}
