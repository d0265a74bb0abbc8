// The stall detector's machinery (see corio/stall_detector.hpp for what it
// does). One per loop that enables it; the loop calls the inline members on
// its own thread, the watchdog thread runs watch(), and the SIGURG handler
// runs on the loop thread between any two instructions.
//
// A caught stall moves through `phase_`, each move a CAS so that exactly one
// of the loop, the handler and the watchdog acts on it:
//   none -> requested (watchdog, then it signals)
//        -> captured  (handler: native stack and task id in the buffer)
//        -> reporting (loop at the end of the batch, or watchdog past the
//                      step's deadline; `requested` may go there too when the
//                      step ended before the signal came: no native stack)
//        -> none      (the loop, once the batch is over and nobody reads the
//                      buffer any more)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <csignal>
#include <pthread.h>

#include <corio/stall_detector.hpp>

#include <corio/detail/runtime_threads.hpp>

namespace corio::detail {

class TaskBase;

class StallDetector {
 public:
  // A detector for opts (after the environment's say, CORIO_STALL_MS, if
  // from_environment); nullptr when off.
  static std::unique_ptr<StallDetector> create(StallOptions opts,
                                               const std::atomic<TaskBase*>& running_task,
                                               bool from_environment);
  StallDetector(StallOptions opts, const std::atomic<TaskBase*>& running_task);
  StallDetector(const StallDetector&) = delete;
  StallDetector& operator=(const StallDetector&) = delete;
  ~StallDetector();  // stops and joins the watchdog

  const StallOptions& options() const noexcept { return opts_; }
  std::uint64_t stalls() const noexcept { return stalls_.load(std::memory_order_relaxed); }

  // ---- the loop thread ----
  // Progress for the watchdog: before each ready batch, before each step in
  // debug mode, and back from the poller. Within
  // a batch the watchdog sees progress in running_task, which each task step
  // sets anyway (watch()).
  void mark_progress() noexcept {
    seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  bool caught() const noexcept { return phase_.load(std::memory_order_relaxed) != kNone; }
  // The loop starts or stops running on this thread (enter_run, leave_run).
  void running(bool on) noexcept;
  // The loop blocks in the poller (true) or is back from it (false).
  void idle(bool on) noexcept;
  // What the loop's report of a caught step says besides the task.
  struct Caught {
    double seconds;               // how long the step (or run of callbacks) ran, at least
    std::uint64_t suppressed;     // stalls not reported since the last report
    std::string native_stack;     // "\n+ Native stack ...", one frame a line
    // The task whose step the handler caught (null: a callback, or the step
    // ended before the signal came). Maybe gone by now: only compared.
    const TaskBase* task = nullptr;
    std::uint32_t task_id = 0;
  };
  // After a batch (or a debug-mode step) for which caught(): what to report,
  // or nullopt if the watchdog has reported it already. Ready for the next
  // stall afterwards.
  std::optional<Caught> finish_caught_step() noexcept;

 private:
  enum State : int { kBusy, kIdle, kParked };
  enum Phase : int { kNone, kRequested, kCaptured, kReporting, kReported };
  static constexpr int kMaxFrames = 64;
  static constexpr std::uint32_t kMagic = 0x57a11u;  // "is this si_value pointer ours?"
  using SteadyClock = std::chrono::steady_clock;

  static void install_handler();
  [[gnu::noinline]] static void on_signal(int signo, siginfo_t* info, void* context);
  [[gnu::noinline]] void capture() noexcept;  // in the signal handler
  // What the watchdog compares between two looks.
  struct Progress {
    std::uint64_t seq;
    const TaskBase* task;
    bool operator==(const Progress&) const = default;
  };
  Progress progress() const noexcept {
    return {seq_.load(std::memory_order_relaxed), running_task_.load(std::memory_order_relaxed)};
  }
  void watch();
  void park(std::unique_lock<std::mutex>& lock);
  // Whether this stall's report is under way (false: suppressed).
  bool catch_stall(SteadyClock::time_point since, SteadyClock::time_point now);
  void report_unfinished_step();
  std::string native_stack() const;

  const StallOptions opts_;
  const std::atomic<TaskBase*>& running_task_;
  const std::uint32_t magic_ = kMagic;

  // Shared between the loop thread and the watchdog.
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<int> state_{kIdle};
  std::atomic<int> phase_{kNone};
  std::atomic<pthread_t> loop_thread_{};
  std::atomic<std::uint64_t> stalls_{0};
  std::mutex mutex_;  // for parking and stopping only
  std::condition_variable wakeup_;
  bool stop_ = false;

  // A caught stall, written before phase_ leaves kNone (watchdog) or
  // reaches kCaptured (handler), read by whoever moves it to kReporting.
  SteadyClock::time_point since_{};  // the step began no later than this
  // The watchdog's last look that found the caught step still running:
  // since_ to this is how long it ran, at least (the loop reports after the
  // batch, which may have gone on after the step). Updated while it is read.
  std::atomic<SteadyClock::rep> still_running_at_{0};
  std::uint64_t suppressed_ = 0;     // stalls not reported since the last report
  void* frames_[kMaxFrames] = {};
  int depth_ = 0;
  const TaskBase* task_ = nullptr;  // null: a callback, not a task step
  std::uint32_t task_id_ = 0;

  // The watchdog's own.
  SteadyClock::time_point last_report_{};
  std::uint64_t unreported_ = 0;

  // The watchdog is corio's, not a thread that could post to the loop: the
  // deadlock check discounts it from before it starts until it is joined.
  RuntimeThread counted_;
  std::thread watchdog_;
};

}  // namespace corio::detail
