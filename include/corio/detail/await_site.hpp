// Where a coroutine's current co_await is, for call graphs and async stack
// traces (call_graph.hpp). Every co_await in a Coro body records one, so it
// must cost a single pointer store: with g++, std::source_location is one
// pointer to a constant the compiler emits per call site. clang 14 lacks
// __builtin_source_location (libstdc++ then has no std::source_location), so
// there it is corio::SourceLocation: three stores, same interface.
//
// await_transform takes the site as a default argument of a scalar type (the
// builtin's pointer): g++ 12 keeps a class-type argument of a co_await
// expression in the coroutine frame, 8 bytes more in every frame.
#pragma once

#include <bit>
#if __has_include(<source_location>)
#include <source_location>
#endif
#include <corio/source_location.hpp>

namespace corio::detail {

#if defined(__cpp_lib_source_location)
using AwaitSite = std::source_location;
using AwaitSiteArg = const void*;
#define CORIO_AWAIT_SITE_HERE __builtin_source_location()
// std::source_location is that one pointer (trivially copyable, same size).
inline AwaitSite to_await_site(AwaitSiteArg where) noexcept {
  static_assert(sizeof(AwaitSite) == sizeof(AwaitSiteArg));
  return std::bit_cast<AwaitSite>(where);
}
#else
using AwaitSite = SourceLocation;
using AwaitSiteArg = SourceLocation;
#define CORIO_AWAIT_SITE_HERE ::corio::SourceLocation::current()
inline AwaitSite to_await_site(AwaitSiteArg where) noexcept { return where; }
#endif

// The awaiter a co_await expression would use: the operand's operator
// co_await if it has one, else the operand itself (by reference).
template <class A>
decltype(auto) awaiter_of(A&& a) {
  if constexpr (requires { static_cast<A&&>(a).operator co_await(); }) {
    return static_cast<A&&>(a).operator co_await();
  } else if constexpr (requires { operator co_await(static_cast<A&&>(a)); }) {
    return operator co_await(static_cast<A&&>(a));
  } else {
    return static_cast<A&&>(a);
  }
}

// What Coro's await_transform hands the compiler: the real awaiter, held by
// reference, or by value when operator co_await made it. (Returning the
// operand by reference would be simpler, but g++ 12 then copies the awaiter
// into the frame, which non-copyable awaiters forbid.) The awaiting handle is
// passed on with its promise type, so awaiters that care can see it.
template <class W>
struct SiteAwaiter {
  W w;
  bool await_ready() { return w.await_ready(); }
  template <class H>
  decltype(auto) await_suspend(H h) {
    return w.await_suspend(h);
  }
  decltype(auto) await_resume() { return w.await_resume(); }
};

}  // namespace corio::detail
