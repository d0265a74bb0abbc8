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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/choose.hpp"
#include "loop_state.hpp"
#include "signals.hpp"
#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

namespace corio {

namespace {
bool debug_from_environment() {
  const char* v = std::getenv("CORIO_DEBUG");
  return v && *v && std::strcmp(v, "0") != 0;
}
}  // namespace

EventLoop::EventLoop() : EventLoop(RunOptions{}) {}

EventLoop::EventLoop(RunOptions opts) : EventLoop(opts, detail::make_backend(opts.backend)) {}

EventLoop::EventLoop(RunOptions opts, detail::BackendChoice chosen)
    : clock_(opts.clock ? std::move(opts.clock) : std::make_shared<MonotonicClock>()),
      state_(std::make_unique<detail::LoopState>(*this)),
      debug_(opts.debug || debug_from_environment()) {
  virtual_clock_ = clock_->is_virtual();
  on_deadlock = opts.on_deadlock;
  if (debug_ && !chosen.fallback_reason.empty()) {
    std::fprintf(stderr, "corio: running on %s: %s\n", chosen.backend->name(),
                 chosen.fallback_reason.c_str());
  }
  state_->backend = std::move(chosen.backend);
  backend_ = state_->backend.get();
  io_ = detail::LoopIo(*this, *this, *state_);
  detail::ignore_sigpipe_once();
  if (detail::LoopObserverFactory observe = detail::loop_observer_factory()) {
    observer_ = observe(*this, opts);
    observed_ = observer_->watching();
  }
}

EventLoop::~EventLoop() {
  if (!closed && !running_) close();
}

const char* EventLoop::backend_name() const noexcept { return state_->backend->name(); }

LoopStats EventLoop::stats() const {
  LoopStats s;
  s.iterations = iterations_;
  s.ready = ready.size();
  s.steps = steps_;
  s.timers = state_->timers.size();
  s.watched_fds = state_->watched_fds;
  s.io_waits = state_->parked_io;
  s.tasks_alive = tasks.size();
  s.tasks_created = next_task_id - 1;
  s.lag = state_->lag.percentiles();
  s.slow_steps = slow_steps_;
  s.stalls = observer_ ? observer_->stalls() : 0;
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
  if (observer_) observer_->running(true);
}

void EventLoop::leave_run() noexcept {
  if (observer_) observer_->running(false);
  stopping_ = false;
  running_ = false;
  detail::tls_running_loop = nullptr;
  detail::tls_stopped_loop = state_->stopped;
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
  pass_time_ = time();  // read once per pass: the timers' "now", and pass_time()'s
  queue_expired_timers();
  run_ready_batch();
}

double EventLoop::poll_timeout() const {
  if (!ready.empty() || stopping_ || state_->ts_pending.load(std::memory_order_acquire)) return 0;
  if (!state_->timers.empty()) return std::max(0.0, state_->timers.top_when() - time());
  return -1;
}

namespace {
int to_poll_ms(double timeout) {
  // Rounded up: a wait that ends before the deadline would only spin.
  return timeout < 0 ? -1 : static_cast<int>(std::min(std::ceil(timeout * 1000), double{INT_MAX}));
}
}  // namespace

int EventLoop::wait_for_io(double timeout) {
  detail::LoopState& im = *state_;
  if (timeout == 0 || !clock_->is_virtual()) {
    return im.backend->poll(to_poll_ms(timeout), im.events, detail::kMaxEventsPerPoll);
  }
  // Virtual time jumps only when nothing at all can run: I/O that is ready
  // now is handled at the current instant, before the jump to the next timer
  // (a file request's completion queues its callbacks inside poll()).
  const int n = im.backend->poll(0, im.events, detail::kMaxEventsPerPoll);
  if (n > 0 || !ready.empty() || im.ts_pending.load(std::memory_order_acquire)) return n;
  timeout = clock_->on_idle(timeout);
  return timeout == 0 ? 0 : im.backend->poll(to_poll_ms(timeout), im.events, detail::kMaxEventsPerPoll);
}

void EventLoop::poll_io(double timeout) {
  detail::LoopState& im = *state_;
  if (timeout < 0 && !tasks.empty()) [[unlikely]]
    timeout = check_deadlock();
  const bool busy = timeout == 0;
  const bool io_wanted = im.watched_fds > 0 || im.parked_io > 0 || im.file_ops > 0;
  if (!busy || (io_wanted && ++busy_iterations_ >= detail::kIoPollInterval)) {
    busy_iterations_ = 0;
    const int n = observed_ && !busy ? wait_for_io_observed(timeout) : wait_for_io(timeout);
    for (int i = 0; i < n; ++i) {
      const detail::IoEvent& ev = im.events[i];
      detail::FdSlot* slot = im.backend->find(ev.fd);
      if (!slot) continue;
      detail::FdSlot& w = *slot;
      if (ev.readable && w.read_wait) im.fire(w.read_wait, false);
      if (ev.writable && w.write_wait) im.fire(w.write_wait, false);
      if (detail::FdCallbacks* cb = w.callbacks.get()) {
        if (ev.readable && cb->reader && !cb->reader->queued) {
          add_ref(cb->reader.get());
          push_handle(cb->reader.get());
        }
        if (ev.writable && cb->writer && !cb->writer->queued) {
          add_ref(cb->writer.get());
          push_handle(cb->writer.get());
        }
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
  detail::TimerHeap& timers = state_->timers;
  if (timers.empty()) return;
  const double now = pass_time_;
  if (timers.top_when() <= now) state_->lag.record(now - timers.top_when());  // the latest one
  while (!timers.empty() && timers.top_when() <= now) {
    detail::TimerNode* n = timers.pop();
    n->expire(n);
  }
}

// An observer (the stall detector, src/debug) hears of the batch, not of each
// step: the watchdog tells the steps of a batch apart by running_task, which
// each task step stores anyway (callbacks run with no task, so a run of them
// between two task steps counts as one step). Folded in here, not a batch
// function of its own, so that the loop stays inlined into run_once either
// way; observed_ is read again after the batch, as a step may have turned
// the detector on or off.
void EventLoop::run_ready_batch() noexcept {
  timing_steps = debug_;
  if (debug_) [[unlikely]]
    return run_ready_batch_debug();
  if (observed_) observer_->step_begin();
  std::uint64_t steps = 0;  // counted in a register, stored once per batch
  for (detail::ReadyNode* n = ready.take_all(); n; ++steps) {
    detail::ReadyNode* next = n->next;  // n may be queued again while it runs
    n->fn(n, detail::ReadyOp::run);
    n = next;
  }
  steps_ += steps;
  if (observed_) [[unlikely]]
    observer_->step_end(nullptr);
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
  state_->timers.push(h, when);
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
  if (!io_.post_threadsafe(h, release_hold)) {
    release(h);
    throw RuntimeError("Event loop is closed");
  }
  return handle;
}

std::size_t EventLoop::io_watchers() const noexcept {
  return state_->watched_fds + state_->parked_io + state_->file_ops +
         (signals_ ? signals_->handler_count() : 0);
}

void Handle::cancel() {
  if (!h_ || h_->cancelled) return;
  h_->cancelled = true;
  if (!h_->running) h_->fn = nullptr;  // release captured state now, as asyncio does
  if (h_->in_heap()) {
    h_->loop->io().remove_timer(h_.get());
    release(h_.get());  // the heap's reference
  }
}

// ---- fd readiness ----------------------------------------------------------

void EventLoop::add_reader(int fd, std::function<void()> fn) {
  check_open();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  state_->watch(fd, true, detail::Ref<detail::CallbackHandle>(h));
}

void EventLoop::add_writer(int fd, std::function<void()> fn) {
  check_open();
  auto* h = new detail::CallbackHandle(this, std::move(fn));
  h->ReadyNode::fn = &run_handle;
  state_->watch(fd, false, detail::Ref<detail::CallbackHandle>(h));
}

bool EventLoop::remove_reader(int fd) { return remove_watch(fd, true); }

bool EventLoop::remove_writer(int fd) { return remove_watch(fd, false); }

bool EventLoop::remove_watch(int fd, bool is_reader) {
  detail::FdSlot* w = closed ? nullptr : state_->backend->find(fd);
  if (!w || !w->callbacks || !(is_reader ? w->callbacks->reader : w->callbacks->writer)) return false;
  state_->watch(fd, is_reader, {});
  return true;
}

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
  detail::LoopState& im = *state_;
  while (executor_calls > 0) {
    {
      std::unique_lock lock(im.ts_mutex);
      im.ts_posted.wait(lock, [&im] { return !im.ts_queue.empty(); });
    }
    drop_all(im.take_posted());
  }
}

// ---- close -------------------------------------------------------------------

namespace {

// Calls f with each fd slot entry that holds a watch.
template <class F>
void for_each_watch(detail::LoopState& im, F f) {
  for (int fd = 0; detail::FdSlot* slot = im.backend->find(fd); ++fd) {
    for (detail::FdWaiter** w : {&slot->read_wait, &slot->write_wait}) {
      if (*w != nullptr && (*w)->is_watch()) f(w);
    }
  }
}

// A watch (IoWatch) has no frame for the close to destroy: each is taken
// out of its slot and told its fd is gone, and ends what it watches (a
// parked connection). Collected first: ending one closes sockets. Counted
// before that, so that the one allocation comes before any slot changes:
// out of memory, every watch stays, as before watches existed.
void end_watches(detail::LoopState& im) noexcept {
  std::size_t n = 0;
  for_each_watch(im, [&n](detail::FdWaiter**) { ++n; });
  std::vector<detail::FdWaiter*> watches;
  try {
    watches.reserve(n);
  } catch (...) {
    return;
  }
  for_each_watch(im, [&](detail::FdWaiter** w) {
    watches.push_back(*w);  // reserved: cannot throw
    *w = nullptr;
    --im.parked_io;
  });
  for (detail::FdWaiter* w : watches) w->fire(true);
}

}  // namespace

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
  state_->stopped.reset();  // no Socket reaches the loop from now on
  if (observer_) observer_->closing();  // first: the tasks it would show are about to go
  end_watches(*state_);  // before the tasks: ending a watch may start one (a TLS goodbye)
  destroy_pending_tasks();
  wait_executor_calls();
  default_executor_.reset();  // joins its (now idle) threads
  {
    std::lock_guard lock(state_->ts_mutex);
    state_->ts_closed = true;
  }
  drop_all(state_->take_posted());
  // Pending call_later handles move to the ready queue, which drops them
  // below; any other timer belongs to a frame destroyed above.
  while (!state_->timers.empty()) {
    detail::TimerNode* n = state_->timers.pop();
    if (n->expire == &expire_handle) n->expire(n);
  }
  signals_.reset();
  observer_.reset();
  observed_ = false;
  drop_all(ready.take_all());
  state_->backend->drop_slots();
  while (!failed_tasks.empty()) failed_tasks.back()->detach_from_loop();
  closed = true;
}

}  // namespace corio
