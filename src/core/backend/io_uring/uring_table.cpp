// The io_uring backend's table of fds (design: uring_backend.cpp): attach(),
// add_reader/add_writer's registrations, and what detach() does. Unlike the
// operations (uring_ops.cpp), detach() and a registration's removal enter
// the ring at once, so that the caller may close the fd.
#ifdef CORIO_HAVE_LIBURING

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "core/backend/io_uring/uring_impl.hpp"
#include "core/backend/syscalls.hpp"

namespace corio::detail::uring {

namespace {

Kind kind_of(int fd) {
  int type = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0) {
    return type == SOCK_STREAM ? Kind::stream : Kind::socket;
  }
  if (errno == ENOTSOCK) return Kind::socket;  // a pipe: readiness, as a datagram socket
  throw_err(errno, "socket operation");
}

}  // namespace

// A stream the caller vouches for (a Socket made as, or accepted from, a
// SOCK_STREAM one) is not asked its SO_TYPE: one syscall per connection.
void UringBackend::attach(int fd, bool stream) {
  if (fd < 0) throw_err(EBADF, "socket operation on a closed socket");
  const Kind kind = stream ? Kind::stream : kind_of(fd);
  Entry& e = table_.at(fd);
  if (e.conn != nullptr) release(e, Fd::closed);  // closed without detach(): a new fd
  e.conn = new Conn(fd, kind);
  e.conn->fix_wanted = kind == Kind::stream && static_cast<unsigned>(fd) < fixed_slots_;
}

// Queues the clearing of c's slot, for cancel_now()'s enter to carry (the
// update runs as it is submitted): the table's reference to the file is
// gone before the caller closes the fd. True if an SQE was queued. A stream
// detached before its first submit has nothing in its slot to clear.
bool UringBackend::unfix(Conn& c) noexcept {
  c.fix_wanted = false;
  if (!c.fixed) return false;
  c.fixed = false;
  --fixed_files_;
  static int none = -1;  // the kernel reads it during the submit
  io_uring_sqe* s = sqe_now();
  if (s == nullptr) {
    (void)io_uring_register_files_update(&ring_.r, static_cast<unsigned>(c.fd), &none, 1);
    return false;
  }
  io_uring_prep_files_update(s, &none, 1, c.fd);
  io_uring_sqe_set_data64(s, kIgnore);
  return true;
}

void UringBackend::drop_slots() noexcept {
  for (int fd = 0; Entry* e = table_.find(fd); ++fd) {
    if (e->conn != nullptr) release(*e, Fd::kept);
  }
  table_.clear();
}

void UringBackend::detach(int fd) noexcept { (void)let_go(fd, Fd::kept); }

bool UringBackend::detach_to_close(int fd) noexcept { return let_go(fd, Fd::closing); }

bool UringBackend::let_go(int fd, Fd fate) noexcept {
  Entry* e = table_.find(fd);
  return e != nullptr && e->conn != nullptr && e->conn->kind != Kind::watched && release(*e, fate);
}

void UringBackend::set_interest(int fd, bool read, bool write) {
  if (fd < 0) throw_err(EBADF, "add_reader/add_writer");
  Entry& e = table_.at(fd);
  Conn* c = e.conn;
  if (c != nullptr && c->kind != Kind::watched) throw_err(EBUSY, "fd is in use by socket operations");
  const unsigned mask = (read ? POLLIN : 0u) | (write ? POLLOUT : 0u);
  if (mask == 0) {
    if (c != nullptr) release(e, Fd::kept);
    return;
  }
  if (c == nullptr) {
    // A poll on a regular file completes at once, forever; epoll refuses such
    // fds, and asyncio's add_reader with it: refuse them here too, at once.
    struct stat st{};
    if (::fstat(fd, &st) < 0) throw_err(errno, "add_reader/add_writer");
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) throw_err(EPERM, "add_reader/add_writer");
    c = e.conn = new Conn(fd, Kind::watched);
  }
  c->interest = static_cast<std::uint16_t>(mask);
  mark_prep(*c);
}

// Lets go of e's Conn (lifetime rule 2 in uring_backend.cpp); Fd::closed:
// its fd was closed without detach(), and the number may be another file's
// now. True if the Conn took the fd, to close it itself (keep_sending).
bool UringBackend::release(Entry& e, Fd fate) noexcept {
  Conn* c = std::exchange(e.conn, nullptr);
  const bool unfixed = unfix(*c);  // first: keep_sending may give c a new fd
  c->detached = true;
  c->want_read = c->want_write = false;
  drop_received(*c);
  if (c->starved) {
    starved_.erase(std::find(starved_.begin(), starved_.end(), c));
    c->starved = false;
  }
  const bool taken = c->sends_owed() && keep_sending(*c, fate);
  cancel_now(*c, unfixed);
  try {
    detached_.push_back(c);
  } catch (...) {
    // No memory to track it: it leaks, which is safer than freeing it with
    // requests in the ring.
    return taken;
  }
  maybe_free(c);
  return taken;
}

namespace {

// SO_LINGER 0: close() is to drop what is unsent and reset the connection.
bool resets_on_close(int fd) noexcept {
  ::linger lg{};
  socklen_t len = sizeof lg;
  return ::getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len) == 0 && lg.l_onoff != 0 &&
         lg.l_linger == 0;
}

}  // namespace

// Sends owed at detach go on after it, as the kernel's own send buffer goes
// on after a close(): from the fd itself when its caller was about to close
// it (detach_to_close: the Conn closes it after the last send, not the
// caller), else from a dup of it (a Socket released, not closed). A socket
// set to reset on close (a server giving up on a slow reader) drops them
// instead, as the kernel drops its own, and so does one already closed or
// with no fd left to dup: the send in the ring is then cancelled
// (cancel_now), so that the close is the last reference. True if the Conn
// took the fd.
// Not one last send at detach (in its enter, or a send(2)) and the caller's
// close at once: the socket would end a loop iteration before it does
// here, and a peer whose bytes were still on their way (a TLS client of the
// same loop, its data queued) would get a FIN where epoll's close, and this
// later one, reset it (docs/backend-choice.md, "Short connections").
bool UringBackend::keep_sending(Conn& c, Fd fate) noexcept {
  if (fate != Fd::closed && !resets_on_close(c.fd)) {
    const int own = fate == Fd::closing ? c.fd : ::fcntl(c.fd, F_DUPFD_CLOEXEC, 0);
    if (own >= 0) {
      c.fd = own;
      c.owns_fd = true;
      return fate == Fd::closing;
    }
  }
  if (c.out) c.out->pending.clear();
  c.send_error = -ECONNRESET;  // what the cancelled send reports is dropped (on_send)
  return false;
}

// One enter submits the cancels and runs the completions they cause, so
// that the kernel's file references are gone before the caller's close():
// a cancelled multishot recv (or a send to a peer that does not read) would
// otherwise keep the socket open, and the peer without its FIN or reset.
// `any`: an SQE is queued already (unfix()).
void UringBackend::cancel_now(Conn& c, bool any) noexcept {
  if (c.send_inflight && !c.owns_fd) any |= prep_cancel(c, kSend);
  if (c.recv_armed) any |= prep_cancel(c, kRecv);
  if (c.own_armed) any |= prep_cancel(c, kOwnRecv);
  if (c.accept_armed) any |= prep_cancel(c, kAccept);
  if (c.poll_mask != 0) any |= prep_cancel(c, kPoll);
  if (any) (void)io_uring_submit_and_get_events(&ring_.r);
}

}  // namespace corio::detail::uring

#endif  // CORIO_HAVE_LIBURING
