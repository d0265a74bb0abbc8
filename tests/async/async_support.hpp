// Helpers shared by the async-layer tests: virtual time, a deadlock watchdog,
// a recorder for the loop's exception reports, and small coroutines that
// sleep, return, fail or record their cleanup.
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

inline corio::RunOptions virtual_time(double start = 0.0) {
  corio::RunOptions opts;
  opts.clock = std::make_shared<corio::testing::VirtualClock>(start);
  return opts;
}

inline double now() { return corio::get_running_loop().time(); }

// cancelling() of the task running now.
inline int cancelling() { return corio::current_task()->cancelling(); }

// Fails the test and cancels the root task if virtual time runs far past
// anything a test here sleeps: a lost wake-up shows up as a failure instead
// of a hang (on virtual time the loop jumps straight to this timer).
inline corio::Coro<void> watchdog(corio::TaskRef root) {
  co_await corio::sleep(100000s);
  ADD_FAILURE() << "watchdog: the test did not finish within 100000 virtual seconds";
  root.cancel();
}

template <class T>
corio::Coro<T> guarded(corio::Coro<T> main) {
  corio::Task<void> dog = corio::create_task(watchdog(*corio::current_task()));
  struct Stop {
    corio::Task<void>* dog;
    ~Stop() { dog->cancel(); }
  } stop{&dog};
  co_return co_await std::move(main);
}

// corio::run on a fresh virtual clock, with the watchdog.
template <class T>
T run_vt(corio::Coro<T> main, double start = 0.0) {
  return corio::run(guarded(std::move(main)), virtual_time(start));
}

// What the running loop's exception handler was called with. Install it
// from inside the loop; it must outlive corio::run (shutdown reports too).
struct Reports {
  std::vector<std::string> messages;
  std::vector<std::exception_ptr> exceptions;

  void install() {
    corio::get_running_loop().set_exception_handler(
        [this](corio::EventLoop&, const corio::ExceptionContext& c) {
          messages.push_back(c.message);
          exceptions.push_back(c.exception);
        });
  }
  std::size_t size() const { return messages.size(); }
  std::string joined() const {
    std::string out;
    for (const std::string& m : messages) out += m + "\n";
    return out;
  }
};

// The what() of a std::exception in an exception_ptr; "CancelledError" for a
// corio::CancelledError; "" for anything else.
inline std::string what_of(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (const corio::CancelledError&) {
    return "CancelledError";
  } catch (...) {
  }
  return {};
}

inline bool is_cancelled_error(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const corio::CancelledError&) {
    return true;
  } catch (...) {
  }
  return false;
}

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
enum class End { value, timeout, cancelled, other };

template <class A>
corio::Coro<End> outcome_of(A aw, Log* log = nullptr) {
  End end;
  try {
    co_await std::move(aw);
    end = End::value;
  } catch (const corio::TimeoutError&) {
    end = End::timeout;
  } catch (const corio::CancelledError&) {
    end = End::cancelled;
  } catch (...) {
    end = End::other;
  }
  if (log) {
    static constexpr const char* kNames[] = {"awaiter:value", "awaiter:timeout",
                                             "awaiter:cancelled", "awaiter:other"};
    log->add(kNames[static_cast<int>(end)]);
  }
  co_return end;
}

}  // namespace corio_async_test
