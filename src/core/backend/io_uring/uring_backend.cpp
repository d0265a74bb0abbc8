// The io_uring backend: the ring and poll(). Operations: uring_ops.cpp.
//
// One poll() is four phases, and only the third enters the kernel:
//   1. prepare: SQEs for what the last steps asked for (receives to arm or
//      cancel, queued sends, polls for readiness, the wake-up read), so
//      that a step's work is batched as epoll batches MODs;
//   2. (nothing is ready already) wait: one io_uring_submit_and_wait_timeout
//      submits the batch and waits for the first completion;
//   3. reap every completion: bytes land in the fd's queue of provided
//      buffers, accepted fds in the listener's queue, sends advance;
//   4. report the fds whose parked waiter can now make progress.
// Bytes reach the user only in try_recv() or try_recv_lent(), inside the
// task's own step (the seam's rule), so a task cancelled while waiting loses
// nothing.
//
// Lending: try_recv_lent() shows the front provided buffer in place and
// consume_lent() takes bytes of it, so StreamReader::read() copies a message
// once, into the string it returns, instead of into its buffer and out again.
// Profiled at 64 KiB x 10 echo connections, user-space memmove went from 18%
// of the server's samples to 8%, and its CPU per round trip, same run, from
// 1.17x the raw io_uring C server's to 0.82x (that server sends each provided
// buffer back as is, but its 1,024 buffers are colder). A buffer lent and not
// taken stays queued: the lend is no transfer.
//
// Sends: try_send() queues what it takes, for the next poll()'s one enter to
// carry with every other fd's (a request's answer costs no send(2) of its
// own); only a send of 16 KiB or more on an idle stream goes to the socket
// at once, which copies it anyway. The queue goes out as SEND SQEs, one in
// flight per fd. A writer is told "writable" only once the queue is empty
// (writable() in uring_complete.cpp), and unsent() shows the queue above
// core, so that a caller writing on the fd itself (the HTTP server's
// sendfile after a response head) waits for it instead of overtaking. A
// queued send to a peer that reset fails a step later than a direct one;
// the streams cope, since a failed read fails their writing side too.
//
// Lifetime rules:
//   1. A Conn lives from attach() (or add_reader) until it is detached AND
//      no request of its is in the ring AND it is on no work list; the work
//      lists and the end of poll() are the safe points where it is freed.
//   2. detach() cancels its receive, accept and poll at once (one enter, so
//      the kernel drops its file references before the caller's close());
//      sends still owed go on from the fd itself (detach_to_close(): the
//      caller does not close it) or from a dup of it (detach()), which the
//      Conn closes once the last send completed (after a shutdown() that
//      waited for them). A
//      socket set to reset on close (SO_LINGER 0), or one closed before
//      its detach (attach() finds its number reused), owes nothing: its
//      queue is dropped and its send in the ring cancelled with the rest.
//   3. A completion for a detached Conn gives its buffer back or closes its
//      accepted fd, and changes nothing else.
//
// Requires Linux 6.0 (provided-buffer rings, multishot accept and recv);
// the probe says when not, and the loop runs on epoll.
//
// Setup: SINGLE_ISSUER | DEFER_TASKRUN where the kernel has them (6.1): the
// kernel then runs completions only when the loop waits, with no task-work
// interrupts in between. SINGLE_ISSUER ties the ring to the thread that first
// submits, so the ring starts disabled (R_DISABLED) and is enabled by the
// first poll(): a loop built on one thread and run on another (odd, but
// allowed) then works, because nothing is submitted before the loop runs
// (every SQE is prepared in poll()). Older kernels get COOP_TASKRUN, then a
// plain ring.
#include "core/backend/io_uring/uring_backend.hpp"

#include <cerrno>
#include <system_error>

#ifdef CORIO_HAVE_LIBURING

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <numeric>

#include "core/backend/io_uring/uring_impl.hpp"

namespace corio::detail {
namespace uring {

namespace {

constexpr unsigned kEntries = 256;     // SQ; a full SQ is submitted and reused
constexpr unsigned kCqEntries = 4096;  // more completions than submissions (multishot)

// liburing 2.3 declares io_uring_enable_rings but does not export it.
int enable_rings(io_uring& ring) noexcept {
  const long rc = ::syscall(__NR_io_uring_register, ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
                            nullptr, 0);
  return rc < 0 ? -errno : 0;
}

// What FILES_UPDATE puts in slot n is fd n, read by the kernel when the SQE
// is submitted: from here, not from the Conn, which a detach may change
// (keep_sending's dup) or free before an enter that failed is retried.
constexpr std::array<int, kFixedSlots> kSlotFds = [] {
  std::array<int, kFixedSlots> fds{};
  std::iota(fds.begin(), fds.end(), 0);
  return fds;
}();

}  // namespace

UringBackend::Ring::Ring() {
  constexpr unsigned kTries[] = {
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,  // Linux 6.1
      IORING_SETUP_COOP_TASKRUN,                                // 5.19
      0,
  };
  int err = -EINVAL;
  for (unsigned flags : kTries) {
    io_uring_params p{};
    p.flags = flags | IORING_SETUP_R_DISABLED | IORING_SETUP_CQSIZE;
    p.cq_entries = kCqEntries;
    err = io_uring_queue_init_params(kEntries, &r, &p);
    if (err != -EINVAL) break;
  }
  if (err < 0) throw_err(-err, "io_uring_queue_init");
  live = true;
}

UringBackend::UringBackend() {
  bufs_.register_with(ring_.r);
  send_spares_.reserve(kSendSpares);
  // Registering more slots than RLIMIT_NOFILE is refused; any failure
  // leaves every fd unregistered, which works as before.
  rlimit lim{};
  const unsigned slots = ::getrlimit(RLIMIT_NOFILE, &lim) == 0
                             ? static_cast<unsigned>(std::min<rlim_t>(lim.rlim_cur, kFixedSlots))
                             : 0;
  if (slots > 0 && io_uring_register_files_sparse(&ring_.r, slots) == 0) fixed_slots_ = slots;
  wakefd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakefd_ < 0) throw_err(errno, "eventfd");
}

UringBackend::~UringBackend() {
  // File requests first: the kernel may still write into their buffers.
  drop_files();
  // Exiting the ring first ends every request; then nothing refers to a Conn.
  ring_.exit();
  for (Conn* c : detached_) {
    if (c->owns_fd) ::close(c->fd);
    drop_received(*c);
    delete c;
  }
  for (int fd = 0; Entry* e = table_.find(fd); ++fd) {
    if (e->conn) drop_received(*e->conn);
    delete e->conn;
  }
  ::close(wakefd_);
}

void UringBackend::wakeup() noexcept { (void)eventfd_write(wakefd_, 1); }

io_uring_sqe* UringBackend::sqe() {
  io_uring_sqe* s = io_uring_get_sqe(&ring_.r);
  if (s == nullptr) {  // the SQ is full: hand it to the kernel and take a fresh slot
    if (int err = io_uring_submit(&ring_.r); err < 0) throw_err(-err, "io_uring_submit");
    s = io_uring_get_sqe(&ring_.r);
  }
  return s;
}

// ---- 1. prepare ------------------------------------------------------------------

void UringBackend::mark_prep(Conn& c) {
  if (c.in_prep) return;
  c.in_prep = true;
  prep_.push_back(&c);
}

void UringBackend::prepare() {
  if (!wake_armed_) {
    io_uring_sqe* s = sqe();
    io_uring_prep_read(s, wakefd_, &wake_value_, sizeof wake_value_, 0);
    io_uring_sqe_set_data64(s, kWake);
    wake_armed_ = true;
  }
  prepare_files();
  bufs_.publish();
  if (!starved_.empty() && bufs_.free_count() > 0) {
    for (Conn* c : starved_) {
      c->starved = false;
      mark_prep(*c);
    }
    starved_.clear();
  }
  std::vector<Conn*> work;
  work.swap(prep_);
  for (Conn* c : work) {
    c->in_prep = false;
    if (c->kind == Kind::stream) prepare_stream(*c);
    if (!c->detached) {
      if (c->kind == Kind::listener) prepare_accept(*c);
      prepare_poll(*c);
    }
    maybe_free(c);
  }
  work.clear();
  if (prep_.empty() && prep_.capacity() < work.capacity()) prep_.swap(work);  // reuse its memory
}

// sqe() for detach(), which must not throw: null when the kernel takes no SQE.
io_uring_sqe* UringBackend::sqe_now() noexcept {
  io_uring_sqe* s = io_uring_get_sqe(&ring_.r);
  if (s == nullptr) {
    (void)io_uring_submit(&ring_.r);
    s = io_uring_get_sqe(&ring_.r);
  }
  return s;
}

bool UringBackend::prep_cancel(Conn& c, Op op) noexcept {
  io_uring_sqe* s = sqe_now();
  if (s == nullptr) return false;
  io_uring_prep_cancel64(s, tag(&c, op), 0);
  io_uring_sqe_set_data64(s, kIgnore);
  return true;
}

void UringBackend::prepare_stream(Conn& c) {
  const bool fixing = c.fix_wanted && !c.detached && fix(c);
  prepare_send(c);  // first: a detached Conn still owes its sends
  if (!c.detached) prepare_recv(c);
  c.fixed = c.fixed || fixing;  // from the next batch on (fix())
}

// Queues the filling of c's slot, ahead of c's first requests (see
// kFixedSlots): an SQE in the batch they go in, where a register syscall
// per connection cost one more syscall than epoll's accept path. The
// update cannot fail but on a closed fd (then so do the requests that
// follow it). True if queued: the caller's SQEs of this batch still name
// the fd, and only the next prepare() names the slot, so that none can
// run before the update whatever order the kernel takes a batch in.
bool UringBackend::fix(Conn& c) noexcept {
  c.fix_wanted = false;
  io_uring_sqe* s = sqe_now();
  if (s == nullptr) return false;
  int* fd = const_cast<int*>(&kSlotFds[static_cast<unsigned>(c.fd)]);  // only read
  io_uring_prep_files_update(s, fd, 1, c.fd);
  io_uring_sqe_set_data64(s, kIgnore);
  ++fixed_files_;
  return true;
}

void UringBackend::prepare_recv(Conn& c) {
  if (c.recv_cancel && c.recv_armed) (void)prep_cancel(c, kRecv);
  c.recv_cancel = false;
  // One receive in the ring at a time keeps the bytes in order.
  if (!c.recv_on || c.recv_armed || c.own_armed || c.eof || c.recv_error != 0) return;
  if (c.chunks.size() > kRecvCap / 2) return;  // re-armed as the reader consumes
  if (bufs_.free_count() == 0) {
    if (!c.starved) {
      c.starved = true;
      starved_.push_back(&c);
    }
    if (c.want_read && !c.own_queued) prepare_own_recv(c);
    return;
  }
  io_uring_sqe* s = sqe();
  io_uring_prep_recv_multishot(s, c.fd, nullptr, 0, 0);
  target(s, c);
  s->flags |= IOSQE_BUFFER_SELECT;
  s->buf_group = BufferRing::kGroup;
  io_uring_sqe_set_data64(s, tag(&c, kRecv));
  c.recv_armed = true;
}

void UringBackend::prepare_own_recv(Conn& c) {
  char* own = take_own_buffer(c);
  io_uring_sqe* s = sqe();
  io_uring_prep_recv(s, c.fd, own, kOwnBufferSize, 0);
  target(s, c);
  io_uring_sqe_set_data64(s, tag(&c, kOwnRecv));
  c.own_armed = true;
}

void UringBackend::prepare_accept(Conn& c) {
  if (c.accept_cancel && c.accept_armed) (void)prep_cancel(c, kAccept);
  c.accept_cancel = false;
  if (!c.accept_on || c.accept_armed || c.rare->accepts.error != 0) return;
  if (c.rare->accepts.accepted.size() > kAcceptCap / 2) return;
  io_uring_sqe* s = sqe();
  io_uring_prep_multishot_accept(s, c.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  io_uring_sqe_set_data64(s, tag(&c, kAccept));
  c.accept_armed = true;
}

void UringBackend::prepare_send(Conn& c) {
  if (!c.out || c.send_inflight || c.send_error != 0) return;
  SendQueue& q = *c.out;
  if (q.off == q.inflight.size() && !q.pending.empty()) {
    q.inflight.clear();
    q.inflight.swap(q.pending);  // pending may grow freely while this one is in the ring
    q.off = 0;
  }
  if (q.off == q.inflight.size()) return;
  io_uring_sqe* s = sqe();
  io_uring_prep_send(s, c.fd, q.inflight.data() + q.off, q.inflight.size() - q.off, MSG_NOSIGNAL);
  target(s, c);
  io_uring_sqe_set_data64(s, tag(&c, kSend));
  c.send_inflight = true;
}

// One-shot polls, re-armed here while wanted: level-triggered readiness, as
// asyncio's selector loop gives add_reader.
void UringBackend::prepare_poll(Conn& c) {
  unsigned want = c.interest;
  if (c.kind == Kind::socket) {
    want |= (c.want_read ? POLLIN : 0u) | (c.want_write ? POLLOUT : 0u);
  } else if (c.kind == Kind::stream) {
    if (c.want_read && !c.recv_used) want |= POLLIN;
    if (c.want_write && (c.connecting || !c.send_used || !c.sends_owed())) want |= POLLOUT;
  }
  if (c.poll_dead || want == 0) return;
  if (c.poll_mask != 0) {
    if ((want & ~c.poll_mask) != 0 && !c.poll_removing) {  // widen: remove, re-add on its CQE
      io_uring_sqe* s = sqe();
      io_uring_prep_poll_remove(s, tag(&c, kPoll));
      io_uring_sqe_set_data64(s, kIgnore);
      c.poll_removing = true;
    }
    return;
  }
  io_uring_sqe* s = sqe();
  io_uring_prep_poll_add(s, c.fd, want);
  io_uring_sqe_set_data64(s, tag(&c, kPoll));
  c.poll_mask = static_cast<std::uint16_t>(want);
}

// ---- 2. wait -----------------------------------------------------------------------

void UringBackend::enter(int timeout_ms) {
  int rc;
  if (timeout_ms == 0) {
    // Not submit_and_wait_timeout with wait_nr 0: under DEFER_TASKRUN only an
    // enter with GETEVENTS posts completions, and this one always asks.
    rc = io_uring_submit_and_get_events(&ring_.r);
  } else {
    __kernel_timespec ts{};
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = static_cast<long long>(timeout_ms % 1000) * 1000000;
    io_uring_cqe* cqe = nullptr;
    rc = io_uring_submit_and_wait_timeout(&ring_.r, &cqe, 1, timeout_ms < 0 ? nullptr : &ts,
                                          nullptr);
  }
  if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
    throw_err(-rc, "io_uring_submit_and_wait_timeout");
  }
}

int UringBackend::poll(int timeout_ms, IoEvent* out, int capacity) {
  if (!enabled_) {
    if (int err = enable_rings(ring_.r); err < 0) throw_err(-err, "IORING_REGISTER_ENABLE_RINGS");
    enabled_ = true;
  }
  prepare();
  enter(ready_.empty() ? timeout_ms : 0);
  reap();
  fd_limit_stale_ = true;  // within_fd_limit()
  return report(out, capacity);
}

}  // namespace uring

std::unique_ptr<IoBackend> make_io_uring_backend(const IoUringSupport& s) {
  if (!s.usable || !s.provided_buffer_ring || !s.multishot_accept || !s.multishot_recv) {
    const std::string why = !s.usable ? s.reason
                                      : "the kernel (" + s.kernel +
                                            ") lacks provided-buffer rings or multishot "
                                            "accept/recv (Linux 6.0)";
    throw std::system_error(ENOTSUP, std::generic_category(), why);
  }
  return std::make_unique<uring::UringBackend>();
}

}  // namespace corio::detail

#else  // no liburing

namespace corio::detail {

std::unique_ptr<IoBackend> make_io_uring_backend(const IoUringSupport& s) {
  throw std::system_error(ENOTSUP, std::generic_category(), s.reason);
}

}  // namespace corio::detail

#endif
