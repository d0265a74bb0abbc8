/// \file
/// corio::LoopStats: a snapshot of an event loop's counters (loop.stats()).
///
/// The counters are plain integers the loop keeps anyway or bumps once per
/// iteration or per batch: taking no snapshot costs nothing, and taking one
/// walks the ready queue and sorts the lag window (call it on the loop's
/// thread, from a task or between iterations, as any loop method).
///
/// Loop lag is how late the loop got to a timer: at each iteration that
/// finds timers due, the loop time it queues them at minus the earliest
/// one's deadline (the largest lag of that pass; Node's event-loop delay
/// measures the same thing with a probe timer). A step that hogs the loop for
/// 200 ms makes the next due timer 200 ms late, whoever owns it. The
/// percentiles cover the last LoopStats::lag_window such samples.
#pragma once

#include <cstddef>
#include <cstdint>

namespace corio {

/// Percentiles of the loop lag over the recent window, in seconds.
struct LagPercentiles {
  std::size_t samples = 0;  ///< how many lag samples the window holds now
  double p50 = 0;  ///< median lag
  double p90 = 0;  ///< 90th percentile
  double p99 = 0;  ///< 99th percentile
  double max = 0;  ///< the largest lag in the window
};

/// What loop.stats() returns.
struct LoopStats {
  /// The most recent lag samples the percentiles are computed over.
  static constexpr std::size_t lag_window = 1024;

  std::uint64_t iterations = 0;     ///< run_once passes so far
  std::size_t ready = 0;            ///< callbacks and task steps queued to run now
  std::uint64_t steps = 0;          ///< callbacks and task steps run so far
  std::size_t timers = 0;           ///< timers pending (call_later handles, sleeps, timeouts)
  std::size_t watched_fds = 0;      ///< fds with an add_reader/add_writer callback
  std::size_t io_waits = 0;         ///< socket operations parked on readiness
  std::size_t tasks_alive = 0;      ///< pending tasks (created, not done)
  std::uint64_t tasks_created = 0;  ///< tasks created on this loop so far
  LagPercentiles lag;               ///< loop lag (see the top of this file)
  /// Steps that took at least slow_callback_duration, counted in debug mode
  /// (the only mode that times every step).
  std::uint64_t slow_steps = 0;
  /// Steps the stall detector caught running past its threshold, reported or
  /// suppressed by its rate limit, since it was last turned on (stall_detector.hpp).
  std::uint64_t stalls = 0;
};

}  // namespace corio
