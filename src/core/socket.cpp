// Socket, SocketAddress and the loop's sock_* operations (see socket.hpp).
//
// Every operation has the same shape: try it through the backend; on
// EAGAIN wait until the backend reports the socket and try again. What a try
// costs (a syscall on epoll, a copy out of a completion backend's buffers)
// is the backend's business (backend/backend.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <corio/c_string.hpp>
#include <corio/detail/os_error.hpp>
#include <corio/detail/socket_system.hpp>
#include <corio/event_loop.hpp>

#include "backend/backend.hpp"
#include "backend/syscalls.hpp"
#include "loop_state.hpp"

namespace corio {

using detail::throw_errno;

// ---- SocketAddress -------------------------------------------------------------

SocketAddress::SocketAddress(const sockaddr* addr, socklen_t len) {
  if (len > capacity()) throw ValueError("socket address too long");
  std::memcpy(&storage_, addr, len);
  len_ = len;
}

SocketAddress SocketAddress::ip(std::string_view numeric_host, std::uint16_t port) {
  check_c_string(numeric_host, "a numeric IP address");  // inet_pton would stop at it
  SocketAddress a;
  const std::string host(numeric_host);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage_);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage_);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.len_ = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.len_ = sizeof(sockaddr_in6);
  } else {
    throw ValueError("not a numeric IP address: '" + host + "'");
  }
  return a;
}

SocketAddress SocketAddress::unix_path(std::string_view path) {
  SocketAddress a;
  auto* un = reinterpret_cast<sockaddr_un*>(&a.storage_);
  if (path.empty() || path.size() >= sizeof(un->sun_path)) {
    throw ValueError("Unix socket path empty or longer than " +
                     std::to_string(sizeof(un->sun_path) - 1) + " bytes");
  }
  // The kernel ends a path name at its first NUL; only an abstract name
  // (one starting with NUL, Linux's) is taken by its length.
  if (path.front() != '\0') check_c_string(path, "a Unix socket path");
  un->sun_family = AF_UNIX;
  std::memcpy(un->sun_path, path.data(), path.size());
  a.len_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return a;
}

std::string SocketAddress::host() const {
  char buf[INET6_ADDRSTRLEN] = {};
  switch (family()) {
    case AF_INET:
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf,
                sizeof buf);
      return buf;
    case AF_INET6:
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf,
                sizeof buf);
      return buf;
    case AF_UNIX: {
      const auto* un = reinterpret_cast<const sockaddr_un*>(&storage_);
      const std::size_t max = len_ > offsetof(sockaddr_un, sun_path)
                                  ? len_ - offsetof(sockaddr_un, sun_path)
                                  : 0;
      return std::string(un->sun_path, strnlen(un->sun_path, max));
    }
    default:
      return {};
  }
}

std::uint16_t SocketAddress::port() const noexcept {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

std::string SocketAddress::to_string() const {
  if (family() == AF_INET) return host() + ":" + std::to_string(port());
  if (family() == AF_INET6) return "[" + host() + "]:" + std::to_string(port());
  return host();
}

// ---- Socket ----------------------------------------------------------------------

namespace {

// The loop a socket is attached to, when it can be told of a close or a
// shutdown now: the one running on this thread, or the one that last ran
// here and is stopped, not closed (a socket closed between two runs must
// still detach, or the backend's requests keep the file open). A loop that
// is gone, or not this thread's, is never dereferenced.
EventLoop* reachable(EventLoop* watched) noexcept {
  if (watched == nullptr) return nullptr;
  if (watched == detail::tls_running_loop) return watched;
  const std::shared_ptr<detail::StoppedLoop> stopped = detail::tls_stopped_loop.lock();
  return stopped && stopped->loop == watched ? watched : nullptr;
}

}  // namespace

Socket Socket::create(int family, int type, int protocol) {
  const int fd = detail::socket_system().open(family, type, protocol);
  if (fd < 0) throw_errno(-fd, "socket");
  Socket s(fd);
  s.stream_ = type == SOCK_STREAM;
  return s;
}

Socket::Socket(Socket&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      watched_by_(std::exchange(o.watched_by_, nullptr)),
      stream_(o.stream_) {}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
    watched_by_ = std::exchange(o.watched_by_, nullptr);
    stream_ = o.stream_;
  }
  return *this;
}

// The backend may take the fd to close itself, after the sends it owes
// (io_uring's queue, which would otherwise go on from a dup of it).
void Socket::close() noexcept {
  if (fd_ < 0) return;
  EventLoop* loop = reachable(std::exchange(watched_by_, nullptr));
  const int fd = std::exchange(fd_, -1);
  if (loop == nullptr || !loop->io().detach_fd(fd, true)) (void)detail::socket_system().close(fd);
}

int Socket::release() noexcept {
  if (EventLoop* loop = reachable(watched_by_)) loop->io().detach_fd(fd_);
  watched_by_ = nullptr;
  return std::exchange(fd_, -1);
}

void Socket::watch(EventLoop& loop) {
  if (fd_ < 0) throw_errno(EBADF, "socket operation on a closed socket");
  if (watched_by_ == &loop) return;
  loop.io().attach_fd(fd_, stream_);
  watched_by_ = &loop;
}

void Socket::bind(const SocketAddress& addr) {
  if (const int rc = detail::socket_system().bind(fd_, addr); rc < 0) throw_errno(-rc, "bind");
}

void Socket::listen(int backlog) {
  if (const int rc = detail::socket_system().listen(fd_, backlog); rc < 0) throw_errno(-rc, "listen");
}

void Socket::set_option(int level, int name, int value) {
  const int rc = detail::socket_system().set_option(fd_, level, name, &value, sizeof value);
  if (rc < 0) throw_errno(-rc, "setsockopt");
}

void Socket::shutdown(int how) {
  // Through the loop, which sends what it took first, when it can be told.
  if (EventLoop* loop = reachable(watched_by_)) {
    loop->io().shutdown(*this, how);
  } else if (const long rc = detail::sys::shutdown(fd_, how); rc < 0) {
    throw_errno(static_cast<int>(-rc), "shutdown");
  }
}

SocketAddress Socket::local_address() const {
  SocketAddress a;
  if (const int rc = detail::socket_system().address(fd_, false, &a); rc < 0) throw_errno(-rc, "getsockname");
  return a;
}

SocketAddress Socket::peer_address() const {
  SocketAddress a;
  if (const int rc = detail::socket_system().address(fd_, true, &a); rc < 0) throw_errno(-rc, "getpeername");
  return a;
}

// ---- IoWait ------------------------------------------------------------------------

namespace detail {

const AwaitPoint::Ops IoWait::kOps{&IoWait::on_cancel, "socket", &IoWait::describe};
const AwaitPoint::Ops IoWait::kSlotOps{&IoWait::on_cancel, "stream", &IoWait::describe};

void IoWait::describe(const AwaitPoint* p, AwaitInfo& info) noexcept {
  auto* self = static_cast<const IoWait*>(p);
  info.fd = self->fd_;
  info.write = self->write_;
  if (self->fd_ < 0) info.object = self->at_.slot;
}

IoWait::~IoWait() {
  if (parked_) unpark();
}

void IoWait::unpark() noexcept {
  if (fd_ >= 0) {
    at_.loop->io().unpark(this);
  } else {
    at_.slot->unpark(this);
  }
}

void IoWait::await_suspend(std::coroutine_handle<> h) {
  task_ = &current_task_for("a socket operation");
  if (fd_ >= 0) {
    at_.loop->io().park(this);
  } else {
    at_.slot->park(this);
  }
  parked_ = true;
  task_->suspend_at(h, this);
}

void WaitSlot::park(FdWaiter* w) {
  if (waiter_ != nullptr) throw RuntimeError("another task is already waiting on this stream");
  waiter_ = w;
}

void IoWait::wake(bool closed) noexcept {
  parked_ = false;
  woke_ = closed ? Woke::closed : Woke::edge;
  task_->wake();
}

void IoWait::interrupt() noexcept {
  if (!parked_) return;
  unpark();
  wake(false);
}

bool IoWait::on_cancel(AwaitPoint* p, const std::string&) noexcept {
  auto* self = static_cast<IoWait*>(p);
  if (!self->parked_) return false;  // the edge came first: the step interrupts
  self->unpark();
  self->parked_ = false;
  self->woke_ = Woke::cancelled;
  self->task_->wake();
  return true;
}

void IoWait::await_resume() {
  task_->check_interrupt();
  if (woke_ == Woke::cancelled) task_->throw_cancelled();
  if (woke_ == Woke::closed) throw_errno(EBADF, "socket closed while a task was waiting on it");
}

}  // namespace detail

// ---- the operations ------------------------------------------------------------------

detail::IoWait EventLoop::wait_readable(Socket& sock) {
  sock.watch(*this);
  return detail::IoWait(*this, sock.fd(), false);
}

detail::IoWait EventLoop::wait_writable(Socket& sock) {
  sock.watch(*this);
  return detail::IoWait(*this, sock.fd(), true);
}

// Each operation: the backend's try, and on EAGAIN a wait for the socket.
// Errors are std::system_error with the syscall's name.
namespace {
int failed(long rc) { return static_cast<int>(-rc); }
}  // namespace

Coro<std::size_t> EventLoop::sock_recv_into(Socket& sock, std::span<char> buf) {
  for (;;) {
    if (const std::optional<std::size_t> n = io_.try_recv_into(sock, buf)) co_return *n;
    co_await wait_readable(sock);
  }
}

Coro<std::string> EventLoop::sock_recv(Socket& sock, std::size_t max_bytes) {
  std::string data(max_bytes, '\0');
  const std::size_t n = co_await sock_recv_into(sock, std::span<char>(data));
  data.resize(n);
  co_return data;
}

Coro<void> EventLoop::sock_sendall(Socket& sock, std::string_view data) {
  while (!data.empty()) {
    const std::size_t n = io_.try_send(sock, data);
    data.remove_prefix(n);
    if (n == 0) co_await wait_writable(sock);
  }
}

Coro<int> EventLoop::sock_accept_or_errno(Socket& sock, std::pair<Socket, SocketAddress>* out) {
  sock.watch(*this);
  for (;;) {
    SocketAddress peer;
    const long fd = backend_->try_accept(sock.fd(), &peer);
    if (fd >= 0) {
      Socket conn(static_cast<int>(fd));
      conn.stream_ = sock.stream_;  // accept() only exists for connection-oriented sockets
      *out = std::pair<Socket, SocketAddress>(std::move(conn), peer);
      co_return 0;
    }
    if (fd != -EAGAIN) co_return failed(fd);
    co_await wait_readable(sock);
  }
}

Coro<std::pair<Socket, SocketAddress>> EventLoop::sock_accept(Socket& sock) {
  std::pair<Socket, SocketAddress> accepted;
  if (const int err = co_await sock_accept_or_errno(sock, &accepted)) throw_errno(err, "accept");
  co_return accepted;
}

Coro<void> EventLoop::sock_connect(Socket& sock, SocketAddress addr) {
  sock.watch(*this);
  long rc = backend_->start_connect(sock.fd(), addr);
  if (rc == -EINPROGRESS) {
    co_await wait_writable(sock);
    rc = backend_->finish_connect(sock.fd());
  }
  if (rc < 0) throw_errno(failed(rc), "connect");
}

Coro<std::pair<std::string, SocketAddress>> EventLoop::sock_recvfrom(Socket& sock,
                                                                     std::size_t max_bytes) {
  sock.watch(*this);
  std::string data(max_bytes, '\0');
  for (;;) {
    SocketAddress from;
    const long n = backend_->try_recvfrom(sock.fd(), std::span<char>(data), &from);
    if (n >= 0) {
      data.resize(static_cast<std::size_t>(n));
      co_return std::pair<std::string, SocketAddress>(std::move(data), from);
    }
    if (n != -EAGAIN) throw_errno(failed(n), "recvfrom");
    co_await wait_readable(sock);
  }
}

Coro<std::size_t> EventLoop::sock_sendto(Socket& sock, std::string_view data, SocketAddress addr) {
  sock.watch(*this);
  for (;;) {
    const long n = backend_->try_sendto(sock.fd(), data, addr);
    if (n >= 0) co_return static_cast<std::size_t>(n);
    if (n != -EAGAIN) throw_errno(failed(n), "sendto");
    co_await wait_writable(sock);
  }
}

}  // namespace corio
