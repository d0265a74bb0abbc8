// The io_uring backend's completions and reports: phases 3 and 4 of poll()
// (the design and the lifetime rules are at the top of uring_backend.cpp).
#ifdef CORIO_HAVE_LIBURING

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/backend/io_uring/uring_impl.hpp"

namespace corio::detail::uring {

// ---- 3. reap -----------------------------------------------------------------------

void UringBackend::reap() {
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_.r, head, cqe) {
    complete(*cqe);
    ++seen;
  }
  io_uring_cq_advance(&ring_.r, seen);
}

void UringBackend::complete(const io_uring_cqe& cqe) {
  const auto op = static_cast<Op>(cqe.user_data & kOpMask);
  Conn* c = reinterpret_cast<Conn*>(static_cast<std::uintptr_t>(cqe.user_data) & ~kOpMask);
  switch (op) {
    case kIgnore: return;  // cancels and poll removals
    case kWake: wake_armed_ = false; return;
    case kFile: on_file(cqe); return;  // c is a FileOp, not a Conn
    case kRecv: on_recv(*c, cqe.res, cqe.flags); break;
    case kOwnRecv: on_own_recv(*c, cqe.res); break;
    case kAccept: on_accept(*c, cqe.res, cqe.flags); break;
    case kSend: on_send(*c, cqe.res); break;
    case kPoll: on_poll(*c, cqe.res); break;
  }
  if (c->detached) {
    maybe_free(c);
  } else {
    notify(*c);
  }
}

void UringBackend::on_recv(Conn& c, int res, unsigned flags) {
  if ((flags & IORING_CQE_F_MORE) == 0) c.recv_armed = false;
  if ((flags & IORING_CQE_F_BUFFER) != 0) {
    bufs_.taken();
    const auto bid = static_cast<std::uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    if (res > 0 && !c.detached) {
      c.chunks.push_back(Chunk(bid, static_cast<std::uint32_t>(res)));
    } else {
      bufs_.give_back(bid);
    }
  }
  received(c, res);
  if (!c.detached && c.recv_armed && c.chunks.size() >= kRecvCap) {
    c.recv_cancel = true;
    mark_prep(c);
  }
}

void UringBackend::on_own_recv(Conn& c, int res) {
  c.own_armed = false;
  if (res > 0 && !c.detached) {
    c.chunks.push_back(Chunk(kOwnBuffer, static_cast<std::uint32_t>(res)));
    c.own_queued = true;
  } else {
    give_back_own_buffer(c);  // nothing in it to read
  }
  received(c, res);
}

// What a receive's result means for the stream, bytes aside.
void UringBackend::received(Conn& c, int res) {
  if (res == 0) {
    c.eof = true;
  } else if (res == -ENOBUFS) {
    // The ring ran dry; prepare() re-arms once a buffer is back.
  } else if (res < 0 && res != -ECANCELED) {
    c.recv_error = res;
  }
  if (!c.detached && !c.recv_armed) mark_prep(c);
}

void UringBackend::on_accept(Conn& c, int res, unsigned flags) {
  if ((flags & IORING_CQE_F_MORE) == 0) c.accept_armed = false;
  if (res >= 0) {
    if (c.detached) {
      ::close(res);
      return;
    }
    c.rare->accepts.accepted.push_back(res);
    if (c.accept_armed && c.rare->accepts.accepted.size() >= kAcceptCap) c.accept_cancel = true;
  } else if (res != -ECANCELED && !c.detached) {
    c.rare->accepts.error = res;  // EMFILE and the like, for the next try_accept
    c.accept_on = false;   // until a waiter arms again
  }
  if (!c.detached && (c.accept_cancel || !c.accept_armed)) mark_prep(c);
}

void UringBackend::on_send(Conn& c, int res) {
  c.send_inflight = false;
  if (res < 0 && c.send_error == 0) c.send_error = res;  // sticky
  if (res > 0) c.out->off += static_cast<std::size_t>(res);  // short: the rest goes next
  // After an error what was still owed is lost with the connection.
  if (c.send_error == 0 && c.queued_out() > 0) {
    mark_prep(c);
  } else {
    give_back_queue(c);
    c.drained = true;
    flushed(c);
  }
}

void UringBackend::on_poll(Conn& c, int res) {
  c.poll_mask = 0;
  c.poll_removing = false;
  if (res >= 0) {
    c.revents = static_cast<std::uint16_t>(c.revents | res);
  } else if (res == -EBADF) {
    c.poll_dead = true;  // closed behind our back: nothing to wait for
  } else if (res != -ECANCELED) {
    c.revents = static_cast<std::uint16_t>(c.revents | POLLERR);  // the waiter's syscall says what it is
  }
  if (!c.detached) mark_prep(c);
}

// ---- 4. report ---------------------------------------------------------------------

bool UringBackend::readable(const Conn& c) const noexcept {
  switch (c.kind) {
    case Kind::stream:
      if (!c.recv_used) break;
      return !c.chunks.empty() || c.eof || c.recv_error != 0 || c.send_error != 0;
    case Kind::listener:
      return c.rare && (!c.rare->accepts.accepted.empty() || c.rare->accepts.error != 0);
    default:
      break;
  }
  return (c.revents & (POLLIN | POLLERR | POLLHUP)) != 0;
}

// A stream writing through try_send() is writable once its queue is empty:
// all it took is in the kernel's hands, so bytes a caller then sends on the
// fd itself (sendfile, say) come after them, as on epoll. With the queue
// empty already, the socket's own readiness says (a poll), or a caller that
// got EAGAIN from its own send() would spin.
bool UringBackend::writable(const Conn& c) const noexcept {
  const bool ready = (c.revents & (POLLOUT | POLLERR | POLLHUP)) != 0;
  if (c.kind == Kind::stream && c.send_used && !c.connecting) {
    return c.send_error != 0 || (!c.sends_owed() && (c.drained || ready));
  }
  return ready;
}

// Queues c for the next report if its waiter can make progress.
void UringBackend::notify(Conn& c) {
  if (c.in_ready || c.detached) return;
  const bool r = (c.want_read || (c.interest & POLLIN)) && readable(c);
  const bool w = (c.want_write || (c.interest & POLLOUT)) && writable(c);
  if (!r && !w) return;
  c.in_ready = true;
  ready_.push_back(&c);
}

int UringBackend::report(IoEvent* out, int capacity) {
  int n = 0;
  std::size_t kept = 0;
  for (Conn* c : ready_) {
    if (n == capacity) {  // the rest waits for the next poll, which will not block
      ready_[kept++] = c;
      continue;
    }
    c->in_ready = false;
    if (!c->detached) {
      IoEvent ev{c->fd, (c->want_read || (c->interest & POLLIN)) && readable(*c),
                 (c->want_write || (c->interest & POLLOUT)) && writable(*c)};
      if (ev.readable) c->want_read = false;
      if (ev.writable) c->want_write = c->drained = false;
      if (c->revents != 0) {  // a poll's news is told once; prepare() polls again
        c->revents = 0;
        mark_prep(*c);
      }
      if (ev.readable || ev.writable) out[n++] = ev;
    }
    maybe_free(c);
  }
  ready_.resize(kept);
  return n;
}

// ---- freeing -----------------------------------------------------------------------

void UringBackend::maybe_free(Conn* c) noexcept {
  if (!c->detached || c->in_ring() || c->sends_owed() || c->in_prep || c->in_ready || c->starved) {
    return;
  }
  if (c->owns_fd) ::close(c->fd);
  give_back_own_buffer(*c);
  detached_.erase(std::find(detached_.begin(), detached_.end(), c));
  delete c;
}

}  // namespace corio::detail::uring

#endif  // CORIO_HAVE_LIBURING
