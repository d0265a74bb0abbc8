/// \file
/// corio::StallOptions: the stall detector, cheap enough to stay on in
/// production (Seastar's reactor stall reports).
///
/// When one task step, or one callback or several in a row (callbacks run
/// with no task, so they are judged together), runs past `threshold`, the
/// loop reports the task (name, id), where its step ended (its await chain)
/// and the native stack of the loop thread at the moment the stall was
/// caught, through the loop's exception handler ("Stall: ..."). How:
///  - the loop bumps a counter before each ready batch (one relaxed atomic
///    store) and says when it blocks in the poller or stops running; each
///    task step already stores the running task (an atomic pointer);
///  - a watchdog thread reads both every threshold / 4 and sleeps on a
///    condition variable while the loop is idle or not running, so an idle
///    loop costs nothing and is never taken for a stalled one;
///  - when neither has changed for `threshold`, the watchdog sends SIGURG
///    (default action: ignored) to the loop thread, whose handler only
///    calls backtrace() into a preallocated buffer (async-signal-safe; the
///    unwinder is loaded when the detector starts, not in the handler);
///  - at the end of the batch the loop formats the report, outside the handler.
///    A step that has not ended after 20 x threshold is reported by the
///    watchdog itself, to stderr, with the task's id and the native stack
///    (the exception handler belongs to the loop thread, which is stuck).
/// At most one report per report_interval; the stalls in between are counted
/// (LoopStats::stalls) and the next report says how many it suppressed.
/// A process that handles SIGURG itself keeps its handler: signals that are
/// not the detector's are passed on to it.
#pragma once

#include <chrono>

namespace corio {

/// How a loop watches for stalls (RunOptions::stall, EventLoop::set_stall_detector).
struct StallOptions {
  /// Off by default: it costs a thread per loop. CORIO_STALL_MS=N in the
  /// environment turns it on with a threshold of N ms; CORIO_STALL_MS=0 off,
  /// whatever the options say (an operator's switch for a deployed binary).
  bool enabled = false;
  std::chrono::milliseconds threshold{100};         ///< a step running longer is a stall
  std::chrono::milliseconds report_interval{1000};  ///< at most one report per interval
};

}  // namespace corio
