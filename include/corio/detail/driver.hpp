// The trampoline that runs coroutines without growing the C++ stack.
//
// Symmetric transfer (`await_suspend` returning the next handle) is only a tail
// call when the compiler makes it one: g++ 12 does not at -O0/-O1 or under
// sanitizers (libcoro#273), so a long loop of synchronously completing co_awaits
// overflows the stack there. corio never transfers by returning a handle:
//  - awaiting a Coro first runs it nested on the stack (a plain call), at most
//    kMaxInlineDepth deep; one that finishes without suspending, the common
//    case, then costs no trip through this trampoline (~8 ns an await);
//  - otherwise the awaiter stores the coroutine to run next with
//    transfer_to() and suspends; control returns to drive(), which resumes it.
// Every build, optimised or sanitized, g++ or clang, takes these same paths,
// and the stack depth stays bounded however deep the chain of Coros.
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

// Awaiting a Coro starts it nested on the stack, at most kMaxInlineDepth deep:
// a Coro that finishes at once then costs one direct call (no trip through
// the trampoline), while a chain of any depth still runs in bounded stack.
inline constexpr int kMaxInlineDepth = 16;
inline constinit thread_local int tls_inline_depth = 0;

class InlineScope {
 public:
  InlineScope() noexcept : entered_(tls_inline_depth < kMaxInlineDepth) {
    if (entered_) ++tls_inline_depth;
  }
  ~InlineScope() {
    if (entered_) --tls_inline_depth;
  }
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;
  bool entered() const noexcept { return entered_; }

 private:
  bool entered_;
};

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
