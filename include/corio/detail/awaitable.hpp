// What the combinators accept: a Coro<T> (run as a new task when a combinator
// needs it to run concurrently, or inline when it does not), a Task<T>, a
// Future<T>, or any awaiter object (sleep(), lock.acquire(), event.wait(),
// queue.get(), a user's type with await_ready/await_suspend/await_resume or
// an operator co_await).
//
// How a combinator keeps its argument until it runs (stored_t): an rvalue is
// moved into the combinator's frame, so it must be movable (corio's awaiters
// are, until awaited); an lvalue Future or Task is copied (it is a handle);
// any other lvalue (a Coro, an awaiter object) is kept by reference: the
// caller owns it, and it must outlive the await, as with `co_await x`.
#pragma once

#include <type_traits>
#include <variant>

#include <corio/event_loop.hpp>

namespace corio::detail {

template <class A>
struct AwaitableTraits;
template <class T>
struct AwaitableTraits<Coro<T>> {
  using result = T;
};
template <class T>
struct AwaitableTraits<Future<T>> {
  using result = T;
};
template <class T>
struct AwaitableTraits<Task<T>> {
  using result = T;
};

// Any awaiter object (sleep(), lock.acquire(), event.wait(), ...).
template <class A>
concept AwaiterObject = requires(A& a) {
  a.await_ready();
  a.await_resume();
};
template <class A>
requires AwaiterObject<A>
struct AwaitableTraits<A> {
  using result = decltype(std::declval<A&>().await_resume());
};

// A type with a member operator co_await.
template <class A>
concept CoAwaitable = !AwaiterObject<A> && requires(A& a) { a.operator co_await(); };
template <class A>
requires CoAwaitable<A>
struct AwaitableTraits<A> {
  using result = decltype(std::declval<A&>().operator co_await().await_resume());
};

template <class A>
concept Awaitable = requires {
  typename AwaitableTraits<std::remove_cvref_t<A>>::result;
};

template <class A>
struct IsFutureHandle : std::false_type {};
template <class T>
struct IsFutureHandle<Future<T>> : std::true_type {};
template <class T>
struct IsFutureHandle<Task<T>> : std::true_type {};
template <class A>
concept FutureHandle = IsFutureHandle<std::remove_cvref_t<A>>::value;

template <class A>
using stored_t = std::conditional_t<std::is_lvalue_reference_v<A> && !FutureHandle<A>, A,
                                    std::remove_cvref_t<A>>;
// Whether a combinator can keep its argument: an rvalue must be movable.
template <class A>
inline constexpr bool kStorable =
    std::is_lvalue_reference_v<stored_t<A>> || std::is_move_constructible_v<stored_t<A>>;
// Whether a task of the combinator's can own its argument (gather, shield:
// the work may outlive the combinator's caller): moved or copied in.
template <class A>
inline constexpr bool kOwnable = std::is_constructible_v<std::remove_cvref_t<A>, A>;
#define CORIO_OWNED_AWAITABLE_MESSAGE(what)                                                   \
  what " runs its awaitables as tasks that own them: pass a Future, a Task, a Coro or an " \
       "awaiter by rvalue (std::move), and make an awaiter type movable"
#define CORIO_STORED_AWAITABLE_MESSAGE(what)                                                 \
  what " keeps an rvalue awaitable in its frame until it runs: make the type movable, or " \
       "pass an lvalue that outlives the await"

template <class A>
using result_t = typename AwaitableTraits<std::remove_cvref_t<A>>::result;

// void results are reported as std::monostate in tuples and vectors.
template <class T>
using value_or_monostate = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

// asyncio.ensure_future: schedule a coroutine as a task; futures pass through.
template <class T>
Future<T> ensure_future(Coro<T> c) {
  return get_running_loop().create_task(std::move(c));
}
template <class T>
Future<T> ensure_future(Future<T> f) {
  return f;
}
template <class T>
Future<T> ensure_future(Task<T> t) {
  return t;
}
// An lvalue awaiter object, awaited in place. (g++ 12 copies an awaiter
// named by a reference in a co_await expression: a non-copyable one then
// does not compile.)
template <class A>
struct AwaiterRef {
  A* a;
  bool await_ready() { return a->await_ready(); }
  template <class P>
  auto await_suspend(std::coroutine_handle<P> h) {
    return a->await_suspend(h);
  }
  decltype(auto) await_resume() { return a->await_resume(); }
};
// What `co_await` is applied to for a stored argument (stored_t).
template <class S>
decltype(auto) awaitable_of(S& s) {
  if constexpr (std::is_lvalue_reference_v<S> && AwaiterObject<std::remove_reference_t<S>>) {
    return AwaiterRef<std::remove_reference_t<S>>{&s};
  } else {
    return static_cast<S&&>(s);
  }
}

// Any other awaitable (an awaiter object, a type with operator co_await)
// runs in a task of its own, wrapped in a Coro.
template <class A>
concept OtherAwaitable = Awaitable<A> && !CoroType<A> && !FutureHandle<A>;
template <OtherAwaitable A>
Coro<result_t<A>> await_in_coro(A aw) {
  co_return co_await std::move(aw);
}
template <OtherAwaitable A>
Future<result_t<A>> ensure_future(A aw) {
  return ensure_future(await_in_coro(std::move(aw)));
}

// The value of a done state as value_or_monostate<T>.
template <class T>
value_or_monostate<T> take_value(FutureStateBase* s, bool may_move) {
  if constexpr (std::is_void_v<T>) {
    take_result<void>(s, may_move);
    return {};
  } else {
    return take_result<T>(s, may_move);
  }
}

}  // namespace corio::detail
