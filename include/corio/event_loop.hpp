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
#include <corio/detail/executor_call.hpp>
#include <corio/detail/loop_core.hpp>
#include <corio/detail/loop_io.hpp>
#include <corio/detail/loop_observer.hpp>
#include <corio/errors.hpp>
#include <corio/exception_context.hpp>
#include <corio/executor.hpp>
#include <corio/handle.hpp>
#include <corio/loop_stats.hpp>
#include <corio/run_options.hpp>
#include <corio/socket.hpp>
#include <corio/source_location.hpp>
#include <corio/stall_detector.hpp>
#include <corio/task.hpp>
#include <corio/threadsafe_hold.hpp>

namespace corio {

namespace detail {
class IoBackend;
class SignalHandlers;
struct BackendChoice;
struct LoopDriver;
struct LoopState;
}

/// The public members are asyncio's loop API. What corio's own awaiters,
/// transports and tasks need besides (timers, fd parking, the cross-thread
/// queue, the ready queue and task registry in LoopCore) is io(), the
/// internal interface of detail/loop_io.hpp: libuv's uv_ / uv__ split.
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
  /// time() as read once in this iteration, just after its poll (the "now"
  /// its expired timers were judged by): up to one run phase old, and free.
  /// For coarse clocks read per request (a deadline in whole milliseconds, a
  /// Date header's second): a clock read each is ~1% of an HTTP server's
  /// CPU. With a virtual clock it is time(), which tests may move at will.
  double pass_time() const noexcept { return virtual_clock_ ? time() : pass_time_; }
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

  /// The internal interface corio's own layers use (detail/loop_io.hpp, a
  /// numbered contract); not part of the API.
  detail::LoopIo& io() noexcept { return io_; }

 private:
  friend struct detail::LoopCore;
  friend struct detail::LoopDriver;  // a simulation's hosts (backend/sim/sim_world.cpp)
  friend class ThreadsafeHold;
  EventLoop(RunOptions opts, detail::BackendChoice chosen);
  Handle post_callback(std::function<void()> fn, bool release_hold);
  bool remove_watch(int fd, bool is_reader);
  void check_open() const;
  void enter_run();
  void leave_run() noexcept;
  void push_handle(detail::CallbackHandle* h) noexcept;
  static void run_handle(detail::ReadyNode* n, detail::ReadyOp op) noexcept;
  static void expire_handle(detail::TimerNode* n) noexcept;
  void run_ready_batch() noexcept;
  void run_ready_batch_debug() noexcept;
  void report_slow(detail::TaskBase* task, double seconds) noexcept;
  void check_thread() const;
  void wait_executor_calls() noexcept;
  double poll_timeout() const;
  void poll_io(double timeout);
  int wait_for_io(double timeout);
  int wait_for_io_observed(double timeout);
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
  bool virtual_clock_ = false;  // clock_->is_virtual(), fixed with the clock
  double pass_time_ = 0;        // pass_time()'s, set by each run_once()
  std::unique_ptr<detail::LoopState> state_;
  detail::IoBackend* backend_ = nullptr;  // state_'s, at hand for socket.cpp
  detail::LoopIo io_;
  ExceptionHandler exception_handler_;
  std::unique_ptr<Executor> default_executor_;
  std::unique_ptr<detail::SignalHandlers> signals_;
  // The debug layer's watch on this loop (detail/loop_observer.hpp), if linked;
  // observed_ caches its watching(), tested on the hot path.
  std::unique_ptr<detail::LoopObserver> observer_;
  bool observed_ = false;
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

template <class F>
Future<std::decay_t<std::invoke_result_t<F&>>> EventLoop::run_in_executor(Executor* executor, F fn) {
  using R = std::decay_t<std::invoke_result_t<F&>>;  // a returned reference is copied out
  check_open();
  Future<R> fut = create_future<R>();
  Executor& ex = executor ? *executor : default_executor();
  ex.submit(std::make_unique<detail::ExecutorCall<F, R>>(io_, fut, std::move(fn)));
  ++executor_calls;  // after submit: the call comes back on this thread, later
  return fut;
}

}  // namespace corio
