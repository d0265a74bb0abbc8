// Helpers shared by the stream tests: a time bound on every test, servers
// and raw peers on loopback, a recorder for the loop's exception reports.
//
// State goes into coroutines as parameters, never as lambda captures
// (DESIGN.md "Known toolchain traps").
#pragma once

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "async/async_support.hpp"  // CO_ASSERT
#include <corio/corio.hpp>

namespace corio_net_test {

using corio::Coro;
using corio::Server;
using corio::Socket;
using corio::SocketAddress;
using corio::StreamReader;
using corio::StreamWriter;
using corio::Task;
using namespace std::chrono_literals;

// Runs a test body on a fresh loop with a time bound: a lost wake-up fails
// the test instead of hanging it.
inline void run_bounded(Coro<void> body, std::chrono::seconds limit = 10s) {
  try {
    corio::run(corio::wait_for(std::move(body), limit));
  } catch (const corio::TimeoutError&) {
    ADD_FAILURE() << "the test did not finish within " << limit.count() << " s";
  }
}

// The errno of what `aw` throws (0 if it does not throw a system_error).
template <class A>
Coro<int> errno_of(A aw) {
  try {
    co_await std::move(aw);
  } catch (const std::system_error& e) {
    co_return e.code().value();
  }
  co_return 0;
}

inline bool has_ipv6_loopback() {
  try {
    Socket s = Socket::create(AF_INET6, SOCK_STREAM);
    s.bind(SocketAddress::ip("::1", 0));
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

// A raw listening socket on an ephemeral loopback port.
inline Socket raw_listener(const char* host = "127.0.0.1", int backlog = SOMAXCONN) {
  SocketAddress addr = SocketAddress::ip(host, 0);
  Socket s = Socket::create(addr.family(), SOCK_STREAM);
  s.bind(addr);
  s.listen(backlog);
  return s;
}

// Echoes line by line until EOF, then closes.
inline Coro<void> echo_lines(StreamReader reader, StreamWriter writer) {
  for (;;) {
    std::string line = co_await reader.readline();
    if (line.empty()) break;
    writer.write(line);
    co_await writer.drain();
  }
  writer.close();
  co_await writer.wait_closed();
}

// Echoes lines with no error handling of its own; "boom\n" throws
// std::runtime_error("boom"), a bug in the handler.
inline Coro<void> fail_on_boom(StreamReader reader, StreamWriter writer) {
  for (;;) {
    std::string line = co_await reader.readline();
    if (line.empty()) co_return;
    if (line == "boom\n") throw std::runtime_error("boom");
    writer.write(line);
    co_await writer.drain();
  }
}

inline Coro<Server> echo_server(const char* host = "127.0.0.1") {
  co_return co_await corio::start_server(echo_lines, host, 0);
}

// Sends `line` (ending in "\n") and returns the echo.
inline Coro<std::string> echo_round_trip(StreamReader reader, StreamWriter writer,
                                         std::string line) {
  writer.write(line);
  co_await writer.drain();
  co_return co_await reader.readline();
}

// A client stream pair connected to a raw peer socket the test drives.
struct RawPeer {
  Socket peer;
  StreamReader reader;
  StreamWriter writer;
};

inline Coro<RawPeer> connect_to_raw_peer(std::size_t limit = corio::kDefaultStreamLimit) {
  Socket lst = raw_listener();
  corio::ConnectOptions opts;
  opts.limit = limit;
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", lst.local_address().port(), opts);
  auto accepted = co_await corio::get_running_loop().sock_accept(lst);
  co_return RawPeer{std::move(accepted.first), reader, writer};
}

// Caps the socket buffers between the writer and its raw peer: the kernel's
// autotuning grows a loopback pair's to tens of MiB (tcp_rmem's maximum is
// 32 MiB on the CI machine), so a peer that does not read could otherwise
// take a test's "too big to fit" write whole, sooner or later.
inline void cap_socket_buffers(RawPeer& p, int bytes = 64 * 1024) {
  ::setsockopt(p.peer.fd(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  ::setsockopt(p.writer.fileno(), SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

// Sends all of data from a raw socket.
inline Coro<void> raw_send(Socket& s, std::string data) {
  co_await corio::get_running_loop().sock_sendall(s, data);
}

// A listener whose accept queue is full (backlog 0, nobody accepting):
// Linux then drops further SYNs, so connecting to it hangs. Empty when the
// kernel here still completes connections (the caller skips).
struct StalledListener {
  Socket listener;
  std::vector<Socket> queued;  // the connections filling the queue
  SocketAddress address() const { return listener.local_address(); }
};

inline Coro<std::optional<StalledListener>> stalled_listener() {
  corio::EventLoop& loop = corio::get_running_loop();
  StalledListener st{raw_listener("127.0.0.1", 0), {}};
  const SocketAddress addr = st.address();
  for (int i = 0; i < 8; ++i) {
    Socket s = Socket::create(AF_INET, SOCK_STREAM);
    bool hung = false;
    try {
      co_await corio::wait_for(loop.sock_connect(s, addr), 200ms);
    } catch (const corio::TimeoutError&) {
      hung = true;
    }
    st.queued.push_back(std::move(s));
    if (hung) co_return st;
  }
  co_return std::nullopt;
}

// What the loop's exception handler was called with (install from inside
// the loop; it must outlive corio::run).
using corio_async_test::Reports;

// A Unix socket path unique to this process and test.
inline std::string unix_path(const char* tag) {
  return "/tmp/corio-net-" + std::to_string(::getpid()) + "-" + tag + ".sock";
}

// RLIMIT_NOFILE changed for one test, restored on scope exit.
class FdLimit {
 public:
  FdLimit() { ::getrlimit(RLIMIT_NOFILE, &saved_); }
  FdLimit(const FdLimit&) = delete;
  FdLimit& operator=(const FdLimit&) = delete;
  ~FdLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  rlim_t soft() const { return saved_.rlim_cur; }
  rlim_t hard() const { return saved_.rlim_max; }
  bool set_soft(rlim_t n) const {
    rlimit r = saved_;
    r.rlim_cur = n;
    return ::setrlimit(RLIMIT_NOFILE, &r) == 0;
  }

 private:
  rlimit saved_{};
};

}  // namespace corio_net_test
