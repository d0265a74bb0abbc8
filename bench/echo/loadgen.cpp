// Echo load generator: raw epoll, one thread, C closed-loop connections.
//
// Protocol (bench/echo/README.md): each connection sends a message of N bytes, waits
// until N bytes have come back, then sends the next. The server is a pure byte echo
// (no framing), so the bytes may come back in any chunking.
//
// Deliberately not written on corio (nor on any peer): it must be neutral, and cheap
// enough not to be the bottleneck. Per round trip it makes one write and usually one
// read: a message is written in one call when the socket takes it, and reading stops as
// soon as the N bytes are in (nothing more can be pending in a closed loop), so no
// syscall is spent on EAGAIN. Edge-triggered EPOLLIN|EPOLLOUT, registered once.
//
// Output: one JSON object per line, the peers' shape (bench/peers/peer_common.py):
//   {"impl": I, "metric": "echo_<N>x<C>_<what>", "value": V, "unit": U}
// with <what> = rate (msg/s), mbps (MB/s of payload, one direction), p50 / p99 (us,
// round-trip latency over the measured window).
//
// Usage: echo_loadgen --port P [--host 127.0.0.1] [--size N] [--conns C]
//                     [--duration S] [--warmup S] [--impl NAME] [--verify]

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "echo_loadgen: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Conn {
  int fd = -1;
  std::size_t sent = 0;      // bytes of the current message written
  std::size_t received = 0;  // bytes of the current message echoed back
  std::int64_t started = 0;  // when the current message's first byte was written
  bool idle = false;         // draining at the end, and this connection's last message is back
};

struct Options {
  const char* host = "127.0.0.1";
  int port = 0;
  std::size_t size = 1024;
  int conns = 10;
  double duration = 3.0;
  double warmup = 0.5;
  std::string impl = "unknown";
  bool verify = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "echo_loadgen: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--host") o.host = next();
    else if (a == "--port") o.port = std::atoi(next());
    else if (a == "--size") o.size = std::strtoul(next(), nullptr, 10);
    else if (a == "--conns") o.conns = std::atoi(next());
    else if (a == "--duration") o.duration = std::atof(next());
    else if (a == "--warmup") o.warmup = std::atof(next());
    else if (a == "--impl") o.impl = next();
    else if (a == "--verify") o.verify = true;
    else {
      std::fprintf(stderr,
                   "usage: echo_loadgen --port P [--host H] [--size N] [--conns C] "
                   "[--duration S] [--warmup S] [--impl NAME] [--verify]\n");
      std::exit(2);
    }
  }
  if (o.port <= 0 || o.size == 0 || o.conns <= 0 || o.duration <= 0) {
    std::fprintf(stderr, "echo_loadgen: need --port > 0, --size > 0, --conns > 0, --duration > 0\n");
    std::exit(2);
  }
  return o;
}

int connect_one(const Options& o) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(o.port));
  if (inet_pton(AF_INET, o.host, &addr.sin_addr) != 1) {
    std::fprintf(stderr, "echo_loadgen: bad IPv4 address %s\n", o.host);
    std::exit(2);
  }
  // Blocking connect, then non-blocking: connection setup is not measured.
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("connect");
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) die("O_NONBLOCK");
  return fd;
}

class Loadgen {
 public:
  explicit Loadgen(const Options& o) : o_(o), out_(o.size), in_(std::max<std::size_t>(o.size, 65536)) {
    for (std::size_t i = 0; i < out_.size(); ++i) out_[i] = static_cast<unsigned char>(i * 131 + 7);
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) die("epoll_create1");
    conns_.resize(static_cast<std::size_t>(o.conns));
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      conns_[i].fd = connect_one(o);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
      ev.data.u32 = static_cast<std::uint32_t>(i);
      if (epoll_ctl(ep_, EPOLL_CTL_ADD, conns_[i].fd, &ev) != 0) die("epoll_ctl");
    }
  }

  ~Loadgen() {
    for (auto& c : conns_) close(c.fd);
    close(ep_);
  }

  void run() {
    const std::int64_t t0 = now_ns();
    const std::int64_t measure_at = t0 + static_cast<std::int64_t>(o_.warmup * 1e9);
    end_ = measure_at + static_cast<std::int64_t>(o_.duration * 1e9);
    latencies_.reserve(1 << 20);
    for (auto& c : conns_) {
      c.started = t0;
      write_some(c);
    }
    std::vector<epoll_event> events(conns_.size());
    std::int64_t now = t0, drain_until = 0;
    busy_ = conns_.size();
    measuring_ = o_.warmup <= 0;
    if (measuring_) begin_ = t0;
    for (;;) {
      const std::int64_t until = draining_ ? drain_until : measuring_ ? end_ : measure_at;
      const int timeout_ms = static_cast<int>(std::max<std::int64_t>(until - now + 999'999, 0) / 1'000'000);
      const int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), timeout_ms);
      if (n < 0) {
        if (errno == EINTR) continue;
        die("epoll_wait");
      }
      for (int i = 0; i < n; ++i) {
        Conn& c = conns_[events[i].data.u32];
        if (events[i].events & (EPOLLERR | EPOLLHUP)) {
          int err = 0;
          socklen_t len = sizeof err;
          getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
          errno = err;
          die("connection error");
        }
        if (events[i].events & EPOLLIN) read_some(c);
        if (events[i].events & EPOLLOUT) write_some(c);
      }
      now = now_ns();
      if (!measuring_ && !draining_ && now >= measure_at) {
        measuring_ = true;
        begin_ = now;
        count_ = 0;
        latencies_.clear();
      }
      if (measuring_ && now >= end_) {
        // Let the messages in flight come back before closing: closing a socket with
        // unread bytes sends a reset, which servers would report as errors.
        measuring_ = false;
        draining_ = true;
        elapsed_ = static_cast<double>(now - begin_) / 1e9;
        drain_until = now + 2'000'000'000;
      }
      if (draining_ && (busy_ == 0 || now >= drain_until)) break;
    }
  }

  void report() {
    const double rate = static_cast<double>(count_) / elapsed_;
    const double mbps = rate * static_cast<double>(o_.size) / 1e6;
    double p50 = 0, p99 = 0;
    if (!latencies_.empty()) {
      auto pct = [&](double q) {
        auto k = static_cast<std::size_t>(q * static_cast<double>(latencies_.size() - 1));
        std::nth_element(latencies_.begin(), latencies_.begin() + static_cast<std::ptrdiff_t>(k),
                         latencies_.end());
        return static_cast<double>(latencies_[k]) / 1e3;
      };
      p50 = pct(0.50);
      p99 = pct(0.99);
    }
    const std::string key = "echo_" + std::to_string(o_.size) + "x" + std::to_string(o_.conns);
    emit(key + "_rate", rate, "msg/s");
    emit(key + "_mbps", mbps, "MB/s");
    emit(key + "_p50", p50, "us");
    emit(key + "_p99", p99, "us");
    std::fprintf(stderr, "  %s %zu B x %d conns: %.0f msg/s, %.1f MB/s, p50 %.1f us, p99 %.1f us (%llu msgs in %.2f s)\n",
                 o_.impl.c_str(), o_.size, o_.conns, rate, mbps, p50, p99,
                 static_cast<unsigned long long>(count_), elapsed_);
  }

 private:
  void emit(const std::string& metric, double value, const char* unit) {
    std::printf("{\"impl\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
                o_.impl.c_str(), metric.c_str(), value, unit);
  }

  void write_some(Conn& c) {
    if (c.idle) return;
    while (c.sent < o_.size) {
      const ssize_t n = write(c.fd, out_.data() + c.sent, o_.size - c.sent);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;  // EPOLLOUT edge resumes it
        die("write");
      }
      c.sent += static_cast<std::size_t>(n);
    }
  }

  // Reads until the message is complete or the socket is drained. Stopping at a complete
  // message without draining is safe with EPOLLET: the echo of the next message is new
  // data, and every arrival of new data raises a new edge.
  void read_some(Conn& c) {
    if (c.idle) return;
    for (;;) {
      const std::size_t want = std::min(o_.size - c.received, in_.size());
      const ssize_t n = read(c.fd, in_.data(), want);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        die("read");
      }
      if (n == 0) {
        std::fprintf(stderr, "echo_loadgen: server closed a connection\n");
        std::exit(1);
      }
      const auto got = static_cast<std::size_t>(n);
      if (o_.verify && std::memcmp(in_.data(), out_.data() + c.received, got) != 0) {
        std::fprintf(stderr, "echo_loadgen: echoed bytes differ from the bytes sent\n");
        std::exit(1);
      }
      c.received += got;
      if (c.received == o_.size) {
        complete(c);
        return;
      }
    }
  }

  void complete(Conn& c) {
    const std::int64_t t = now_ns();
    if (measuring_) {
      latencies_.push_back(t - c.started);
      ++count_;
    }
    c.sent = c.received = 0;
    c.started = t;
    if (draining_) {
      c.idle = true;
      --busy_;
      return;
    }
    write_some(c);
  }

  const Options& o_;
  std::vector<unsigned char> out_, in_;
  std::vector<Conn> conns_;
  std::vector<std::int64_t> latencies_;
  int ep_ = -1;
  bool measuring_ = false, draining_ = false;
  std::size_t busy_ = 0;  // connections with a message in flight
  std::int64_t begin_ = 0, end_ = 0;
  std::uint64_t count_ = 0;
  double elapsed_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Loadgen g(o);
  // The suite starts its clock (warm-up, CPU samples) here, not at exec: with a small
  // listen backlog, 1,000 connects can take seconds of SYN retries.
  std::puts("connected");
  std::fflush(stdout);
  g.run();
  g.report();
}
