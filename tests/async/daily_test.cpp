// run_daily / next_daily_at: the next local hh:mm across days, month ends
// and DST changes (in a fixed time zone, set for the test), and run_daily
// on virtual time: one run per day at the right wall time, even when the
// job takes a while or the loop wakes late, and across a DST change.
#include <corio/daily.hpp>

#include <cstdlib>
#include <ctime>
#include <vector>

#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using std::chrono::system_clock;

// TZ for one test, restored afterwards.
class LocalZone {
 public:
  explicit LocalZone(const char* tz) {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    ::setenv("TZ", tz, 1);
    ::tzset();
  }
  ~LocalZone() {
    if (saved_) {
      ::setenv("TZ", saved_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }

 private:
  std::optional<std::string> saved_;
};

// A UTC instant from its calendar fields.
system_clock::time_point utc(int y, int mo, int d, int h, int mi, int s = 0) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return system_clock::from_time_t(::timegm(&tm));
}

TEST(Daily, NextIsTodayOrTomorrowStrictlyAfter) {
  LocalZone zone("UTC0");
  EXPECT_EQ(corio::next_daily_at(8, 0, utc(2026, 11, 29, 7, 59)), utc(2026, 11, 29, 8, 0));
  EXPECT_EQ(corio::next_daily_at(8, 0, utc(2026, 11, 29, 8, 0)), utc(2026, 11, 30, 8, 0))
      << "exactly at the time: the next one is tomorrow's";
  EXPECT_EQ(corio::next_daily_at(8, 0, utc(2026, 12, 31, 9, 0)), utc(2027, 1, 1, 8, 0));
  EXPECT_THROW(corio::next_daily_at(24, 0, system_clock::now()), corio::ValueError);
  EXPECT_THROW(corio::next_daily_at(8, 60, system_clock::now()), corio::ValueError);
}

TEST(Daily, EightOClockStaysEightOClockAcrossDst) {
  LocalZone zone("America/New_York");  // DST 2026-03-08 and 2026-11-01, at 02:00
  EXPECT_EQ(corio::next_daily_at(8, 0, utc(2026, 3, 7, 14, 0)), utc(2026, 3, 8, 12, 0))
      << "EST (UTC-5) the day before, EDT (UTC-4) on the day: 23 hours apart";
  EXPECT_EQ(corio::next_daily_at(8, 0, utc(2026, 10, 31, 13, 0)), utc(2026, 11, 1, 13, 0))
      << "back to EST: 25 hours apart";
  EXPECT_EQ(corio::next_daily_at(2, 30, utc(2026, 3, 8, 5, 0)), utc(2026, 3, 8, 7, 30))
      << "02:30 does not exist that day: mktime moves it by the gap, to 03:30 EDT";
}

// The wall clock a virtual-time test sees: `start` plus the loop's time.
corio::WallClockNow wall_clock(system_clock::time_point start) {
  return [start] {
    const double t = corio::get_running_loop().time();
    return start + std::chrono::duration_cast<system_clock::duration>(Secs(t));
  };
}

// Three days from 2026-03-06 12:00 New York time; each run records the
// wall time it started at, then lasts `duration`.
corio::Coro<void> three_days(std::vector<system_clock::time_point>* runs, Secs duration) {
  corio::DailyOptions opts;
  opts.now = wall_clock(utc(2026, 3, 6, 17, 0));
  auto job = [runs, duration, now = opts.now]() -> corio::Coro<void> {
    runs->push_back(now());
    co_await corio::sleep(duration);
  };
  corio::Coro<void> daily = corio::run_daily(8, 0, job, opts);
  try {
    co_await corio::wait_for(std::move(daily), 3 * 86400s);
  } catch (const corio::TimeoutError&) {
    // Three days are over.
  }
}

TEST(Daily, OneRunPerDayAtEightLocalAcrossTheSpringChange) {
  LocalZone zone("America/New_York");
  std::vector<system_clock::time_point> runs;
  corio::run(three_days(&runs, 30s), virtual_time());  // each run ends inside its minute
  const std::vector<system_clock::time_point> want = {utc(2026, 3, 7, 13, 0), utc(2026, 3, 8, 12, 0),
                                                      utc(2026, 3, 9, 12, 0)};
  EXPECT_EQ(runs, want);
}

TEST(Daily, ARunThatOutlastsADayIsNotFollowedByACatchUpRun) {
  LocalZone zone("America/New_York");
  std::vector<system_clock::time_point> runs;
  corio::run(three_days(&runs, 25h), virtual_time());
  const std::vector<system_clock::time_point> want = {utc(2026, 3, 7, 13, 0), utc(2026, 3, 9, 12, 0)};
  EXPECT_EQ(runs, want) << "the 8th's time passed during the first run: next is the 9th";
}

}  // namespace
}  // namespace corio_async_test
