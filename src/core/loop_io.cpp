// LoopIo (see loop_io.hpp): the loop's internal interface, on the state it
// shares with EventLoop (loop_state.hpp). Each operation is the backend's,
// plus the loop's bookkeeping: what is parked or in flight counts as
// something that can still wake a task (the deadlock check, the busy poll).
#include <cerrno>

#include "loop_state.hpp"
#include <corio/detail/file_op.hpp>
#include <corio/detail/loop_io.hpp>
#include <corio/detail/os_error.hpp>
#include <corio/event_loop.hpp>

namespace corio::detail {

LoopIo::LoopIo(EventLoop& loop, LoopCore& core, LoopState& state) noexcept
    : loop_(&loop), core_(&core), state_(&state), backend_(state.backend.get()) {}

// ---- 1. timers ----------------------------------------------------------------

void LoopIo::add_timer(TimerNode* node, double when) { state_->timers.push(node, when); }

void LoopIo::remove_timer(TimerNode* node) noexcept {
  if (node->in_heap()) state_->timers.remove(node);
}

// ---- 2. sockets ---------------------------------------------------------------

void LoopIo::attach_fd(int fd, bool stream) {
  if (core_->closed) throw RuntimeError("Event loop is closed");
  backend_->attach(fd, stream);
}

// The socket is closing: its waiters learn it (EBADF) instead of hanging.
bool LoopIo::detach_fd(int fd, bool closing) noexcept {
  FdSlot* w = core_->closed ? nullptr : backend_->find(fd);
  if (!w) return false;
  bool taken = false;
  if (closing) {
    taken = backend_->detach_to_close(fd);
  } else {
    backend_->detach(fd);
  }
  if (w->read_wait) state_->fire(w->read_wait, true);
  if (w->write_wait) state_->fire(w->write_wait, true);
  return taken;
}

// The backends return -errno; these raise it as std::system_error.
namespace {
int failed(long rc) { return static_cast<int>(-rc); }
}  // namespace

std::optional<std::size_t> LoopIo::try_recv_into(Socket& sock, std::span<char> buf) {
  sock.watch(*loop_);
  const long n = backend_->try_recv(sock.fd(), buf, sock.is_stream());
  if (n >= 0) return static_cast<std::size_t>(n);
  if (n != -EAGAIN) throw_errno(failed(n), "recv");
  return std::nullopt;
}

bool LoopIo::lends_recv(Socket& sock) {
  sock.watch(*loop_);
  return backend_->try_recv_lent(sock.fd(), nullptr) != -EOPNOTSUPP;
}

std::optional<std::string_view> LoopIo::try_recv_lent(Socket& sock) {
  const char* data = nullptr;
  const long n = backend_->try_recv_lent(sock.fd(), &data);
  if (n > 0) return std::string_view(data, static_cast<std::size_t>(n));
  if (n == 0) return std::string_view();
  if (n != -EAGAIN) throw_errno(failed(n), "recv");
  return std::nullopt;
}

void LoopIo::consume_lent(Socket& sock, std::size_t n) noexcept {
  backend_->consume_lent(sock.fd(), n);
}

std::size_t LoopIo::try_send(Socket& sock, std::string_view data) {
  sock.watch(*loop_);
  const long n = backend_->try_send(sock.fd(), data);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (n != -EAGAIN) throw_errno(failed(n), "send");
  return 0;
}

std::size_t LoopIo::try_sendv(Socket& sock, std::span<const std::string_view> pieces) {
  sock.watch(*loop_);
  const long n = backend_->try_sendv(sock.fd(), pieces);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (n != -EAGAIN) throw_errno(failed(n), "sendmsg");
  return 0;
}

long LoopIo::peek_recv(int fd) const noexcept { return backend_->peek(fd); }

std::optional<std::size_t> LoopIo::try_read(int fd, std::span<char> buf) {
  const long n = backend_->try_read(fd, buf);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (n != -EAGAIN) throw_errno(failed(n), "read");
  return std::nullopt;
}

std::size_t LoopIo::try_write(int fd, std::string_view data) {
  const long n = backend_->try_write(fd, data);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (n != -EAGAIN) throw_errno(failed(n), "write");
  return 0;
}

std::size_t LoopIo::unsent(const Socket& sock) const noexcept {
  return sock.fd() >= 0 && !core_->closed ? backend_->unsent(sock.fd()) : 0;
}

void LoopIo::shutdown(Socket& sock, int how) {
  if (const long rc = backend_->shutdown(sock.fd(), how); rc < 0)
    throw_errno(failed(rc), "shutdown");
}

// ---- 3. waits -----------------------------------------------------------------

void LoopIo::park(FdWaiter* w) {
  FdSlot& slot = backend_->slot(w->fd());
  FdWaiter*& parked = w->for_write() ? slot.write_wait : slot.read_wait;
  if (parked) {
    throw RuntimeError(w->for_write() ? "another task is already waiting to write this socket"
                                      : "another task is already waiting to read this socket");
  }
  backend_->arm(w->fd(), w->for_write());
  parked = w;
  ++state_->parked_io;
}

void LoopIo::unpark(FdWaiter* w) noexcept {
  FdSlot* slot = core_->closed ? nullptr : backend_->find(w->fd());
  if (!slot) return;
  FdWaiter*& parked = w->for_write() ? slot->write_wait : slot->read_wait;
  if (parked == w) {
    parked = nullptr;
    --state_->parked_io;
  }
}

void LoopIo::interrupt_read(int fd) noexcept {
  FdSlot* slot = core_->closed ? nullptr : backend_->find(fd);
  if (slot && slot->read_wait && !slot->read_wait->is_watch()) {
    static_cast<IoWait*>(slot->read_wait)->interrupt();
  }
}

bool LoopIo::read_parked(int fd) const noexcept {
  const FdSlot* slot = core_->closed ? nullptr : backend_->find(fd);
  return slot != nullptr && slot->read_wait != nullptr;
}

// ---- 4. files -----------------------------------------------------------------

// A closed loop takes no request: the caller's pool path then says it is closed.
bool LoopIo::submit_file(FileOp& op) {
  if (core_->closed || !backend_->submit_file(op)) return false;
  ++state_->file_ops;
  return true;
}

void LoopIo::file_op_done() noexcept { --state_->file_ops; }

// ---- 5. other threads ---------------------------------------------------------

// The wake-ups happen under the mutex: once a poster lets go of it, it never
// touches the loop again, so close() (which takes the mutex) cannot free the
// loop under a poster's feet. Only the first post of a batch wakes anyone;
// later ones find the loop already woken for the batch. A ThreadsafeHold
// ends under the same lock as its last post (the loop may be destroyed as
// soon as that post has run), or with no node, with a wake-up only.
bool LoopIo::post_threadsafe(ReadyNode* node, bool release_hold) {
  LoopState& st = *state_;
  std::lock_guard lock(st.ts_mutex);
  if (release_hold) core_->threadsafe_holds.fetch_sub(1, std::memory_order_release);
  if (st.ts_closed) return false;
  if (!node) {
    backend_->wakeup();
    return true;
  }
  const bool first = st.ts_queue.empty();
  st.ts_queue.push(node);
  if (first) {
    st.ts_pending.store(true, std::memory_order_release);
    st.ts_posted.notify_one();
    backend_->wakeup();
  }
  return true;
}

// ---- 6. the runtime's own -----------------------------------------------------

void LoopIo::add_internal_watcher() noexcept { ++core_->internal_watchers; }

void LoopIo::remove_internal_watcher() noexcept { --core_->internal_watchers; }

}  // namespace corio::detail
