// The idle suite's client (bench/idle/idle_suite.py): opens --conns connections to
// 127.0.0.1:--port, each doing one exchange (idle_wire.hpp's Script for --proto, over
// TLS with --tls), then holds them all open, idle, until its stdin closes or SIGTERM.
//
// Plain POSIX, one edge-triggered epoll loop, OpenSSL for --tls: cheap per connection,
// so that the server, not this client, is what the accept rate measures. At most
// --inflight connections are being set up at a time (the rest wait their turn), so a
// listen backlog never overflows into SYN retries. Connections come from
// --sources local addresses 127.0.0.B .. 127.0.0.(B + sources - 1) (B: --source-base),
// each good for one ephemeral port range's worth of connections to one server port.
//
// Prints two JSON lines on stdout:
//   once every connection is set up (or failed, or --timeout passed):
//     {"established": N, "failed": F, "seconds": S, "deflate": D, "no_takeover": T, "cpu_s": C}
//     (D: connections whose server agreed permessage-deflate, T: of them, those whose
//     answer also named server_ and client_no_context_takeover; C: this client's CPU)
//   at the end: {"open": O, "closed": X, "pings": P}
//     (X: connections the server closed while idle; P: WebSocket pings answered)
// Errors of the first connections that failed go to stderr.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "idle_wire.hpp"

namespace {

struct Args {
  int port = 0;
  idle::Script script{"http", "/hello", "127.0.0.1"};
  bool tls = false;
  std::size_t conns = 1000, inflight = 128;
  int sources = 1, source_base = 1;
  double timeout = 300;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--port")
      a.port = std::atoi(v.c_str());
    else if (k == "--proto")
      a.script.proto = v;
    else if (k == "--path")
      a.script.path = v;
    else if (k == "--tls")
      a.tls = v == "1";
    else if (k == "--conns")
      a.conns = std::strtoul(v.c_str(), nullptr, 10);
    else if (k == "--inflight")
      a.inflight = std::strtoul(v.c_str(), nullptr, 10);
    else if (k == "--sources")
      a.sources = std::max(1, std::atoi(v.c_str()));
    else if (k == "--source-base")
      a.source_base = std::atoi(v.c_str());
    else if (k == "--timeout")
      a.timeout = std::atof(v.c_str());
  }
  a.script.host = "127.0.0.1:" + std::to_string(a.port);
  return a;
}

enum class Phase { connecting, handshake, exchange, idle, gone };

struct Conn {
  int fd = -1;
  SSL* ssl = nullptr;
  Phase phase = Phase::connecting;
  int step = 0;
  bool deflate = false, no_takeover = false;
  std::string out, in;  // bytes to send, bytes received and not parsed yet
};

struct Counts {
  std::size_t started = 0, established = 0, failed = 0, deflate = 0, no_takeover = 0, closed = 0,
              pings = 0;
};

volatile std::sig_atomic_t g_stop = 0;

class Client {
 public:
  explicit Client(const Args& a) : a_(a), conns_(a.conns), ep_(::epoll_create1(0)) {
    if (a.tls) {
      ctx_ = SSL_CTX_new(TLS_client_method());
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
      SSL_CTX_set_mode(ctx_, SSL_MODE_RELEASE_BUFFERS);  // keep the client cheap
    }
  }

  // Sets every connection up: true if all were tried before the timeout.
  void establish() {
    const auto t0 = std::chrono::steady_clock::now();
    const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(a_.timeout));
    while (n_.established + n_.failed < conns_.size() && !g_stop) {
      while (n_.started < conns_.size() && n_.started - n_.established - n_.failed < a_.inflight)
        start();
      if (std::chrono::steady_clock::now() > deadline) break;
      poll(100);
    }
    for (Conn& c : conns_)
      if (c.phase != Phase::idle && c.phase != Phase::gone && c.fd >= 0) fail(c, "timed out");
    n_.failed += conns_.size() - n_.started;  // never started: the timeout came first
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    std::printf(
        "{\"established\": %zu, \"failed\": %zu, \"seconds\": %.4f, \"deflate\": %zu, "
        "\"no_takeover\": %zu, \"cpu_s\": %.3f}\n",
        n_.established, n_.failed, secs, n_.deflate, n_.no_takeover, cpu);
    std::fflush(stdout);
  }

  // Holds the connections (answering pings) until stdin closes or a signal.
  void hold() {
    epoll_event ev{EPOLLIN, {}};
    ev.data.u64 = kStdin;
    const bool watch_stdin = ::epoll_ctl(ep_, EPOLL_CTL_ADD, 0, &ev) == 0;  // not a /dev/null file
    while (!g_stop && !stdin_closed_) poll(watch_stdin ? -1 : 1000);
    std::size_t open = 0;
    for (const Conn& c : conns_) open += c.phase == Phase::idle;
    std::printf("{\"open\": %zu, \"closed\": %zu, \"pings\": %zu}\n", open, n_.closed, n_.pings);
    std::fflush(stdout);
  }

 private:
  static constexpr std::uint64_t kStdin = ~std::uint64_t{0};

  void start() {
    const std::size_t i = n_.started++;
    Conn& c = conns_[i];
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c.fd < 0) return fail(c, "socket");
    const int one = 1;
    ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // The port is picked at connect() for the whole 4-tuple, not at bind() for the
    // address alone: each source address then has the whole ephemeral range.
    ::setsockopt(c.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    src.sin_addr.s_addr =
        htonl((127u << 24) | static_cast<std::uint32_t>(a_.source_base + i % a_.sources));
    if (::bind(c.fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) return fail(c, "bind");
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(a_.port));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(c.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS)
      return fail(c, "connect");
    epoll_event ev{EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, {}};
    ev.data.u64 = i;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev) != 0) return fail(c, "epoll_ctl");
  }

  void poll(int timeout_ms) {
    const int n = ::epoll_wait(ep_, events_, kEvents, timeout_ms);
    for (int e = 0; e < n; ++e) {
      if (events_[e].data.u64 == kStdin) {
        char buf[256];
        stdin_closed_ = ::read(0, buf, sizeof buf) <= 0;
        continue;
      }
      drive(conns_[events_[e].data.u64]);
    }
  }

  // Edge-triggered: does everything the connection can do now, until it would block.
  void drive(Conn& c) {
    if (c.phase == Phase::gone) return;
    if (c.phase == Phase::connecting) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) return fail(c, std::strerror(err));
      if (a_.tls) {
        c.ssl = SSL_new(ctx_);
        SSL_set_fd(c.ssl, c.fd);
        SSL_set_tlsext_host_name(c.ssl, "localhost");
        SSL_set_connect_state(c.ssl);
        c.phase = Phase::handshake;
      } else {
        begin_exchange(c);
      }
    }
    if (c.phase == Phase::handshake) {
      const int r = SSL_do_handshake(c.ssl);
      if (r != 1) {
        const int e = SSL_get_error(c.ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return;
        return fail(c, "TLS handshake");
      }
      begin_exchange(c);
    }
    if (!flush(c)) return fail(c, "send");
    char buf[16384];
    for (;;) {
      const long got = receive(c, buf, sizeof buf);
      if (got == -1) break;
      if (got <= 0) {
        if (c.phase == Phase::idle) {
          ++n_.closed;
          return close(c);
        }
        return fail(c, got == 0 ? "closed by the server" : "receive");
      }
      c.in.append(buf, static_cast<std::size_t>(got));
    }
    if (!consume(c)) return fail(c, "unexpected answer");
    if (!flush(c)) return fail(c, "send");
  }

  void begin_exchange(Conn& c) {
    c.phase = Phase::exchange;
    c.out = a_.script.request(0, {}, false);
  }

  // Parses what arrived: true unless it is an answer the exchange did not expect.
  bool consume(Conn& c) {
    if (h2_) return consume_h2(c);
    for (;;) {
      if (c.phase == Phase::exchange && a_.script.http_answer(c.step)) {
        idle::Head h;
        if (!idle::parse_answer(c.in, h)) return true;
        if (h.status < 100 || h.status >= 300) return false;
        c.in.erase(0, h.length);
        if (c.step == 0) {
          c.deflate = h.deflate;
          c.no_takeover = h.deflate && h.no_takeover;
        }
        next_step(c, h);
        continue;
      }
      if (c.phase == Phase::idle && !ws_) {
        c.in.clear();  // nothing is expected while idle: drop it
        return true;
      }
      idle::Frame f;
      if (c.in.empty() || !idle::parse_frame(c.in, f)) return true;
      if (f.opcode == 9) {  // a ping: the pong carries its payload back
        c.out += idle::client_frame(10, false,
                                    std::string_view(c.in).substr(f.payload_at, f.payload_len));
        ++n_.pings;
      }
      if (f.opcode == 8) return c.phase == Phase::idle;  // the server closes; EOF follows
      c.in.erase(0, f.length);
      if (c.phase == Phase::exchange && f.opcode < 8 && f.fin) next_step(c, {});
    }
  }

  // HTTP/2: the server's SETTINGS and PINGs acknowledged; the exchange is done when
  // stream 1 ends (END_STREAM on its HEADERS or DATA); a GOAWAY is a failure unless idle.
  bool consume_h2(Conn& c) {
    idle::H2Frame f;
    while (idle::parse_h2_frame(c.in, f)) {
      if (f.type == 4 && !(f.flags & 1)) c.out += idle::h2_frame(4, 1, 0, "");
      if (f.type == 6 && !(f.flags & 1)) {
        c.out += idle::h2_frame(6, 1, 0, std::string_view(c.in).substr(9, 8));
        ++n_.pings;
      }
      if (f.type == 7) return c.phase == Phase::idle;
      const bool done = f.stream == 1 && (f.type == 0 || f.type == 1) && (f.flags & 1);
      c.in.erase(0, f.length);
      if (c.phase == Phase::exchange && done) next_step(c, {});
    }
    if (c.phase == Phase::idle) std::string().swap(c.in);
    return true;
  }

  void next_step(Conn& c, const idle::Head& h) {
    const std::string req = a_.script.request(++c.step, h, c.deflate);
    if (!req.empty()) {
      c.out += req;
      return;
    }
    c.phase = Phase::idle;
    ++n_.established;
    n_.deflate += c.deflate;
    n_.no_takeover += c.no_takeover;
    std::string().swap(c.in);  // an idle client connection keeps no buffer either
  }

  // Sends what is pending; false on an error.
  bool flush(Conn& c) {
    while (!c.out.empty()) {
      long n;
      if (c.ssl) {
        n = SSL_write(c.ssl, c.out.data(), static_cast<int>(c.out.size()));
        if (n <= 0) {
          const int e = SSL_get_error(c.ssl, static_cast<int>(n));
          return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
        }
      } else {
        n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (n < 0) return errno == EAGAIN;
      }
      c.out.erase(0, static_cast<std::size_t>(n));
    }
    std::string().swap(c.out);
    return true;
  }

  // > 0: bytes read; -1: would block; 0: EOF; -2: an error.
  long receive(Conn& c, char* buf, std::size_t size) {
    if (!c.ssl) {
      const long n = ::recv(c.fd, buf, size, 0);
      return n >= 0 ? n : errno == EAGAIN ? -1 : -2;
    }
    const int n = SSL_read(c.ssl, buf, static_cast<int>(size));
    if (n > 0) return n;
    const int e = SSL_get_error(c.ssl, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return -1;
    ERR_clear_error();
    return e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0) ? 0 : -2;
  }

  void fail(Conn& c, const char* what) {
    ++n_.failed;
    if (n_.failed <= 5)
      std::fprintf(stderr, "idle_loadgen: connection %zu (step %d): %s\n",
                   static_cast<std::size_t>(&c - conns_.data()), c.step, what);
    close(c);
  }

  void close(Conn& c) {
    if (c.ssl) SSL_free(c.ssl);
    if (c.fd >= 0) ::close(c.fd);
    c = Conn{};
    c.phase = Phase::gone;
  }

  static constexpr int kEvents = 1024;
  const Args& a_;
  std::vector<Conn> conns_;
  int ep_;
  SSL_CTX* ctx_ = nullptr;
  const bool ws_ = a_.script.proto.rfind("ws", 0) == 0;  // ws, ws-deflate, ws-deflate-nct
  const bool h2_ = a_.script.proto == "h2c";
  Counts n_;
  bool stdin_closed_ = false;
  epoll_event events_[kEvents];
};

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;  // the script checked that conns fit under the hard limit
  ::setrlimit(RLIMIT_NOFILE, &lim);
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  ::sigaction(SIGTERM, &sa, nullptr);  // no SA_RESTART: epoll_wait returns EINTR
  ::sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  Client client(a);
  client.establish();
  client.hold();
  return 0;
}
