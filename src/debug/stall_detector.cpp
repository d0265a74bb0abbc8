// The stall detector (stall_detector.hpp): the watchdog thread, the SIGURG
// handler and the hand-over of a caught stall between them and the loop.
//
// The handler calls only backtrace(), atomics and plain stores. backtrace()
// is safe there once libgcc's unwinder is loaded (install_handler() calls it
// once for that) and because glibc 2.35+ finds unwind tables without taking
// the loader lock (_dl_find_object), so a stall caught inside dlopen or while
// an exception unwinds cannot deadlock.
#include "stall_detector.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <execinfo.h>
#include <unistd.h>

#include <fmt/format.h>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

namespace corio::detail {

using namespace std::chrono_literals;

namespace {

// SIGURG: ignored by default, so a stray one harms nobody, and SA_RESTART
// keeps a syscall the stalled step is blocked in from failing with EINTR.
constexpr int kSignal = SIGURG;
// backtrace() from capture(): capture, on_signal, the kernel's signal
// trampoline, then the interrupted code.
constexpr int kHandlerFrames = 3;

struct sigaction g_previous_action;

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// "binary(_Z3foov+0x1f) [0x...]" with the symbol demangled.
std::string demangled(const char* line) {
  std::string s = line;
  const auto open = s.find('(');
  const auto plus = s.find('+', open);
  if (open == std::string::npos || plus == std::string::npos || plus == open + 1) return s;
  const std::string mangled = s.substr(open + 1, plus - open - 1);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !name) return s;
  return s.substr(0, open + 1) + name.get() + s.substr(plus);
}

// CORIO_STALL_MS=N: on with N ms, off for 0; anything else is ignored, said once.
void apply_environment(StallOptions& opts) {
  const char* v = std::getenv("CORIO_STALL_MS");
  if (!v || !*v) return;
  char* end = nullptr;
  errno = 0;
  const long ms = std::strtol(v, &end, 10);
  if (*end != '\0' || errno != 0 || ms < 0) {
    static std::once_flag warned;
    std::call_once(warned, [v] {
      std::fprintf(stderr, "corio: ignoring CORIO_STALL_MS=%s (not a number of milliseconds)\n", v);
    });
    return;
  }
  opts.enabled = ms > 0;
  if (ms > 0) opts.threshold = std::chrono::milliseconds(ms);
}

}  // namespace

std::unique_ptr<StallDetector> StallDetector::create(StallOptions opts,
                                                     const std::atomic<TaskBase*>& running_task,
                                                     bool from_environment) {
  if (from_environment) apply_environment(opts);
  if (!opts.enabled) return nullptr;
  if (opts.threshold <= 0ms) throw ValueError("the stall threshold must be positive");
  return std::make_unique<StallDetector>(opts, running_task);
}

StallDetector::StallDetector(StallOptions opts, const std::atomic<TaskBase*>& running_task)
    : opts_(opts), running_task_(running_task) {
  install_handler();
  watchdog_ = std::thread([this] { watch(); });
}

StallDetector::~StallDetector() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wakeup_.notify_one();
  // A signal already sent reaches this (the loop) thread before join returns.
  watchdog_.join();
}

void StallDetector::install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    void* warm[4];
    backtrace(warm, 4);  // loads the unwinder here: dlopen is not safe in a handler
    struct sigaction sa {};
    sa.sa_sigaction = &StallDetector::on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(kSignal, &sa, &g_previous_action);
  });
}

// ---- the loop thread --------------------------------------------------------

void StallDetector::running(bool on) noexcept {
  if (on) loop_thread_.store(pthread_self(), std::memory_order_relaxed);
  idle(!on);
}

void StallDetector::idle(bool on) noexcept {
  if (on) {
    state_.store(kIdle, std::memory_order_release);
    return;
  }
  mark_progress();  // back from the poller is progress, whatever runs next
  if (state_.exchange(kBusy, std::memory_order_acq_rel) == kParked) {
    std::lock_guard lock(mutex_);  // the watchdog is in wait() or about to be
    wakeup_.notify_one();
  }
}

std::optional<StallDetector::Caught> StallDetector::finish_caught_step() noexcept {
  std::optional<Caught> out;
  int p = phase_.load(std::memory_order_acquire);
  if ((p == kCaptured || p == kRequested) &&
      phase_.compare_exchange_strong(p, kReporting, std::memory_order_acq_rel)) {
    try {
      const SteadyClock::time_point until{
          SteadyClock::duration(still_running_at_.load(std::memory_order_relaxed))};
      out.emplace(Caught{seconds(until - since_), suppressed_,
                         p == kCaptured ? native_stack()
                                        : "\n+ Native stack: not caught (the step ended first)",
                         p == kCaptured ? task_ : nullptr, p == kCaptured ? task_id_ : 0});
    } catch (...) {  // out of memory: this report is lost, the detector goes on
    }
  } else {
    // The watchdog is reporting the step: it reads the buffer until kReported.
    while (phase_.load(std::memory_order_acquire) == kReporting) std::this_thread::yield();
  }
  phase_.store(kNone, std::memory_order_release);
  return out;
}

// ---- the signal handler (the loop thread, async-signal-safe) ---------------

void StallDetector::on_signal(int signo, siginfo_t* info, void* context) {
  if (info->si_code == SI_QUEUE && info->si_pid == getpid()) {
    auto* d = static_cast<StallDetector*>(info->si_value.sival_ptr);
    if (d && d->magic_ == kMagic) {
      d->capture();
      return;
    }
  }
  const struct sigaction& prev = g_previous_action;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(signo, info, context);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(signo);
  }
}

void StallDetector::capture() noexcept {
  if (phase_.load(std::memory_order_acquire) != kRequested) return;  // the step ended first
  const int saved_errno = errno;
  depth_ = backtrace(frames_, kMaxFrames);
  TaskBase* t = running_task_.load(std::memory_order_relaxed);
  task_ = t;
  task_id_ = t ? t->id() : 0;
  int expected = kRequested;
  phase_.compare_exchange_strong(expected, kCaptured, std::memory_order_acq_rel);
  errno = saved_errno;
}

// ---- the watchdog thread ----------------------------------------------------

// Progress is a new batch (or wake-up) or another running task: a task
// runs at most once per batch, so the same task at two looks in one batch
// is one step running all along. No task at two looks is one callback, or
// callbacks in a row (with maybe a short task step between): those are
// judged together.
void StallDetector::watch() {
  const auto period = std::max<SteadyClock::duration>(opts_.threshold / 4, 1ms);
  const auto unfinished_after = opts_.threshold * 20;
  std::unique_lock lock(mutex_);
  Progress seen = progress();
  SteadyClock::time_point since = SteadyClock::now();
  bool caught = false;     // this stretch without progress is a stall
  bool reporting = false;  // and the one whose report is under way (not suppressed)
  while (!stop_) {
    if (state_.load(std::memory_order_acquire) != kBusy) {
      park(lock);
      seen = progress();
      since = SteadyClock::now();
      caught = reporting = false;
      continue;
    }
    wakeup_.wait_for(lock, period);
    if (stop_ || state_.load(std::memory_order_acquire) != kBusy) continue;
    const SteadyClock::time_point now = SteadyClock::now();
    const Progress p = progress();
    if (p != seen) {
      seen = p;
      since = now;
      caught = reporting = false;
    } else if (!caught && now - since >= opts_.threshold) {
      caught = true;
      reporting = catch_stall(since, now);
    } else if (reporting) {
      still_running_at_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
      if (now - since >= unfinished_after) report_unfinished_step();
    }
  }
}

// Sleeps until the loop is busy again (or the detector stops). Parking only
// at a periodic look bounds the loop's wake-up calls to one per period.
void StallDetector::park(std::unique_lock<std::mutex>& lock) {
  int expected = kIdle;
  if (!state_.compare_exchange_strong(expected, kParked, std::memory_order_acq_rel)) return;
  wakeup_.wait(lock, [this] { return stop_ || state_.load(std::memory_order_acquire) != kParked; });
}

bool StallDetector::catch_stall(SteadyClock::time_point since, SteadyClock::time_point now) {
  stalls_.fetch_add(1, std::memory_order_relaxed);
  const bool reported_lately =
      last_report_ != SteadyClock::time_point{} && now - last_report_ < opts_.report_interval;
  // Not kNone: the last caught step is still being reported (its fields are
  // in use); count this one as suppressed too.
  if (reported_lately || phase_.load(std::memory_order_acquire) != kNone) {
    ++unreported_;
    return false;
  }
  last_report_ = now;
  since_ = since;
  still_running_at_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  suppressed_ = std::exchange(unreported_, 0);
  phase_.store(kRequested, std::memory_order_release);
  sigval value{};
  value.sival_ptr = this;
  pthread_sigqueue(loop_thread_.load(std::memory_order_relaxed), kSignal, value);
  return true;
}

// The step has not ended long after it was caught: the loop will not report
// it soon, so the watchdog does, to stderr (the exception handler is the
// loop thread's). The task is named by id only: its name and frames belong
// to the running step.
void StallDetector::report_unfinished_step() {
  int p = phase_.load(std::memory_order_acquire);
  if ((p != kCaptured && p != kRequested) ||
      !phase_.compare_exchange_strong(p, kReporting, std::memory_order_acq_rel)) {
    return;
  }
  try {
    const std::string who = p != kCaptured ? "A callback or task step"
                            : task_id_     ? fmt::format("Task id={}", task_id_)
                                           : std::string("A callback");
    EventLoop::report_to_stderr(
        {fmt::format("Stall: {} has run for {:.3f} s and has not ended (stall threshold {:.3f} s)"
                     "{}",
                     who, seconds(SteadyClock::now() - since_),
                     std::chrono::duration<double>(opts_.threshold).count(),
                     p == kCaptured ? native_stack() : "\n+ Native stack: not caught"),
         nullptr, std::nullopt});
  } catch (...) {  // out of memory: the report is lost, not the process
  }
  phase_.store(kReported, std::memory_order_release);
}

std::string StallDetector::native_stack() const {
  std::string out = "\n+ Native stack of the loop thread when the stall was caught:";
  const int n = depth_ - kHandlerFrames;
  if (n <= 0) return out + "\n|   (empty)";
  std::unique_ptr<char*, decltype(&std::free)> names(backtrace_symbols(frames_ + kHandlerFrames, n),
                                                     &std::free);
  for (int i = 0; i < n; ++i) {
    out += fmt::format("\n|   #{} {}", i,
                       names ? demangled(names.get()[i]) : fmt::format("{}", frames_[kHandlerFrames + i]));
  }
  return out;
}

}  // namespace corio::detail
