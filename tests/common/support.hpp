// The helpers every layer's tests share, on core headers only (the core
// tests must not depend on later layers): virtual time, a bounded run that
// turns a lost wake-up into a failure instead of a hang, a recorder for the
// loop's exception reports, and how an await ended.
//
// State goes into coroutines as parameters (pointers), never as lambda
// captures of a lambda called directly (docs/asyncio-to-corio.md, "Captures").
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/run.hpp>
#include <corio/sleep.hpp>
#include <corio/testing/virtual_clock.hpp>

namespace corio_testing {

using namespace std::chrono_literals;

// Options for a loop on virtual time starting at `start` seconds.
inline corio::RunOptions virtual_time(double start = 0.0) {
  corio::RunOptions opts;
  opts.clock = std::make_shared<corio::testing::VirtualClock>(start);
  return opts;
}

// Fails the test and cancels the root task if virtual time runs far past
// anything a test sleeps: a lost wake-up shows up as a failure instead of a
// hang (on virtual time the loop jumps straight to this timer).
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

// What a loop's exception handler was called with. It must outlive the loop
// (shutdown reports too).
struct Reports {
  std::vector<std::string> messages;
  std::vector<std::exception_ptr> exceptions;
  std::vector<std::string> task_names;  // "" when the context had no task

  void install(corio::EventLoop& loop) {
    loop.set_exception_handler([this](corio::EventLoop&, const corio::ExceptionContext& c) {
      messages.push_back(c.message);
      exceptions.push_back(c.exception);
      task_names.push_back(c.task ? c.task->get_name() : std::string());
    });
  }
  // From inside the loop.
  void install() { install(corio::get_running_loop()); }
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

using corio::is_cancelled_error;

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// How an await ended.
enum class End { none, value, timeout, cancelled, other };

inline const char* to_string(End e) {
  switch (e) {
    case End::none:
      return "none";
    case End::value:
      return "value";
    case End::timeout:
      return "timeout";
    case End::cancelled:
      return "cancelled";
    case End::other:
      return "other";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& os, End e) { return os << to_string(e); }

// The End of an exception_ptr (nullptr: value).
inline End end_of_error(const std::exception_ptr& e) {
  if (!e) return End::value;
  try {
    std::rethrow_exception(e);
  } catch (const corio::TimeoutError&) {
    return End::timeout;
  } catch (const corio::CancelledError&) {
    return End::cancelled;
  } catch (...) {
  }
  return End::other;
}

}  // namespace corio_testing
