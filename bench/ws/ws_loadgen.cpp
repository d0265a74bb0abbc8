// The ws suite's load generator (bench/ws/ws_suite.py): plain POSIX, one epoll loop.
//
// --conns connections to ws://127.0.0.1:PORT/ws, each doing the opening handshake, then
// keeping one binary message of --size bytes in flight: send it (masked, as a client
// must), read its echo (a whole frame header and payload), send the next. Messages
// answered during the --warmup seconds are not counted; then for --duration seconds
// they are. Prints "connected" once the handshakes are done, then one JSON line,
// metric ws_<size>_rate in msg/s. No permessage-deflate offered, so every server
// echoes plain frames.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Conn {
  int fd = -1;
  std::size_t sent = 0;      // of the current message's frame
  std::size_t received = 0;  // of its echo
};

struct Args {
  int port = 0;
  std::size_t size = 1024, conns = 10;
  double duration = 2.0, warmup = 0.3;
  std::string impl = "?";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--port") a.port = std::atoi(v.c_str());
    else if (k == "--size") a.size = std::strtoul(v.c_str(), nullptr, 10);
    else if (k == "--conns") a.conns = std::strtoul(v.c_str(), nullptr, 10);
    else if (k == "--duration") a.duration = std::atof(v.c_str());
    else if (k == "--warmup") a.warmup = std::atof(v.c_str());
    else if (k == "--impl") a.impl = v;
  }
  return a;
}

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

// A client's binary frame of `size` bytes, masked with a fixed key (the echo only
// needs a valid frame; the key's unpredictability protects browsers, not a benchmark).
std::string client_frame(std::size_t size) {
  std::string f;
  f += static_cast<char>(0x82);
  if (size < 126) {
    f += static_cast<char>(0x80 | size);
  } else if (size <= 0xFFFF) {
    f += static_cast<char>(0x80 | 126);
    f += static_cast<char>(size >> 8);
    f += static_cast<char>(size & 0xFF);
  } else {
    f += static_cast<char>(0x80 | 127);
    for (int s = 56; s >= 0; s -= 8) f += static_cast<char>((size >> s) & 0xFF);
  }
  const unsigned char key[4] = {0x12, 0x34, 0x56, 0x78};
  f.append(reinterpret_cast<const char*>(key), 4);
  for (std::size_t i = 0; i < size; ++i) f += static_cast<char>(('a' + i % 26) ^ key[i % 4]);
  return f;
}

std::size_t echo_length(std::size_t size) { return size + (size < 126 ? 2 : size <= 0xFFFF ? 4 : 10); }

int handshake(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) die("connect");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const std::string req = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                          "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) die("write");
  std::string head;
  char c;
  // Byte by byte up to the blank line, so nothing of the first echo is read here.
  while (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
    if (::read(fd, &c, 1) != 1) die("handshake read");
    head += c;
  }
  if (head.compare(0, 12, "HTTP/1.1 101") != 0) {
    std::fprintf(stderr, "handshake refused: %s\n", head.c_str());
    std::exit(1);
  }
  return fd;
}

// Sends what is left of the frame; true once it is all out.
bool push(Conn& c, const std::string& frame) {
  while (c.sent < frame.size()) {
    const ssize_t n = ::send(c.fd, frame.data() + c.sent, frame.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0) return false;
    c.sent += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const std::string frame = client_frame(a.size);
  const std::size_t expect = echo_length(a.size);
  const int ep = ::epoll_create1(0);
  std::vector<Conn> conns(a.conns);
  for (std::size_t i = 0; i < conns.size(); ++i) {
    conns[i].fd = handshake(a.port);
    ::fcntl(conns[i].fd, F_SETFL, ::fcntl(conns[i].fd, F_GETFL) | O_NONBLOCK);
    epoll_event ev{EPOLLIN | EPOLLOUT | EPOLLET, {}};
    ev.data.u64 = i;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
  }
  // benchlib.load starts its clock (warm-up, CPU samples) here, as for echo_loadgen.
  std::puts("connected");
  std::fflush(stdout);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const auto start = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.warmup));
  const auto stop = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.duration));
  std::uint64_t counted = 0;
  std::vector<char> scratch(1 << 20);
  std::vector<epoll_event> events(conns.size());
  while (Clock::now() < stop) {
    const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    const bool measuring = Clock::now() >= start;
    for (int e = 0; e < n; ++e) {
      Conn& c = conns[events[e].data.u64];
      push(c, frame);  // edge-triggered: whatever room there is, use it
      for (;;) {
        const ssize_t got = ::recv(c.fd, scratch.data(), scratch.size(), 0);
        if (got <= 0) break;
        c.received += static_cast<std::size_t>(got);
        while (c.received >= expect) {  // one echo complete: the next message
          c.received -= expect;
          if (measuring) ++counted;
          c.sent = 0;
          push(c, frame);
        }
      }
    }
  }
  // bench/run's result shape, as echo_loadgen prints it: the suite adds the server's CPU.
  std::printf("{\"impl\": \"%s\", \"metric\": \"ws_%zu_rate\", \"value\": %.1f, \"unit\": \"msg/s\"}\n",
              a.impl.c_str(), a.size, static_cast<double>(counted) / a.duration);
  return 0;
}
