// Helpers shared by the async-layer tests: the common ones (virtual time,
// the bounded run, reports; common/support.hpp), a log of timed events, and
// small coroutines that sleep, return, fail or record their cleanup.
//
// State goes into coroutines as parameters (pointers), never as lambda
// captures: a capturing lambda coroutine dangles after its first suspension
// (DESIGN.md "Known toolchain traps").
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/support.hpp"
#include <corio/corio.hpp>

// ASSERT_* expands to `return`, which a coroutine cannot contain: this is
// the coroutine (Coro<void>) form.
#define CO_ASSERT(cond)                            \
  do {                                             \
    if (!(cond)) {                                 \
      ADD_FAILURE() << "assertion failed: " #cond; \
      co_return;                                   \
    }                                              \
  } while (0)

namespace corio_async_test {

using namespace std::chrono_literals;
using Secs = std::chrono::duration<double>;

using corio_testing::End;
using corio_testing::end_of_error;
using corio_testing::is_cancelled_error;
using corio_testing::Reports;
using corio_testing::run_vt;
using corio_testing::virtual_time;
using corio_testing::what_of;

inline double now() { return corio::get_running_loop().time(); }

// cancelling() of the task running now.
inline int cancelling() { return corio::current_task()->cancelling(); }

// Loop times are sums of virtual-clock steps: compare with a tolerance.
inline void expect_times(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-9) << "at index " << i;
}

// A log of events with the virtual time each happened at.
struct Log {
  std::vector<std::string> events;
  std::vector<double> times;
  void add(std::string e) {
    events.push_back(std::move(e));
    times.push_back(now());
  }
};

// Records `name + ":cleanup"` (at the time it runs) when destroyed: the
// `finally` of a coroutine that is cancelled.
struct Cleanup {
  Log* log;
  std::string name;
  Cleanup(Log* l, std::string n) : log(l), name(std::move(n)) {}
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() { log->add(name + ":cleanup"); }
};

inline corio::Coro<void> sleep_s(double secs) { co_await corio::sleep(Secs(secs)); }

inline corio::Coro<int> value_after(double secs, int v) {
  co_await corio::sleep(Secs(secs));
  co_return v;
}

inline corio::Coro<int> fail_after(double secs, std::string msg) {
  co_await corio::sleep(Secs(secs));
  throw std::runtime_error(msg);
}

// Cancelled while sleeping, it fails with an E of its own (a cleanup that
// raises while being cancelled).
template <class E = std::runtime_error>
corio::Coro<int> fails_when_cancelled(double secs, std::string msg) {
  bool cancelled = false;
  try {
    co_await corio::sleep(Secs(secs));
  } catch (const corio::CancelledError&) {
    cancelled = true;
  }
  if (cancelled) throw E(msg);
  co_return 0;
}

// Sleeps, logging "name:start", then "name:done" or (through Cleanup)
// "name:cleanup" when it is unwound.
inline corio::Coro<int> logged(Log* log, std::string name, double secs, int v) {
  log->add(name + ":start");
  Cleanup guard(log, name);
  co_await corio::sleep(Secs(secs));
  log->add(name + ":done");
  co_return v;
}

// Sets *flag when it starts running.
inline corio::Coro<int> mark_started(bool* flag, int v) {
  *flag = true;
  co_return v;
}

// Cancelled while sleeping, it sleeps `cleanup_secs` more (an async
// cleanup), logs "name:cleaned", and rethrows.
inline corio::Coro<int> slow_cleanup(Log* log, std::string name, double secs, double cleanup_secs) {
  std::exception_ptr cancelled;  // no co_await inside a handler: rethrow below
  try {
    co_await corio::sleep(Secs(secs));
  } catch (const corio::CancelledError&) {
    cancelled = std::current_exception();
  }
  if (cancelled) {
    co_await corio::sleep(Secs(cleanup_secs));
    log->add(name + ":cleaned");
    std::rethrow_exception(cancelled);
  }
  log->add(name + ":done");
  co_return 0;
}

// Cancels `t` after `secs`.
template <class T>
corio::Coro<void> cancel_after(double secs, corio::Task<T> t) {
  co_await corio::sleep(Secs(secs));
  t.cancel();
}

// How an await ended; with a log, also recorded there as "awaiter:<end>".
template <class A>
corio::Coro<End> outcome_of(A aw, Log* log = nullptr) {
  End end = End::value;
  try {
    co_await std::move(aw);
  } catch (...) {
    end = end_of_error(std::current_exception());
  }
  if (log) log->add(std::string("awaiter:") + corio_testing::to_string(end));
  co_return end;
}

}  // namespace corio_async_test
