// The event loop (see event_loop.hpp). One iteration, run_once():
//
//   1. timeout  0 if anything is ready (or stopping, or cross-thread work
//               is waiting), else until the earliest timer, else forever
//   2. poll     wait for I/O up to the timeout; queue the fd callbacks;
//               move call_soon_threadsafe work onto the ready queue
//   3. timers   queue every timer whose deadline has passed, in
//               (deadline, sequence) order
//   4. run      run exactly the batch queued so far; whatever it schedules
//               runs in the next iteration
//
// Lifetime rules:
//   1. A queued ready node holds a reference on its owner; running (or, on
//      close, dropping) it releases that reference.
//   2. A call_later handle in the timer heap holds a reference; expiry moves
//      it to the ready queue, cancel() releases it at once.
//   3. Pending tasks are owned by the loop. close() destroys their frames,
//      reporting each, and detaches done tasks whose exception is still
//      unretrieved so that their later report goes to stderr.
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend/backend.hpp"
#include "backend/choose.hpp"
#include "inspect_server.hpp"
#include "lag_window.hpp"
#include "signals.hpp"
#include "stall_detector.hpp"
#include "timer_heap.hpp"
#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

namespace corio {

namespace {
// While callbacks keep the ready queue busy, poll for I/O only every
// kIoPollInterval iterations: a zero-timeout epoll_wait costs a syscall
// (~0.3 us), more than a task switch. Tokio's scheduler checks its driver
// every 61 ticks for the same reason. Idle loops always poll.
constexpr unsigned kIoPollInterval = 61;
constexpr int kMaxEventsPerPoll = 256;
}  // namespace

struct EventLoop::Impl {
  std::unique_ptr<detail::Backend> backend;
  detail::TimerHeap timers;
  // Waits parked in slots: a busy loop must still poll for them.
  std::size_t parked_io = 0;
  // Native file requests in the backend (submit_file), the same for the same reasons.
  std::size_t file_ops = 0;
  void fire(detail::IoWait*& parked, bool closed) noexcept {
    --parked_io;
    std::exchange(parked, nullptr)->fire(closed);
  }
  std::size_t watched_fds = 0;
  detail::LagWindow lag;

  // Installs (h) or removes (empty h) the reader or writer callback of fd.
  void watch(int fd, bool is_reader, detail::Ref<detail::CallbackHandle> h) {
    if (fd < 0) throw ValueError("invalid file descriptor " + std::to_string(fd));
    detail::FdSlot& w = backend->slot(fd);
    const bool was_watched = w.reader || w.writer;
    const bool read = is_reader ? static_cast<bool>(h) : static_cast<bool>(w.reader);
    const bool write = is_reader ? static_cast<bool>(w.writer) : static_cast<bool>(h);
    backend->set_interest(fd, read, write);
    auto& slot = is_reader ? w.reader : w.writer;
    if (slot) slot->cancelled = true;  // a queued run of the old callback is skipped
    slot = std::move(h);
    if (read || write) {
      if (!was_watched) ++watched_fds;
    } else if (was_watched) {
      --watched_fds;
    }
  }
  detail::IoEvent events[kMaxEventsPerPoll];

  // post_threadsafe: the only state shared with other threads.
  std::mutex ts_mutex;
  std::condition_variable ts_posted;  // close() waits on it for executor calls
  detail::ReadyQueue ts_queue;        // each node owns itself or a reference
  std::atomic<bool> ts_pending{false};
  bool ts_closed = false;

  detail::ReadyNode* take_posted() {
    std::lock_guard lock(ts_mutex);
    ts_pending.store(false, std::memory_order_relaxed);
    return ts_queue.take_all();
  }
};

namespace {
bool debug_from_environment() {
  const char* v = std::getenv("CORIO_DEBUG");
  return v && *v && std::strcmp(v, "0") != 0;
}
}  // namespace

EventLoop::EventLoop() : EventLoop(RunOptions{}) {}

EventLoop::EventLoop(RunOptions opts)
    : clock_(opts.clock ? std::move(opts.clock) : std::make_shared<MonotonicClock>()),
      impl_(std::make_unique<Impl>()),
      debug_(opts.debug || debug_from_environment()) {
  on_deadlock = opts.on_deadlock;
  detail::BackendChoice chosen = detail::make_backend(opts.backend);
  if (debug_ && !chosen.fallback_reason.empty()) {
    std::fprintf(stderr, "corio: running on %s: %s\n", chosen.backend->name(),
                 chosen.fallback_reason.c_str());
  }
  impl_->backend = std::move(chosen.backend);
  backend_ = impl_->backend.get();
  detail::ignore_sigpipe_once();
  inspect_ = detail::start_inspect_server(*this, opts.inspect);
  stall_ = detail::StallDetector::create(opts.stall, running_task, true);
}

EventLoop::~EventLoop() {
  if (!closed && !running_) close();
}

const char* EventLoop::backend_name() const noexcept { return backend_->name(); }

LoopStats EventLoop::stats() const {
  LoopStats s;
  s.iterations = iterations_;
  s.ready = ready.size();
  s.steps = steps_;
  s.timers = impl_->timers.size();
  s.watched_fds = impl_->watched_fds;
  s.io_waits = impl_->parked_io;
  s.tasks_alive = tasks.size();
  s.tasks_created = next_task_id - 1;
  s.lag = impl_->lag.percentiles();
  s.slow_steps = slow_steps_;
  s.stalls = stall_ ? stall_->stalls() : 0;
  return s;
}

double EventLoop::time() const { return clock_->now(); }

void EventLoop::check_open() const {
  if (closed) throw RuntimeError("Event loop is closed");
}

// ---- running -------------------------------------------------------------

void EventLoop::enter_run() {
  check_open();
  if (running_) throw RuntimeError("This event loop is already running");
  if (detail::tls_running_loop) {
    throw RuntimeError("Cannot run the event loop while another loop is running");
  }
  running_ = true;
  detail::tls_running_loop = this;
  owner_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  if (stall_) stall_->running(true);
}

void EventLoop::leave_run() noexcept {
  if (stall_) stall_->running(false);
  stopping_ = false;
  running_ = false;
  detail::tls_running_loop = nullptr;
  owner_thread_.store({}, std::memory_order_relaxed);
}

void EventLoop::run_forever() {
  enter_run();
  try {
    do {
      run_once();
    } while (!stopping_);
  } catch (...) {
    leave_run();
    throw;
  }
  leave_run();
}

void EventLoop::run_once() {
  ++iterations_;
  poll_io(poll_timeout());
  queue_expired_timers();
  run_ready_batch();
}

double EventLoop::poll_timeout() const {
  if (!ready.empty() || stopping_ || impl_->ts_pending.load(std::memory_order_acquire)) return 0;
  if (!impl_->timers.empty()) return std::max(0.0, impl_->timers.top_when() - time());
  return -1;
}

namespace {
int to_poll_ms(double timeout) {
  // Rounded up: a wait that ends before the deadline would only spin.
  return timeout < 0 ? -1 : static_cast<int>(std::min(std::ceil(timeout * 1000), double{INT_MAX}));
}
}  // namespace

int EventLoop::wait_for_io(double timeout) {
  Impl& im = *impl_;
  if (timeout == 0 || !clock_->is_virtual()) {
    return im.backend->poll(to_poll_ms(timeout), im.events, kMaxEventsPerPoll);
  }
  // Virtual time jumps only when nothing at all can run: I/O that is ready
  // now is handled at the current instant, before the jump to the next timer
  // (a file request's completion queues its callbacks inside poll()).
  const int n = im.backend->poll(0, im.events, kMaxEventsPerPoll);
  if (n > 0 || !ready.empty() || im.ts_pending.load(std::memory_order_acquire)) return n;
  timeout = clock_->on_idle(timeout);
  return timeout == 0 ? 0 : im.backend->poll(to_poll_ms(timeout), im.events, kMaxEventsPerPoll);
}

void EventLoop::poll_io(double timeout) {
  Impl& im = *impl_;
  if (timeout < 0 && !tasks.empty()) [[unlikely]]
    timeout = check_deadlock();
  const bool busy = timeout == 0;
  const bool io_wanted = im.watched_fds > 0 || im.parked_io > 0 || im.file_ops > 0;
  if (!busy || (io_wanted && ++busy_iterations_ >= kIoPollInterval)) {
    busy_iterations_ = 0;
    const int n = stall_ && !busy ? wait_for_io_watched(timeout) : wait_for_io(timeout);
    for (int i = 0; i < n; ++i) {
      const detail::IoEvent& ev = im.events[i];
      detail::FdSlot* slot = im.backend->find(ev.fd);
      if (!slot) continue;
      detail::FdSlot& w = *slot;
      if (ev.readable && w.read_wait) im.fire(w.read_wait, false);
      if (ev.writable && w.write_wait) im.fire(w.write_wait, false);
      if (ev.readable && w.reader && !w.reader->queued) {
        add_ref(w.reader.get());
        push_handle(w.reader.get());
      }
      if (ev.writable && w.writer && !w.writer->queued) {
        add_ref(w.writer.get());
        push_handle(w.writer.get());
      }
    }
  }
  if (im.ts_pending.load(std::memory_order_acquire)) {
    for (detail::ReadyNode* n = im.take_posted(); n;) {
      detail::ReadyNode* next = n->next;
      ready.push(n);
      n = next;
    }
  }
}

void EventLoop::queue_expired_timers() {
  detail::TimerHeap& timers = impl_->timers;
  if (timers.empty()) return;
  const double now = time();  // read once per pass
  if (timers.top_when() <= now) impl_->lag.record(now - timers.top_when());  // the latest one
  while (!timers.empty() && timers.top_when() <= now) {
    detail::TimerNode* n = timers.pop();
    n->expire(n);
  }
}

// The stall detector's part (loop_stall.cpp) is one progress mark before the
// batch and one look at caught() after it, not per step: the watchdog tells
// the steps of a batch apart by running_task, which each task step stores
// anyway (callbacks run with no task, so a run of them between two task
// steps counts as one step). Folded in here, not a batch function of its
// own, so that the loop stays inlined into run_once either way; stall_ is
// read again after the batch, as a step may have turned the detector off.
void EventLoop::run_ready_batch() noexcept {
  timing_steps = debug_;
  if (debug_) [[unlikely]]
    return run_ready_batch_debug();
  if (stall_) stall_->mark_progress();
  std::uint64_t steps = 0;  // counted in a register, stored once per batch
  for (detail::ReadyNode* n = ready.take_all(); n; ++steps) {
    detail::ReadyNode* next = n->next;  // n may be queued again while it runs
    n->fn(n, detail::ReadyOp::run);
    n = next;
  }
  steps_ += steps;
  if (stall_ && stall_->caught()) [[unlikely]]
    report_stall(nullptr);
}

// ---- callbacks and timers ------------------------------------------------

void EventLoop::push_handle(detail::CallbackHandle* h) noexcept {
  h->queued = true;
  ready.push(h);
}

void EventLoop::run_handle(detail::ReadyNode* node, detail::ReadyOp op) noexcept {
  auto* h = static_cast<detail::CallbackHandle*>(node);
  h->queued = false;
  if (op == detail::ReadyOp::run && !h->cancelled) {
    h->running = true;
    try {
      h->fn();
    } catch (...) {
      h->loop->call_exception_handler(
          {"Exception in callback", std::current_exception(), std::nullopt});
    }
    h->running = false;
    if (h->cancelled) h->fn = nullptr;  // cancelled by itself: release its captures now
  }
  release(h);
}

void EventLoop::expire_handle(detail::TimerNode* n) noexcept {
  auto* h = static_cast<detail::CallbackHandle*>(n);
  h->loop->push_handle(h);  // the heap's reference moves to the queue
}

Handle EventLoop::call_soon(std::function<void()> fn) {
  check_open();
  if (debug_) [[unlikely]]
    check_thread();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  add_ref(h);
  push_handle(h);
  return Handle(detail::Ref<detail::CallbackHandle>(h));
}

TimerHandle EventLoop::call_at(double when, std::function<void()> fn) {
  check_open();
  if (debug_) [[unlikely]]
    check_thread();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  h->expire = &expire_handle;
  add_ref(h);
  impl_->timers.push(h, when);
  return TimerHandle(detail::Ref<detail::CallbackHandle>(h));
}

Handle EventLoop::call_soon_threadsafe(std::function<void()> fn) {
  return post_callback(std::move(fn), false);
}

Handle EventLoop::post_callback(std::function<void()> fn, bool release_hold) {
  if (!release_hold) note_foreign_post();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  h->queued = true;
  Handle handle{detail::Ref<detail::CallbackHandle>(h)};
  add_ref(h);  // the queue's
  if (!post_threadsafe(h, release_hold)) {
    release(h);
    throw RuntimeError("Event loop is closed");
  }
  return handle;
}

// The wake-ups happen under the mutex: once a poster lets go of it, it never
// touches the loop again, so close() (which takes the mutex) cannot free the
// loop under a poster's feet. Only the first post of a batch wakes anyone;
// later ones find the loop already woken for the batch. A ThreadsafeHold
// ends under the same lock as its last post (the loop may be destroyed as
// soon as that post has run), or with no node, with a wake-up only.
bool EventLoop::post_threadsafe(detail::ReadyNode* node, bool release_hold) {
  Impl& im = *impl_;
  std::lock_guard lock(im.ts_mutex);
  if (release_hold) threadsafe_holds.fetch_sub(1, std::memory_order_release);
  if (im.ts_closed) return false;
  if (!node) {
    im.backend->wakeup();
    return true;
  }
  const bool first = im.ts_queue.empty();
  im.ts_queue.push(node);
  if (first) {
    im.ts_pending.store(true, std::memory_order_release);
    im.ts_posted.notify_one();
    im.backend->wakeup();
  }
  return true;
}

std::size_t EventLoop::io_watchers() const noexcept {
  return impl_->watched_fds + impl_->parked_io + impl_->file_ops +
         (signals_ ? signals_->handler_count() : 0);
}

void EventLoop::add_timer(detail::TimerNode* node, double when) { impl_->timers.push(node, when); }

void EventLoop::remove_timer(detail::TimerNode* node) noexcept {
  if (node->in_heap()) impl_->timers.remove(node);
}

void Handle::cancel() {
  if (!h_ || h_->cancelled) return;
  h_->cancelled = true;
  if (!h_->running) h_->fn = nullptr;  // release captured state now, as asyncio does
  if (h_->in_heap()) {
    detail::LoopAccess::remove_timer(*h_->loop, h_.get());
    release(h_.get());  // the heap's reference
  }
}

// ---- fd readiness ----------------------------------------------------------

void EventLoop::add_reader(int fd, std::function<void()> fn) {
  check_open();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  impl_->watch(fd, true, detail::Ref<detail::CallbackHandle>(h));
}

void EventLoop::add_writer(int fd, std::function<void()> fn) {
  check_open();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  impl_->watch(fd, false, detail::Ref<detail::CallbackHandle>(h));
}

bool EventLoop::remove_reader(int fd) { return remove_watch(fd, true); }

bool EventLoop::remove_writer(int fd) { return remove_watch(fd, false); }

bool EventLoop::remove_watch(int fd, bool is_reader) {
  detail::FdSlot* w = closed ? nullptr : backend_->find(fd);
  if (!w || !(is_reader ? w->reader : w->writer)) return false;
  impl_->watch(fd, is_reader, {});
  return true;
}

// ---- socket operations' waits ---------------------------------------------------

void EventLoop::attach_fd(int fd) {
  check_open();
  backend_->attach(fd);
}

// The socket is closing: its waiters learn it (EBADF) instead of hanging.
void EventLoop::detach_fd(int fd) noexcept {
  detail::FdSlot* w = closed ? nullptr : backend_->find(fd);
  if (!w) return;
  backend_->detach(fd);
  if (w->read_wait) impl_->fire(w->read_wait, true);
  if (w->write_wait) impl_->fire(w->write_wait, true);
}

void EventLoop::park_io(detail::IoWait* w) {
  detail::FdSlot& slot = backend_->slot(w->fd());
  detail::IoWait*& parked = w->for_write() ? slot.write_wait : slot.read_wait;
  if (parked) {
    throw RuntimeError(w->for_write() ? "another task is already waiting to write this socket"
                                      : "another task is already waiting to read this socket");
  }
  backend_->arm(w->fd(), w->for_write());
  parked = w;
  ++impl_->parked_io;
}

void EventLoop::unpark_io(detail::IoWait* w) noexcept {
  detail::FdSlot* slot = backend_->find(w->fd());
  if (!slot) return;
  detail::IoWait*& parked = w->for_write() ? slot->write_wait : slot->read_wait;
  if (parked == w) {
    parked = nullptr;
    --impl_->parked_io;
  }
}

// A closed loop takes no request: the caller's pool path then says it is closed.
bool EventLoop::submit_file(detail::FileOp& op) {
  if (closed || !backend_->submit_file(op)) return false;
  ++impl_->file_ops;
  return true;
}

void EventLoop::file_op_done() noexcept { --impl_->file_ops; }

// ---- executors ---------------------------------------------------------------

Executor& EventLoop::default_executor() {
  check_open();
  if (!default_executor_) default_executor_ = std::make_unique<ThreadPoolExecutor>();
  return *default_executor_;
}

void EventLoop::set_default_executor(std::unique_ptr<Executor> executor) {
  check_open();
  default_executor_ = std::move(executor);
}

namespace {
void drop_all(detail::ReadyNode* n) noexcept {
  while (n) {
    detail::ReadyNode* next = n->next;
    n->fn(n, detail::ReadyOp::drop);
    n = next;
  }
}
}  // namespace

// A worker thread still running a run_in_executor call will post it back to
// this loop: wait for it rather than let it touch a destroyed loop (asyncio's
// run() likewise waits in shutdown_default_executor). Arrivals are dropped;
// their tasks are gone.
void EventLoop::wait_executor_calls() noexcept {
  Impl& im = *impl_;
  while (executor_calls > 0) {
    {
      std::unique_lock lock(im.ts_mutex);
      im.ts_posted.wait(lock, [&im] { return !im.ts_queue.empty(); });
    }
    drop_all(im.take_posted());
  }
}

// ---- close -------------------------------------------------------------------

void EventLoop::destroy_pending_tasks() noexcept {
  // A destroyed frame may cancel or even create tasks; bounded rounds.
  for (int round = 0; round < 16 && !tasks.empty(); ++round) {
    std::vector<TaskRef> pending;
    for (detail::TaskBase* t : tasks.snapshot()) pending.emplace_back(t);
    for (TaskRef& t : pending) {
      if (t.done()) continue;
      call_exception_handler({"Task was destroyed but it is pending! " + t.task()->repr() +
                                  detail::format_await_chain(*t.task()),
                              nullptr, t});
      t.task()->finish_from_root(std::make_exception_ptr(CancelledError("event loop closed")));
    }
  }
}

void EventLoop::close() {
  if (running_) throw RuntimeError("Cannot close a running event loop");
  if (closed) return;
  inspect_.reset();  // first: the tasks it would show are about to go
  destroy_pending_tasks();
  wait_executor_calls();
  default_executor_.reset();  // joins its (now idle) threads
  {
    std::lock_guard lock(impl_->ts_mutex);
    impl_->ts_closed = true;
  }
  drop_all(impl_->take_posted());
  // Pending call_later handles move to the ready queue, which drops them
  // below; any other timer belongs to a frame destroyed above.
  while (!impl_->timers.empty()) {
    detail::TimerNode* n = impl_->timers.pop();
    if (n->expire == &expire_handle) n->expire(n);
  }
  signals_.reset();
  stall_.reset();
  drop_all(ready.take_all());
  backend_->drop_slots();
  while (!failed_tasks.empty()) failed_tasks.back()->detach_from_loop();
  closed = true;
}

}  // namespace corio
