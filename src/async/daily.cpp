// run_daily / next_daily_at (see daily.hpp).
#include <corio/daily.hpp>

#include <algorithm>
#include <ctime>

#include <corio/errors.hpp>
#include <corio/sleep.hpp>

namespace corio {

namespace {

using std::chrono::system_clock;

// hh:mm on the calendar day that `day` falls on (local time), or on the
// day `add_days` after it. mktime normalises the day of month and, with
// tm_isdst = -1, works out whether DST applies at that moment.
system_clock::time_point local_time_on(std::time_t day, int add_days, int hour, int minute) {
  std::tm tm{};
  localtime_r(&day, &tm);
  tm.tm_mday += add_days;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return system_clock::from_time_t(std::mktime(&tm));
}

}  // namespace

system_clock::time_point next_daily_at(int hour, int minute, system_clock::time_point after) {
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) {
    throw ValueError("run_daily: hour must be 0..23 and minute 0..59");
  }
  const std::time_t day = system_clock::to_time_t(after);
  // Today's, else tomorrow's, else the day after: across a DST change the
  // "tomorrow" of a late-evening instant can normalise back onto today.
  for (int add = 0; add < 3; ++add) {
    const system_clock::time_point t = local_time_on(day, add, hour, minute);
    if (t > after) return t;
  }
  throw RuntimeError("run_daily: no next local time found");  // a broken time zone
}

Coro<void> run_daily(int hour, int minute, std::function<Coro<void>()> job, DailyOptions opts) {
  system_clock::time_point due = next_daily_at(hour, minute, opts.now());
  for (;;) {
    const auto left = due - opts.now();
    if (left > system_clock::duration::zero()) {
      co_await sleep(std::min<system_clock::duration>(left, opts.recheck));
      continue;
    }
    co_await job();
    // After both the run just served and now: a job that ends within its
    // minute cannot run twice, and days slept through (a suspended
    // machine) are not made up with a burst of runs.
    due = next_daily_at(hour, minute, std::max(due, opts.now()));
  }
}

}  // namespace corio
