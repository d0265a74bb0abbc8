// The trampoline that runs coroutines without growing the C++ stack.
//
// Symmetric transfer (`await_suspend` returning the next handle) is only a tail
// call when the compiler makes it one: g++ 12 does not at -O0/-O1 or under
// sanitizers (libcoro#273), so a long loop of synchronously completing co_awaits
// overflows the stack there. corio never transfers by returning a handle. An
// awaiter that wants another coroutine to run next stores it with transfer_to()
// and suspends; the coroutine returns to drive(), which resumes the stored
// handle. Every build, optimised or sanitized, g++ or clang, takes this same
// path, and the stack depth stays constant however deep the chain of Coros.
#pragma once

#include <coroutine>

namespace corio::detail {

inline constinit thread_local std::coroutine_handle<> tls_next_handle{};
inline constinit thread_local bool tls_driving = false;

// Resume h, then whatever it hands control to, until a coroutine suspends
// without naming a successor.
inline void drive(std::coroutine_handle<> h) {
  const bool outer_driving = tls_driving;
  const std::coroutine_handle<> outer_next = tls_next_handle;
  tls_driving = true;
  do {
    tls_next_handle = nullptr;
    h.resume();
    h = tls_next_handle;
  } while (h);
  tls_driving = outer_driving;
  tls_next_handle = outer_next;
}

// Called from an await_suspend: run h once the current coroutine has suspended.
// Outside a drive() (a coroutine resumed by foreign code) it becomes the driver.
inline void transfer_to(std::coroutine_handle<> h) {
  if (tls_driving) {
    tls_next_handle = h;
  } else {
    drive(h);
  }
}

}  // namespace corio::detail
