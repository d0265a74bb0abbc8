// Where a coroutine's current co_await is, for call graphs and async stack
// traces (call_graph.hpp). Every co_await in a Coro body records one, so it
// must cost a single pointer store: with g++ (and clang 15 on), the pointer
// __builtin_source_location() gives, to a constant the compiler emits per
// call site. clang 14 lacks that builtin; there the site is interned instead
// (intern_await_site, once per distinct site, a lookup per co_await).
//
// AwaitSite is that one pointer whichever compiler built the code, so that a
// library built by one compiler serves code built by the other: the promise's
// slot (coro.hpp), note_unwind and the call graphs read sites that frames
// compiled by the other compiler stored. Nothing here may change the ABI with
// the compiler: the #if below only chooses how a site is made.
//
// await_transform takes the site as a default argument of a scalar type (the
// builtin's pointer): g++ 12 keeps a class-type argument of a co_await
// expression in the coroutine frame, 8 bytes more in every frame.
#pragma once

#include <cstring>
#if __has_include(<source_location>)
#include <source_location>
#endif
#include <corio/source_location.hpp>

namespace corio::detail {

// What a site points to: the layout of libstdc++'s std::source_location::__impl,
// which __builtin_source_location() makes (private there; a test checks it).
struct AwaitSiteRecord {
  const char* file;
  const char* function;
  unsigned line;
  unsigned column;
};

// A co_await's site: std::source_location's interface on one pointer to a
// constant AwaitSiteRecord (empty: no site, as a default std::source_location).
class AwaitSite {
 public:
  constexpr AwaitSite() noexcept = default;
  explicit constexpr AwaitSite(const void* record) noexcept : record_(record) {}
  const char* file_name() const noexcept { return record_ ? record().file : ""; }
  const char* function_name() const noexcept { return record_ ? record().function : ""; }
  unsigned line() const noexcept { return record_ ? record().line : 0; }
  unsigned column() const noexcept { return record_ ? record().column : 0; }

 private:
  // Copied out, not cast: under g++ the record is a libstdc++ object.
  AwaitSiteRecord record() const noexcept {
    AwaitSiteRecord r;
    std::memcpy(&r, record_, sizeof r);
    return r;
  }
  const void* record_ = nullptr;
};

// The site of where, kept for the life of the program: how clang 14 makes a
// site. Defined in the library whichever compiler built it.
AwaitSite intern_await_site(const SourceLocation& where) noexcept;

#if defined(__cpp_lib_source_location)
using AwaitSiteArg = const void*;
#define CORIO_AWAIT_SITE_HERE __builtin_source_location()
inline AwaitSite to_await_site(AwaitSiteArg where) noexcept { return AwaitSite(where); }
#else
using AwaitSiteArg = SourceLocation;
#define CORIO_AWAIT_SITE_HERE ::corio::SourceLocation::current()
inline AwaitSite to_await_site(AwaitSiteArg where) noexcept { return intern_await_site(where); }
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
