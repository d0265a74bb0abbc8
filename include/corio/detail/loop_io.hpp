// detail::LoopIo: the loop's internal interface, for corio's own layers only
// (awaiters, transports, files, the runtime's watchers). EventLoop's public
// members are asyncio's loop API; this is what the layers above core use
// besides, reached as loop.io(), as libuv's uv__ functions sit beside its uv_
// ones. It is not part of the API: users never need it and it may change.
//
// The contract, in the order the layers meet it:
//   1. Timers. add_timer() puts an awaiter's embedded TimerNode in the heap
//      (its expire() runs on the loop when `when` has passed); remove_timer()
//      takes it out, and does nothing when it is not in.
//   2. Sockets. attach_fd() registers an fd with the backend once (Socket::
//      watch; `stream`: a SOCK_STREAM socket, so the backend need not ask);
//      detach_fd() forgets it and fails its parked waits with EBADF;
//      `closing`: the caller closes fd next, unless this returns true (the
//      backend took fd, to close it once the sends it owes are done).
//      try_recv_into() / try_send() make the syscall or its backend
//      equivalent now (try_sendv() sends pieces in order, gathered in one
//      sendmsg(2) where the backend can): nullopt / 0 mean "would block", then await
//      loop.wait_readable(sock) / wait_writable(sock) and try again.
//      lends_recv() says whether the backend lends its filled buffers on sock
//      (io_uring); then try_recv_lent() returns them in place, valid until
//      consume_lent() takes some, in the same step. unsent() is what the
//      backend accepted but has not sent yet; shutdown() sends it first.
//      peek_recv() says what a read of an fd would find and takes nothing,
//      asking the backend's buffers before the socket (an idle pooled
//      connection's check: what io_uring's receive took is no longer in
//      the socket): > 0 bytes, 0 EOF, -errno, -EAGAIN nothing.
//      try_read() / try_write() are try_recv_into() / try_send() for an fd
//      that is not a socket (a pipe, a terminal, a regular file as stdin):
//      read(2) and write(2), or the backend's equivalent. They do not attach
//      the fd; its first wait does (a regular file, which epoll refuses,
//      never waits).
//   3. Waits. park() puts an FdWaiter in its fd's slot (one reader, one
//      writer: a second is a RuntimeError), unpark() takes it out; the loop
//      fires it when the edge comes: an IoWait wakes its task, an IoWatch
//      calls its function (io_wait.hpp). interrupt_read() wakes a task's
//      read wait at once, as an edge would (a spurious wake: it tries again).
//      read_parked() says whether a read wait is parked on fd now.
//   4. Files. submit_file() hands a request to a completion backend (false:
//      the backend cannot, use the thread pool); its completion calls
//      file_op_done() once.
//   5. Other threads. post_threadsafe() queues a ready node from any thread,
//      without allocating; false (node untouched) once the loop is closed.
//   6. The runtime's own. core() is the ready queue and the task registry;
//      add/remove_internal_watcher() mark a watcher of the runtime's own (a
//      signalfd, an inspection socket), which the deadlock check does not
//      count as something that can wake a task.
//
// Everything but post_threadsafe() is loop-affine. Methods are out of line,
// as the private members they replace were: one call, no virtual dispatch.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace corio {
class EventLoop;
class Socket;
}  // namespace corio

namespace corio::detail {

struct FileOp;
class IoBackend;
class FdWaiter;
struct LoopCore;
struct LoopState;
struct ReadyNode;
struct TimerNode;

class LoopIo {
 public:
  // 1. Timers
  void add_timer(TimerNode* node, double when);
  void remove_timer(TimerNode* node) noexcept;

  // 2. Sockets
  void attach_fd(int fd, bool stream);
  bool detach_fd(int fd, bool closing = false) noexcept;
  std::optional<std::size_t> try_recv_into(Socket& sock, std::span<char> buf);
  bool lends_recv(Socket& sock);
  std::optional<std::string_view> try_recv_lent(Socket& sock);
  void consume_lent(Socket& sock, std::size_t n) noexcept;
  std::size_t try_send(Socket& sock, std::string_view data);
  std::size_t try_sendv(Socket& sock, std::span<const std::string_view> pieces);
  std::size_t unsent(const Socket& sock) const noexcept;
  void shutdown(Socket& sock, int how);
  long peek_recv(int fd) const noexcept;
  std::optional<std::size_t> try_read(int fd, std::span<char> buf);
  std::size_t try_write(int fd, std::string_view data);

  // 3. Waits
  void park(FdWaiter* w);
  void unpark(FdWaiter* w) noexcept;
  void interrupt_read(int fd) noexcept;
  bool read_parked(int fd) const noexcept;

  // 4. Files
  bool submit_file(FileOp& op);
  void file_op_done() noexcept;

  // 5. Other threads
  bool post_threadsafe(ReadyNode* node, bool release_hold = false);

  // 6. The runtime's own
  LoopCore& core() noexcept { return *core_; }
  void add_internal_watcher() noexcept;
  void remove_internal_watcher() noexcept;

 private:
  friend class corio::EventLoop;
  LoopIo() noexcept = default;
  LoopIo(EventLoop& loop, LoopCore& core, LoopState& state) noexcept;

  EventLoop* loop_ = nullptr;
  LoopCore* core_ = nullptr;
  LoopState* state_ = nullptr;
  IoBackend* backend_ = nullptr;  // state_'s, one load less on the socket path
};

}  // namespace corio::detail
