// Helpers for the io_uring backend's tests (uring_*_test.cpp), which drive
// the IoBackend seam directly on socketpairs, pipes and loopback TCP.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "core/backend/io_uring/probe.hpp"
#include "core/backend/io_uring/uring_backend.hpp"

namespace uring_test {

using corio::SocketAddress;
using corio::detail::IoBackend;
using corio::detail::IoEvent;


using corio::SocketAddress;
using corio::detail::IoBackend;
using corio::detail::IoEvent;

// Polls until fd is reported in the wanted direction; false after `rounds`
// polls of up to a second each (a generous bound, never a timing assertion).
inline bool wait_for(IoBackend& b, int fd, bool write, int rounds = 10) {
  std::array<IoEvent, 64> ev{};
  for (int i = 0; i < rounds; ++i) {
    const int n = b.poll(1000, ev.data(), static_cast<int>(ev.size()));
    for (int k = 0; k < n; ++k) {
      if (ev[k].fd == fd && (write ? ev[k].writable : ev[k].readable)) return true;
    }
  }
  return false;
}

// Polls without waiting: submits what the last steps queued, reaps what came.
inline int pump(IoBackend& b, int fd = -1, int times = 3) {
  std::array<IoEvent, 64> ev{};
  int hits = 0;
  for (int i = 0; i < times; ++i) {
    const int n = b.poll(0, ev.data(), static_cast<int>(ev.size()));
    for (int k = 0; k < n; ++k) hits += ev[k].fd == fd;
  }
  return hits;
}

// As the loop does: a try_recv that finds nothing, then a wait.
inline void start_receiving(IoBackend& b, int fd) {
  EXPECT_EQ(b.try_recv(fd, std::span<char>(), true), -EAGAIN);
  b.arm(fd, false);
}

inline std::string recv_all(IoBackend& b, int fd, std::size_t want) {
  std::string got;
  std::array<char, 65536> buf{};
  while (got.size() < want) {
    const long n = b.try_recv(fd, std::span<char>(buf.data(), buf.size()), true);
    if (n == -EAGAIN) {
      b.arm(fd, false);
      if (!wait_for(b, fd, false)) break;
      continue;
    }
    if (n <= 0) break;
    got.append(buf.data(), static_cast<std::size_t>(n));
  }
  return got;
}

inline std::string pattern(std::size_t n, std::size_t from = 0) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((from + i) % 251);
  return s;
}

// A socketpair: `a` non-blocking for the backend, `b` the blocking peer.
struct Pair {
  int a = -1, b = -1;
  Pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0) {
      a = fds[0];
      b = fds[1];
      ::fcntl(a, F_SETFL, O_NONBLOCK);
      timeval tv{10, 0};  // a peer read that would hang fails the test instead
      ::setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
  }
  ~Pair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
  std::string peer_read(std::size_t n) const {
    std::string got(n, '\0');
    std::size_t have = 0;
    while (have < n) {
      const ssize_t r = ::read(b, got.data() + have, n - have);
      if (r <= 0) break;
      have += static_cast<std::size_t>(r);
    }
    got.resize(have);
    return got;
  }
};

// Closes old.a and gives its number to fresh.a, as the OS reuses numbers.
inline void reuse_number(Pair& old, Pair& fresh) {
  const int number = std::exchange(old.a, -1);
  ::close(number);
  if (fresh.a == number) return;
  ASSERT_EQ(::dup2(fresh.a, number), number);
  ::close(fresh.a);
  fresh.a = number;
}

inline int tcp_listener(SocketAddress* addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof in;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&in), len) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&in), &len) != 0) {
    ADD_FAILURE() << "listener: " << std::strerror(errno);
  }
  *addr = SocketAddress(reinterpret_cast<sockaddr*>(&in), len);
  return fd;
}

// A listener the backend accepts on, its waiter parked as the loop's would be.
inline int accepting_listener(IoBackend& b, SocketAddress* addr) {
  const int lfd = tcp_listener(addr);
  b.attach(lfd);
  SocketAddress peer;
  EXPECT_EQ(b.try_accept(lfd, &peer), -EAGAIN);
  b.arm(lfd, false);
  return lfd;
}

inline int tcp_client(const SocketAddress& to) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, to.data(), to.size()) != 0) ADD_FAILURE() << std::strerror(errno);
  return fd;
}

// The next connection a listener's multishot accept queued, waiting for it
// as the loop would: the fd, or -errno (-EMFILE: held, as accept4 would fail).
inline int accept_one(IoBackend& b, int lfd) {
  SocketAddress peer;
  long fd = b.try_accept(lfd, &peer);
  for (int i = 0; i < 10 && fd == -EAGAIN; ++i) {
    b.arm(lfd, false);
    (void)wait_for(b, lfd, false, 1);
    fd = b.try_accept(lfd, &peer);
  }
  return static_cast<int>(fd);
}

class UringFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const corio::detail::IoUringSupport s = corio::detail::probe_io_uring();
    try {
      backend_ = corio::detail::make_io_uring_backend(s);
    } catch (const std::system_error& e) {
      GTEST_SKIP() << "io_uring unusable here: " << e.what();
    }
  }
  IoBackend& b() { return *backend_; }
  std::unique_ptr<IoBackend> backend_;
};

}  // namespace uring_test
