// What the combinators accept: a Coro<T> (run as a new task when a combinator
// needs it to run concurrently, or inline when it does not), a Task<T> or a
// Future<T>.
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

template <class A>
concept Awaitable = requires {
  typename AwaitableTraits<std::remove_cvref_t<A>>::result;
};

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
// An awaiter object runs in a task of its own, wrapped in a Coro.
template <AwaiterObject A>
Coro<result_t<A>> await_in_coro(A aw) {
  co_return co_await std::move(aw);
}
template <AwaiterObject A>
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
