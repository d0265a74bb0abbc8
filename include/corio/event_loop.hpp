/// \file
/// corio::EventLoop: one thread, one loop (asyncio's BaseEventLoop).
///
/// Three structures and one rule (DESIGN.md): a FIFO ready queue, a timer
/// min-heap, and a backend (epoll or io_uring) behind a seam of operations. Each
/// iteration runs exactly the callbacks that were ready when its run phase
/// began; work scheduled meanwhile runs in the next iteration.
///
/// Everything is loop-affine except call_soon_threadsafe(), which may be called
/// from any thread and wakes a loop blocked in the poller.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include <corio/clock.hpp>
#include <corio/detail/io_wait.hpp>
#include <corio/detail/loop_core.hpp>
#include <corio/errors.hpp>
#include <corio/executor.hpp>
#include <corio/handle.hpp>
#include <corio/loop_stats.hpp>
#include <corio/socket.hpp>
#include <corio/source_location.hpp>
#include <corio/stall_detector.hpp>
#include <corio/task.hpp>

namespace corio {

namespace detail {
class Backend;
struct FileOp;
class SignalHandlers;
class InspectServer;
class LoopAccess;
class StallDetector;
}

/// What the loop runs on (docs/core-design.md, "Backends"). `io_uring` falls back to epoll when the
/// kernel, its settings or a seccomp profile refuse it (debug mode says why); `best` is epoll until
/// the benchmarks say otherwise. The environment's CORIO_BACKEND=epoll|io_uring|best overrides it.
enum class Backend { best, epoll, io_uring };

/// What the loop does when every task is suspended and nothing can wake any of
/// them (docs/tasks.md, "Deadlocks"): no timer, no watched fd or socket wait,
/// no executor call, no signal handler, no ThreadsafeHold.
enum class OnDeadlock {
  report,  ///< the wait-for graph goes to the exception handler, once; the loop then waits on
  /// run_until_complete() (so corio::run()) throws DeadlockError, main cancelled;
  /// under a bare run_forever(), with no main, as report
  raise,
  ignore,  ///< the loop waits in silence (a program whose threads post without a hold)
};

/// How corio::run() (or an EventLoop) sets up its loop.
struct RunOptions {
  bool debug = false;  ///< also on when the environment has CORIO_DEBUG=1
  /// The poller (see Backend).
  Backend backend = Backend::best;
  std::shared_ptr<Clock> clock;  ///< default: MonotonicClock
  /// Serves `corio ps/pstree/stats PID` (inspect.hpp); also on when the
  /// environment has CORIO_INSPECT=1.
  bool inspect = false;
  OnDeadlock on_deadlock = OnDeadlock::report;  ///< see OnDeadlock
  /// The stall detector (stall_detector.hpp): off unless enabled here or by CORIO_STALL_MS.
  StallOptions stall{};  // an initializer, or g++ warns of designated inits that leave it out
};

/// A promise that some other thread will call call_soon_threadsafe() on a
/// loop later (EventLoop::hold_threadsafe): while it lives, the loop's
/// deadlock check counts it as something that can wake a task. Usable and
/// destroyable from any thread; letting go of it wakes the loop so that it
/// checks again. The loop must outlive it: end it with post_and_release().
class ThreadsafeHold {
 public:
  ThreadsafeHold() noexcept = default;
  /// Takes o's hold (o holds nothing after).
  ThreadsafeHold(ThreadsafeHold&& o) noexcept : loop_(std::exchange(o.loop_, nullptr)) {}
  /// Lets go of this hold (as reset()) and takes o's.
  ThreadsafeHold& operator=(ThreadsafeHold&& o) noexcept {
    if (this != &o) {
      reset();
      loop_ = std::exchange(o.loop_, nullptr);
    }
    return *this;
  }
  ~ThreadsafeHold() { reset(); }
  /// Lets go of the hold now.
  void reset() noexcept;
  /// call_soon_threadsafe(fn) and reset() in one step, for the last post: fn
  /// may end the loop's work, and after a separate post the loop could be
  /// gone before reset() touched it. Throws RuntimeError if the hold is empty
  /// or the loop closed (the hold is let go of either way).
  Handle post_and_release(std::function<void()> fn);

 private:
  friend class EventLoop;
  explicit ThreadsafeHold(EventLoop* loop) noexcept : loop_(loop) {}
  EventLoop* loop_ = nullptr;
};

/// What the loop's exception handler is told about a problem to report.
struct ExceptionContext {
  /// What happened ("Task exception was never retrieved", ...).
  std::string message;
  /// The exception involved, if any.
  std::exception_ptr exception;
  /// The task concerned, if any.
  std::optional<TaskRef> task;
};

/// Called by the loop for each problem it reports (set_exception_handler).
using ExceptionHandler = std::function<void(EventLoop&, const ExceptionContext&)>;

/// The public members are asyncio's loop API. What corio's own awaiters,
/// transports and tasks need besides (timers, fd parking, the cross-thread
/// queue, the ready queue and task registry in LoopCore) is private and
/// reached through detail::LoopAccess: libuv's uv_ / uv__ split.
class EventLoop : private detail::LoopCore {
 public:
  /// A loop with the default options.
  EventLoop();
  /// A loop with these options (debug mode, backend, clock).
  explicit EventLoop(RunOptions opts);
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  ~EventLoop();

  /// Runs the loop until the awaitable is done; returns its result or throws
  /// its exception. A Coro is wrapped in a task first.
  template <class T>
  T run_until_complete(Coro<T> coro,
                       SourceLocation where = SourceLocation::current()) {
    return run_until_complete(Future<T>(create_task(std::move(coro), {}, where)));
  }
  /// Runs the loop until task is done; its result, or it throws its exception.
  template <class T>
  T run_until_complete(Task<T> task) {
    return run_until_complete(Future<T>(std::move(task)));
  }
  /// Runs the loop until fut is done; its result, or it throws its exception.
  template <class T>
  T run_until_complete(Future<T> fut);

  /// Runs iterations until stop().
  void run_forever();
  /// Ends run_forever() after the current iteration's batch.
  void stop() noexcept { stopping_ = true; }
  /// Destroys pending tasks (reporting each), drops queued callbacks, closes
  /// the poller. The loop must not be running.
  void close();
  /// Whether the loop is running now.
  bool is_running() const noexcept { return running_; }
  /// Whether close() was called.
  bool is_closed() const noexcept { return closed; }
  /// One iteration: poll, queue I/O and expired timers, run the ready batch.
  void run_once();

  /// The loop's time in seconds on a monotonic scale (asyncio's loop.time()).
  double time() const;
  /// The clock time() reads.
  Clock& clock() const noexcept { return *clock_; }

  /// Schedules fn for the next iteration (callbacks run in FIFO order).
  Handle call_soon(std::function<void()> fn);
  /// Schedules fn to run once delay has passed.
  template <class Rep, class Period>
  TimerHandle call_later(std::chrono::duration<Rep, Period> delay, std::function<void()> fn) {
    return call_at(time() + std::chrono::duration<double>(delay).count(), std::move(fn));
  }
  /// Schedules fn to run at time() == when.
  TimerHandle call_at(double when, std::function<void()> fn);
  /// The one entry point callable from any thread.
  Handle call_soon_threadsafe(std::function<void()> fn);
  /// For a thread that will call call_soon_threadsafe() later: see ThreadsafeHold.
  /// (run_in_executor calls are counted without one.)
  ThreadsafeHold hold_threadsafe();

  /// A pending Future on this loop.
  template <class T = void>
  Future<T> create_future() {
    return Future<T>(detail::Ref<detail::FutureStateBase>(new detail::FutureState<T>(this)));
  }
  /// In debug mode the task remembers `where` for its reports.
  template <class T>
  Task<T> create_task(Coro<T> coro, std::string name = {},
                      SourceLocation where = SourceLocation::current());
  /// create_task(fn, args...): the task calls fn(args...) and owns fn and the
  /// args for its whole life, so a lambda's captures stay valid.
  template <class F, class... Args>
  requires detail::CoroCallable<F, Args...>
  Task<detail::callable_result_t<F, Args...>> create_task(F&& fn, Args&&... args) {
    return create_task(detail::invoke_owned<detail::callable_result_t<F, Args...>>(
        std::forward<F>(fn), std::forward<Args>(args)...));
  }

  /// Runs fn() on a worker thread of `executor` (nullptr: the loop's default
  /// pool) and returns a Future for its result or exception, completed on
  /// this loop. Cancelling the Future does not stop fn; its result is then
  /// dropped. close() waits for every call to come back.
  template <class F>
  Future<std::decay_t<std::invoke_result_t<F&>>> run_in_executor(Executor* executor, F fn);
  /// The pool run_in_executor(nullptr, ...) and to_thread use; created on
  /// first use, shut down by close().
  Executor& default_executor();
  /// Makes executor the pool of run_in_executor(nullptr, ...) and to_thread.
  void set_default_executor(std::unique_ptr<Executor> executor);

  /// Level-triggered readiness callbacks, as asyncio's add_reader/add_writer.
  void add_reader(int fd, std::function<void()> fn);
  /// Stops watching fd for reading; false if it was not watched.
  bool remove_reader(int fd);
  /// Calls fn in each iteration while fd is writable (level-triggered).
  void add_writer(int fd, std::function<void()> fn);
  /// Stops watching fd for writing; false if it was not watched.
  bool remove_writer(int fd);

  /// Socket operations, as asyncio's loop.sock_*: each tries its syscall at
  /// once and waits for readiness only when it would block (edge-triggered,
  /// registered once per socket). The socket and the buffers must outlive the
  /// await. OS errors are std::system_error with the errno; sends never raise
  /// SIGPIPE (EPIPE instead). Two tasks waiting to read (or to write) the same
  /// socket at once is a RuntimeError.
  Coro<std::string> sock_recv(Socket& sock, std::size_t max_bytes);  ///< "" at EOF
  /// Receives into buf; returns how many bytes came (0 at EOF).
  Coro<std::size_t> sock_recv_into(Socket& sock, std::span<char> buf);
  /// Sends all of data.
  Coro<void> sock_sendall(Socket& sock, std::string_view data);
  /// Accepts a connection: its socket and the peer's address.
  Coro<std::pair<Socket, SocketAddress>> sock_accept(Socket& sock);
  /// sock_accept returning the errno (0: *out is set) instead of throwing: a
  /// server's accept loop runs while the process may be out of fds, where
  /// even inspecting an exception can fail under sanitizers.
  Coro<int> sock_accept_or_errno(Socket& sock, std::pair<Socket, SocketAddress>* out);
  /// Connects sock to addr.
  Coro<void> sock_connect(Socket& sock, SocketAddress addr);
  /// Receives one datagram (at most max_bytes) and its sender's address.
  Coro<std::pair<std::string, SocketAddress>> sock_recvfrom(Socket& sock, std::size_t max_bytes);
  /// Sends one datagram to addr; returns the bytes sent.
  Coro<std::size_t> sock_sendto(Socket& sock, std::string_view data, SocketAddress addr);
  /// The wait under those operations, for code making its own syscalls
  /// (streams): use only after the syscall failed with EAGAIN.
  detail::IoWait wait_readable(Socket& sock);
  /// The same wait, for writing.
  detail::IoWait wait_writable(Socket& sock);

  /// Unix signals, as asyncio's: fn runs on the loop as an ordinary callback
  /// (through a signalfd, so the signal is blocked in this thread while a
  /// handler is set). Throws ValueError for a signal that cannot be caught.
  void add_signal_handler(int signo, std::function<void()> fn);
  /// Removes signo's handler; false if there was none.
  bool remove_signal_handler(int signo);

  /// Debug mode (asyncio's): reports callbacks and task steps that run longer
  /// than slow_callback_duration, remembers where tasks were created, and
  /// throws RuntimeError when call_soon, call_at or create_task is called
  /// from a thread other than the one running the loop.
  void set_debug(bool enabled) noexcept { debug_ = enabled; }
  /// Whether debug mode is on.
  bool get_debug() const noexcept { return debug_; }
  double slow_callback_duration = 0.1;  ///< seconds; reported in debug mode
  OnDeadlock on_deadlock = OnDeadlock::report;  ///< from RunOptions; see OnDeadlock

  /// Starts, restarts or (opts.enabled false) stops the stall detector
  /// (stall_detector.hpp), whatever CORIO_STALL_MS says.
  void set_stall_detector(StallOptions opts);
  /// The stall detector's options now (enabled false when it is off).
  StallOptions stall_detector() const;

  /// Replaces the handler of reported problems (an empty one: the default again).
  void set_exception_handler(ExceptionHandler handler);
  /// Reports context through the handler (the default one if none is set).
  void call_exception_handler(const ExceptionContext& context) noexcept;
  /// The default handler: prints context to stderr.
  void default_exception_handler(const ExceptionContext& context) noexcept;
  /// What the default handler prints, usable without a loop.
  static void report_to_stderr(const ExceptionContext& context) noexcept;

  /// The backend in use ("epoll", "io_uring").
  const char* backend_name() const noexcept;

  /// A snapshot of the loop's counters and lag percentiles (loop_stats.hpp).
  LoopStats stats() const;

 private:
  friend class detail::LoopAccess;
  friend struct detail::LoopCore;
  friend class ThreadsafeHold;
  struct Impl;
  // What call_soon_threadsafe queues, without allocating: a node that owns
  // itself. False (node untouched) once the loop is closed.
  bool post_threadsafe(detail::ReadyNode* node, bool release_hold = false);
  Handle post_callback(std::function<void()> fn, bool release_hold);
  bool remove_watch(int fd, bool is_reader);
  // Backend hooks for IoWait and Socket (the operations themselves are the
  // backend's: socket.cpp calls it directly).
  void attach_fd(int fd);
  void detach_fd(int fd) noexcept;
  void park_io(detail::IoWait* w);
  void unpark_io(detail::IoWait* w) noexcept;
  // A native file request (backend.hpp's submit_file), counted while in the
  // backend: it can wake a task (the deadlock check) and a busy loop must
  // still poll for it. file_op_done() is the caller's, from op.complete().
  bool submit_file(detail::FileOp& op);
  void file_op_done() noexcept;
  // What a transport's try_write() sends without waiting: 0 when nothing could go.
  std::size_t try_send(Socket& sock, std::string_view data);
  std::size_t unsent(const Socket& sock) const noexcept;  // the backend's; see backend.hpp
  // What a transport's try_read() receives without waiting: nullopt when
  // nothing has come (wait_readable(sock), then try again); 0 at EOF.
  std::optional<std::size_t> try_recv_into(Socket& sock, std::span<char> buf);
  void shutdown(Socket& sock, int how);
  // Receives without a copy where the backend lends its buffers (io_uring;
  // backend.hpp): lends_recv() says whether it does on sock; then
  // try_recv_lent() returns the bytes in place ("" at EOF), valid until
  // consume_lent() takes some, in the same step, or nullopt when none have
  // come (wait_readable(sock), then try again). Not a coroutine: a reader
  // that waits adds its own frame only, not one per layer.
  bool lends_recv(Socket& sock);
  std::optional<std::string_view> try_recv_lent(Socket& sock);
  void consume_lent(Socket& sock, std::size_t n) noexcept;
  // Timer heap access for awaiters that embed their TimerNode.
  void add_timer(detail::TimerNode* node, double when);
  void remove_timer(detail::TimerNode* node) noexcept;
  void check_open() const;
  void enter_run();
  void leave_run() noexcept;
  void push_handle(detail::CallbackHandle* h) noexcept;
  static void run_handle(detail::ReadyNode* n, detail::ReadyOp op) noexcept;
  static void expire_handle(detail::TimerNode* n) noexcept;
  void run_ready_batch() noexcept;
  void run_ready_batch_debug() noexcept;
  void report_slow(detail::TaskBase* task, double seconds) noexcept;
  void report_stall(detail::TaskBase* task) noexcept;
  detail::TaskBase* pending_task(const detail::TaskBase* t, std::uint32_t id) const noexcept;
  void check_thread() const;
  void wait_executor_calls() noexcept;
  double poll_timeout() const;
  void poll_io(double timeout);
  int wait_for_io(double timeout);
  int wait_for_io_watched(double timeout);
  void queue_expired_timers();
  void destroy_pending_tasks() noexcept;
  // Deadlock detection (deadlock.cpp), only when the loop would block with no
  // timer and tasks are pending: whether anything but a task could still wake
  // a task, and the check, which returns the poll timeout after it.
  bool can_wake() const noexcept;
  std::size_t io_watchers() const noexcept;  // fds, socket and file waits, signal handlers
  double check_deadlock();
  void report_deadlock() noexcept;
  void note_foreign_post() noexcept;
  // run_forever() on behalf of run_until_complete(main): raise mode fails main.
  void run_forever_for(detail::FutureStateBase* main);
  void rethrow_deadlock(detail::FutureStateBase* main);

  std::shared_ptr<Clock> clock_;
  std::unique_ptr<Impl> impl_;
  detail::Backend* backend_ = nullptr;  // impl_'s, at hand for socket.cpp
  ExceptionHandler exception_handler_;
  std::unique_ptr<Executor> default_executor_;
  std::unique_ptr<detail::SignalHandlers> signals_;
  std::unique_ptr<detail::InspectServer> inspect_;
  std::unique_ptr<detail::StallDetector> stall_;  // none while off
  // The thread running the loop (none when stopped), for debug mode's check.
  std::atomic<std::thread::id> owner_thread_{};
  unsigned busy_iterations_ = 0;
  // stats()'s own counters; the rest it reads off the structures themselves.
  std::uint64_t iterations_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t slow_steps_ = 0;
  // The future run_until_complete waits for, the DeadlockError raise mode
  // failed it with, and the ids of the stuck tasks last reported (once each).
  detail::FutureStateBase* main_ = nullptr;
  std::exception_ptr deadlock_error_;
  std::vector<std::uint32_t> deadlock_reported_;
  bool running_ = false;
  bool stopping_ = false;
  bool debug_ = false;
};

inline EventLoop& detail::LoopCore::loop() noexcept { return static_cast<EventLoop&>(*this); }

namespace detail {

// The loop's internals, for corio's own awaiters, transports and tasks only
// (see EventLoop). Each is the private member of the same name.
class LoopAccess {
 public:
  static LoopCore& core(EventLoop& loop) noexcept { return loop; }
  static void add_timer(EventLoop& loop, TimerNode* node, double when) {
    loop.add_timer(node, when);
  }
  static void remove_timer(EventLoop& loop, TimerNode* node) noexcept { loop.remove_timer(node); }
  static bool post_threadsafe(EventLoop& loop, ReadyNode* node) {
    return loop.post_threadsafe(node);
  }
  static void attach_fd(EventLoop& loop, int fd) { loop.attach_fd(fd); }
  static void detach_fd(EventLoop& loop, int fd) noexcept { loop.detach_fd(fd); }
  static std::size_t try_send(EventLoop& loop, Socket& sock, std::string_view data) {
    return loop.try_send(sock, data);
  }
  static void shutdown(EventLoop& loop, Socket& sock, int how) { loop.shutdown(sock, how); }
  static std::optional<std::size_t> try_recv_into(EventLoop& loop, Socket& sock,
                                                  std::span<char> buf) {
    return loop.try_recv_into(sock, buf);
  }
  static bool lends_recv(EventLoop& loop, Socket& sock) { return loop.lends_recv(sock); }
  static std::optional<std::string_view> try_recv_lent(EventLoop& loop, Socket& sock) {
    return loop.try_recv_lent(sock);
  }
  static void consume_lent(EventLoop& loop, Socket& sock, std::size_t n) noexcept {
    loop.consume_lent(sock, n);
  }
  static std::size_t unsent(const EventLoop& loop, const Socket& sock) noexcept {
    return loop.unsent(sock);
  }
  static void park_io(EventLoop& loop, IoWait* w) { loop.park_io(w); }
  static void unpark_io(EventLoop& loop, IoWait* w) noexcept { loop.unpark_io(w); }
  static bool submit_file(EventLoop& loop, FileOp& op) { return loop.submit_file(op); }
  static void file_op_done(EventLoop& loop) noexcept { loop.file_op_done(); }
  // A watcher of the runtime's own (its signalfd, run()'s SIGINT handler, an
  // inspection socket) cannot wake a task by itself: the deadlock check
  // subtracts these from the fds and signal handlers it counts.
  static void add_internal_watcher(EventLoop& loop) noexcept { ++loop.internal_watchers; }
  static void remove_internal_watcher(EventLoop& loop) noexcept { --loop.internal_watchers; }
};

}  // namespace detail

namespace detail {
inline constinit thread_local EventLoop* tls_running_loop = nullptr;

}  // namespace detail

/// The loop running in this thread; throws RuntimeError if there is none.
EventLoop& get_running_loop();

template <class T>
T EventLoop::run_until_complete(Future<T> fut) {
  check_open();
  if (!fut.done()) {
    struct StopWhenDone : detail::Callback {
      EventLoop* loop;
    } stopper;
    stopper.loop = this;
    stopper.fire = [](detail::Callback* cb, detail::FutureStateBase&) noexcept {
      static_cast<StopWhenDone*>(cb)->loop->stop();
    };
    fut.state()->add_callback(&stopper);
    run_forever_for(fut.state());
    if (!fut.done()) throw RuntimeError("Event loop stopped before Future completed.");
  }
  detail::FutureStateBase* s = fut.state();
  rethrow_deadlock(s);
  return detail::take_result<T>(s, true);
}

template <class T>
Task<T> EventLoop::create_task(Coro<T> coro, std::string name, SourceLocation where) {
  check_open();
  if (debug_) [[unlikely]]
    check_thread();
  if (!coro.valid()) throw ValueError("create_task() needs a coroutine that has not run");
  auto root = coro.release();
  detail::TaskState<T>* st;
  try {
    st = new detail::TaskState<T>(this, root);
  } catch (...) {
    root.destroy();
    throw;
  }
  Task<T> task(detail::Ref<detail::FutureStateBase>(static_cast<detail::TaskBase*>(st)));
  if (!name.empty()) st->set_name(std::move(name));
  if (debug_) [[unlikely]]
    st->set_created_at(where);
  st->wake();
  return task;
}

template <class T>
Task<T> create_task(Coro<T> coro, std::string name, SourceLocation where) {
  return get_running_loop().create_task(std::move(coro), std::move(name), where);
}

template <class F, class... Args>
requires detail::CoroCallable<F, Args...>
Task<detail::callable_result_t<F, Args...>> create_task(F&& fn, Args&&... args) {
  return get_running_loop().create_task(std::forward<F>(fn), std::forward<Args>(args)...);
}

namespace detail {

// One run_in_executor call. It runs on a worker thread, then travels back to
// its loop as a ready node (post_threadsafe: no allocation, cannot fail),
// where it completes the Future. Future references are not atomic, so the
// Future is only touched on the loop thread.
template <class F, class R>
class ExecutorCall final : public ExecutorJob, public ReadyNode {
 public:
  ExecutorCall(EventLoop* loop, Future<R> fut, F fn)
      : loop_(loop), fut_(std::move(fut)), fn_(std::move(fn)) {
    ReadyNode::fn = &on_ready;
  }

  void run(std::unique_ptr<ExecutorJob> self) noexcept override {
    try {
      if constexpr (std::is_void_v<R>) {
        fn_();
      } else {
        result_.emplace(fn_());
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    // From here the call owns itself. Posting cannot fail: close() waits for
    // every call before it closes the queue.
    self.release();
    LoopAccess::post_threadsafe(*loop_, this);
  }

 private:
  // Runs on the loop thread, or is dropped by close(): either way the call
  // ends here, and the Future keeps whatever state it has (a cancelled
  // Future ignores the late result).
  static void on_ready(ReadyNode* n, ReadyOp op) noexcept {
    std::unique_ptr<ExecutorCall> self(static_cast<ExecutorCall*>(n));
    --LoopAccess::core(*self->loop_).executor_calls;
    if (op != ReadyOp::run || self->fut_.done()) return;
    if (self->error_) {
      self->fut_.set_exception(self->error_);
    } else if constexpr (std::is_void_v<R>) {
      self->fut_.set_result();
    } else {
      self->fut_.set_result(std::move(*self->result_));
    }
  }

  EventLoop* loop_;
  Future<R> fut_;
  F fn_;
  std::optional<std::conditional_t<std::is_void_v<R>, char, R>> result_;
  std::exception_ptr error_;
};

}  // namespace detail

template <class F>
Future<std::decay_t<std::invoke_result_t<F&>>> EventLoop::run_in_executor(Executor* executor, F fn) {
  using R = std::decay_t<std::invoke_result_t<F&>>;  // a returned reference is copied out
  check_open();
  Future<R> fut = create_future<R>();
  Executor& ex = executor ? *executor : default_executor();
  ex.submit(std::make_unique<detail::ExecutorCall<F, R>>(this, fut, std::move(fn)));
  ++executor_calls;  // after submit: the call comes back on this thread, later
  return fut;
}

}  // namespace corio
