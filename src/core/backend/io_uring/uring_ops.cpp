// The io_uring backend's operations (design: uring_backend.cpp). They run in
// a task's step, between two poll()s, and never enter the ring: they take
// from the queues the completions filled, queue sends, and mark what the next
// poll() must submit. The table's operations, detach() among them, are in
// uring_table.cpp.
#ifdef CORIO_HAVE_LIBURING

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

#include "core/backend/io_uring/uring_impl.hpp"
#include "core/backend/syscalls.hpp"

namespace corio::detail::uring {

Conn* UringBackend::conn(int fd) noexcept {
  Entry* e = table_.find(fd);
  return e != nullptr ? e->conn : nullptr;
}

const char* UringBackend::chunk_data(const Conn& c, const Chunk& k) noexcept {
  return k.bid == kOwnBuffer ? c.rare->own.get() : bufs_.data(k.bid);
}

void UringBackend::consumed(Conn& c, const Chunk& k) noexcept {
  if (k.bid == kOwnBuffer) {
    c.own_queued = false;
    give_back_own_buffer(c);
  } else {
    bufs_.give_back(k.bid);
  }
}

void UringBackend::drop_received(Conn& c) noexcept {
  for (; !c.chunks.empty(); c.chunks.pop_front()) consumed(c, c.chunks.front());
  if (!c.rare) return;
  Fifo<int>& fds = c.rare->accepts.accepted;
  for (; !fds.empty(); fds.pop_front()) ::close(fds.front());
}

// ---- waiting ------------------------------------------------------------------------

void UringBackend::arm(int fd, bool write) {
  Conn* c = conn(fd);
  if (c == nullptr) return;
  if (write) {
    c->want_write = true;
  } else {
    c->want_read = true;
    c->recv_on = c->kind == Kind::stream && c->recv_used;
    c->accept_on = c->kind == Kind::listener;
  }
  mark_prep(*c);
  notify(*c);  // what is already queued is reported by the next poll()
}

// ---- receiving ----------------------------------------------------------------------

long UringBackend::try_recv(int fd, std::span<char> buf, bool) noexcept {
  Conn* c = conn(fd);
  if (c == nullptr || c->kind != Kind::stream) return sys::recv(fd, buf);
  if (const long n = try_recv_lent(fd, nullptr); n <= 0) return n;
  return copy_out(*c, buf);
}

// What a read finds in c's queue: the front buffer's bytes, 0 at EOF, the
// sticky error, or -EAGAIN.
long UringBackend::queued(const Conn& c) noexcept {
  if (!c.chunks.empty()) {
    const Chunk& k = c.chunks.front();
    return static_cast<long>(k.len - k.off);
  }
  if (c.eof) return 0;
  if (c.recv_error != 0) return c.recv_error;
  if (c.send_error != 0) return c.send_error;
  return -EAGAIN;
}

// With data null: only what try_recv would find.
long UringBackend::try_recv_lent(int fd, const char** data) noexcept {
  Conn* c = conn(fd);
  if (c == nullptr || c->kind != Kind::stream) return -EOPNOTSUPP;
  c->recv_used = true;
  const long n = queued(*c);
  if (n > 0 && data != nullptr) {
    const Chunk& k = c->chunks.front();
    *data = chunk_data(*c, k) + k.off;
  }
  return n;
}

// Not a read: the stream's receive is left as it was (recv_used unset).
long UringBackend::peek(int fd) noexcept {
  const Conn* c = conn(fd);
  const long n = c != nullptr && c->kind == Kind::stream ? queued(*c) : -EAGAIN;
  return n != -EAGAIN ? n : sys::peek(fd);
}

void UringBackend::consume_lent(int fd, std::size_t n) noexcept {
  Conn* c = conn(fd);
  if (c == nullptr || c->chunks.empty()) return;
  advance(*c, n);
  caught_up(*c);
}

long UringBackend::copy_out(Conn& c, std::span<char> buf) noexcept {
  std::size_t n = 0;
  while (n < buf.size() && !c.chunks.empty()) {
    const Chunk& k = c.chunks.front();
    const std::size_t take = std::min<std::size_t>(buf.size() - n, k.len - k.off);
    std::memcpy(buf.data() + n, chunk_data(c, k) + k.off, take);
    n += take;
    advance(c, take);
  }
  caught_up(c);
  return static_cast<long>(n);
}

// Takes n bytes (at most what is left) of the front chunk.
void UringBackend::advance(Conn& c, std::size_t n) noexcept {
  Chunk& k = c.chunks.front();
  k.off += static_cast<std::uint32_t>(std::min<std::size_t>(n, k.len - k.off));
  if (k.off == k.len) {
    consumed(c, k);
    c.chunks.pop_front();
  }
}

// A reader took bytes: below half the cap, the receive goes on.
void UringBackend::caught_up(Conn& c) noexcept {
  if (c.chunks.size() <= kRecvCap / 2) {
    c.recv_cancel = false;  // the reader caught up before the cancel went out
    if (!c.recv_armed) mark_prep(c);
  }
}

// A multishot accept reads RLIMIT_NOFILE once, when it is armed; accept4
// reads it per call. So that a lowered limit still means EMFILE (which a
// server pauses on, and a test of that relies on), an fd past the current
// limit moves under it, or stays queued with -EMFILE until one is free.
// The limit is read by the first accept after each poll() and for an fd
// at or past it (raised since?), not per accept (a prlimit64 per
// connection): a limit lowered during a step holds from the next pass on.
int UringBackend::within_fd_limit(int& fd) noexcept {
  if (fd_limit_stale_ || static_cast<rlim_t>(fd) >= fd_limit_) {
    rlimit lim{};
    fd_limit_ = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : RLIM_INFINITY;
    fd_limit_stale_ = false;
  }
  if (static_cast<rlim_t>(fd) < fd_limit_) return fd;
  const int low = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // the lowest free number, within the limit
  if (low < 0) return -errno;
  ::close(fd);
  return fd = low;
}

long UringBackend::try_accept(int fd, SocketAddress* peer) noexcept {
  Conn* c = conn(fd);
  if (c != nullptr && c->kind == Kind::stream) {
    c->rare.reset(new (std::nothrow) Rare);
    if (!c->rare) return -ENOMEM;
    c->kind = Kind::listener;
  }
  if (c == nullptr || c->kind != Kind::listener) return sys::accept(fd, peer);
  Fifo<int>& fds = c->rare->accepts.accepted;
  if (fds.empty()) {
    if (c->rare->accepts.error == 0) return -EAGAIN;
    return std::exchange(c->rare->accepts.error, 0);  // told once, as accept4 would
  }
  const int nfd = within_fd_limit(fds.front());
  if (nfd < 0) return nfd;  // the connection stays queued, as in the backlog
  fds.pop_front();
  // Multishot accept gives no address; a peer gone since leaves it empty.
  socklen_t len = SocketAddress::capacity();
  peer->resize(::getpeername(nfd, peer->data(), &len) == 0 ? len : 0);
  if (!c->accept_armed && fds.size() <= kAcceptCap / 2) mark_prep(*c);
  return nfd;
}

long UringBackend::try_recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept {
  return sys::recvfrom(fd, buf, from);
}

// ---- sending ------------------------------------------------------------------------

long UringBackend::try_send(int fd, std::string_view data) noexcept {
  Conn* c = conn(fd);
  if (c == nullptr || c->kind != Kind::stream) return sys::send(fd, data);
  c->send_used = true;
  if (c->send_error != 0) return c->send_error;
  if (c->shutdown_how == SHUT_WR || c->shutdown_how == SHUT_RDWR) return -EPIPE;
  std::size_t sent = 0;
  if (!c->sends_owed() && data.size() >= kDirectSend) {
    // Nothing queued and much to send: straight into the socket, which
    // copies it anyway, rather than into our queue first. Smaller sends
    // are queued, idle socket or not, so that the next poll()'s one enter
    // carries every fd's. A caller that writes on the fd itself (sendfile
    // after a response head) waits for unsent() first (see writable()).
    const long n = sys::send(fd, data);
    if (n < 0 && n != -EAGAIN) return c->send_error = static_cast<int>(n);
    sent = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (sent == data.size()) return static_cast<long>(sent);
    data.remove_prefix(sent);
  }
  return enqueue(*c, data, sent);
}

// What a send did not put in the socket (`sent` bytes went already) joins
// the queue, up to kSendCap.
long UringBackend::enqueue(Conn& c, std::string_view data, std::size_t sent) noexcept {
  const std::size_t queued = c.queued_out();
  if (queued >= kSendCap) return sent > 0 ? static_cast<long>(sent) : data.empty() ? 0 : -EAGAIN;
  const std::size_t take = std::min(kSendCap - queued, data.size());
  try {
    send_queue(c).pending.append(data.data(), take);
    c.drained = false;
    mark_prep(c);
  } catch (const std::bad_alloc&) {
    if (!c.sends_owed()) give_back_queue(c);  // an idle Conn holds no queue
    return sent > 0 ? static_cast<long>(sent) : -ENOMEM;
  }
  return static_cast<long>(sent + take);
}

// try_send's rule for a gathered send: nothing queued and much to send goes
// straight into the socket, in one sendmsg(2); what the socket does not
// take, and any other gathered send, is queued piece by piece.
long UringBackend::try_sendv(int fd, std::span<const std::string_view> pieces) noexcept {
  Conn* c = conn(fd);
  std::size_t total = 0;
  for (const std::string_view piece : pieces) total += piece.size();
  if (c == nullptr || c->kind != Kind::stream || c->sends_owed() || total < kDirectSend ||
      c->send_error != 0 || c->shutdown_how == SHUT_WR || c->shutdown_how == SHUT_RDWR) {
    return IoBackend::try_sendv(fd, pieces);
  }
  c->send_used = true;
  const long n = sys::sendv(fd, pieces);
  if (n < 0 && n != -EAGAIN) return c->send_error = static_cast<int>(n);
  std::size_t sent = n > 0 ? static_cast<std::size_t>(n) : 0;
  const std::size_t direct = sent;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (sent >= pieces[i].size()) {
      sent -= pieces[i].size();
      continue;
    }
    // The socket is full: the rest is queued, not offered to it again.
    const std::string_view rest = pieces[i].substr(sent);
    const long queued = enqueue(*c, rest, 0);
    if (queued < 0) return direct > 0 ? static_cast<long>(direct) : queued;
    if (static_cast<std::size_t>(queued) < rest.size()) return static_cast<long>(direct) + queued;
    const long more = IoBackend::try_sendv(fd, pieces.subspan(i + 1));
    return static_cast<long>(direct + rest.size()) + std::max(more, 0L);
  }
  return static_cast<long>(direct);
}

long UringBackend::try_sendto(int fd, std::string_view data, const SocketAddress& to) noexcept {
  return sys::sendto(fd, data, to);
}

long UringBackend::shutdown(int fd, int how) noexcept {
  Conn* c = conn(fd);
  if (c != nullptr && c->kind == Kind::stream && how != SHUT_RD && c->sends_owed()) {
    c->shutdown_how = how;  // flushed() does it after the last send
    return 0;
  }
  return sys::shutdown(fd, how);
}

std::size_t UringBackend::unsent(int fd) noexcept {
  const Conn* c = conn(fd);
  return c != nullptr && c->kind == Kind::stream ? c->queued_out() : 0;
}

// A queue for a Conn that owes nothing yet: a spare (warm buffers), or a new one.
SendQueue& UringBackend::new_send_queue(Conn& c) {
  if (send_spares_.empty()) {
    c.out = std::make_unique<SendQueue>();
  } else {
    c.out = std::move(send_spares_.back());
    send_spares_.pop_back();
  }
  return *c.out;
}

// A starved stream's buffer for its next one-shot receive: a spare, or a new one.
char* UringBackend::take_own_buffer(Conn& c) {
  if (!c.rare) c.rare = std::make_unique<Rare>();
  if (!c.rare->own) {
    if (own_spares_.empty()) {
      c.rare->own = std::make_unique<char[]>(kOwnBufferSize);
    } else {
      c.rare->own = std::move(own_spares_.back());
      own_spares_.pop_back();
    }
    ++own_buffers_;
  }
  return c.rare->own.get();
}

// The own buffer's bytes were read (or none came): it goes to the spares,
// and the stream's Rare goes, so that the Conn is back to its idle size.
// Only once no receive into it is in the ring.
void UringBackend::give_back_own_buffer(Conn& c) noexcept {
  if (!c.rare || !c.rare->own || c.own_armed || c.own_queued) return;
  --own_buffers_;
  if (own_spares_.size() < kOwnSpares) {
    try {
      own_spares_.push_back(std::move(c.rare->own));
    } catch (const std::bad_alloc&) {
      // No room to keep it: it is freed below.
    }
  }
  c.rare.reset();  // only streams have own buffers, and a stream's Rare holds nothing else
}

// Drained (or failed): the queue goes to the spares with its buffers, unless
// the spares are full or a buffer grew past kKeepSendBuffer.
void UringBackend::give_back_queue(Conn& c) noexcept {
  std::unique_ptr<SendQueue> q = std::move(c.out);
  if (!q || send_spares_.size() >= kSendSpares || q->inflight.capacity() > kKeepSendBuffer ||
      q->pending.capacity() > kKeepSendBuffer) {
    return;
  }
  q->inflight.clear();
  q->pending.clear();
  q->off = 0;
  send_spares_.push_back(std::move(q));  // reserved: no allocation
}

// The last owed send completed (or failed): a shutdown that waited goes now.
void UringBackend::flushed(Conn& c) noexcept {
  if (c.shutdown_how < 0) return;
  if (!c.detached || c.owns_fd) (void)::shutdown(c.fd, c.shutdown_how);
  c.shutdown_how = -1;
}

// ---- fds that are not sockets ---------------------------------------------------------

// The syscall, and readiness (POLL_ADD: a pipe's Conn is Kind::socket) when
// it would block: what the pipe transport did on its own before it came
// through the backend, so a pipe costs what it did. A completion read
// (IORING_OP_READ) would need a buffer of the backend's per pipe for the
// bytes to wait in until the task's step takes them (the seam's rule), for
// pipes that carry little. A socket handed to a pipe transport gets
// readiness too: the syscalls leave recv_used and send_used unset.
long UringBackend::try_read(int fd, std::span<char> buf) noexcept { return sys::read(fd, buf); }

long UringBackend::try_write(int fd, std::string_view data) noexcept {
  return sys::write(fd, data);
}

// ---- connecting ---------------------------------------------------------------------

long UringBackend::start_connect(int fd, const SocketAddress& addr) noexcept {
  const long rc = sys::connect(fd, addr);
  if (rc == -EINPROGRESS) {
    if (Conn* c = conn(fd)) c->connecting = true;
  }
  return rc;
}

long UringBackend::finish_connect(int fd) noexcept {
  if (Conn* c = conn(fd)) {
    c->connecting = false;
    c->revents = 0;
  }
  return sys::connect_result(fd);
}

}  // namespace corio::detail::uring

#endif  // CORIO_HAVE_LIBURING
