/// \file
/// Running a job once a day at a local wall-clock time: an "08:00 daily
/// brief" without the once-a-minute polling of the Python program it ports.
///
/// <!-- doc: body -->
///     std::function<corio::Coro<void>()> job = []() -> corio::Coro<void> { co_await make_brief(); };
///     co_await corio::run_daily(8, 0, job);   // named first: see getting-started.md
///
/// run_daily sleeps until the next hh:mm in the local time zone, runs the
/// job, and computes the next one; it never polls. At most one run per
/// day: the next deadline is the first hh:mm after both the run just served
/// and the time the job ended, so a job that ends within its minute cannot
/// run twice; waking late (a busy loop, a suspended laptop) runs the job
/// once, late, rather than skipping the day or making up every missed day.
/// Wall-clock jumps are handled by sleeping in pieces: the loop sleeps on
/// the monotonic clock, which ignores NTP steps and DST, so the wall clock
/// is read again at least every `recheck`.
///
/// DST: the deadline is computed by mktime with tm_isdst = -1, so 08:00 is
/// 08:00 local time on both sides of a change (23 or 25 hours apart). A time
/// that does not exist that day (02:30 in a spring-forward gap) moves on by
/// the gap's length, as mktime moves it (03:30); one that exists twice
/// (01:30 in the autumn) runs at the first.
///
/// Suspends: in sleep() between runs, and while the job runs. Cancelling
/// run_daily (e.g. with the task that awaits it) cancels the job if it is
/// running.
#pragma once

#include <chrono>
#include <functional>

#include <corio/coro.hpp>
#include <corio/detail/entropy.hpp>

namespace corio {

/// What reads the wall clock (DailyOptions::now).
using WallClockNow = std::function<std::chrono::system_clock::time_point()>;

/// The first hh:mm local time strictly after `after`.
std::chrono::system_clock::time_point next_daily_at(int hour, int minute,
                                                    std::chrono::system_clock::time_point after);

/// Options of run_daily().
struct DailyOptions {
  std::chrono::seconds recheck{60};  ///< longest sleep before the wall clock is read again
  /// Tests inject one. The default reads corio's wall clock: the system's,
  /// or a simulation's virtual one on its thread (testing/simulation.hpp).
  WallClockNow now = [] {
    using std::chrono::system_clock;
    const std::chrono::duration<double> since_epoch(detail::wall_time());
    return system_clock::time_point(
        std::chrono::duration_cast<system_clock::duration>(since_epoch));
  };
};

/// Runs job at every hh:mm local time, forever (until cancelled). hour in
/// 0..23, minute in 0..59, else ValueError.
Coro<void> run_daily(int hour, int minute, std::function<Coro<void>()> job, DailyOptions opts = {});

}  // namespace corio
