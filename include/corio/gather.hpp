/// \file
/// co_await gather(aw...): asyncio.gather.
///
/// Runs the awaitables concurrently (each Coro becomes a task) and returns
/// their results in argument order: a std::tuple for the variadic form, a
/// std::vector for the vector form; void results appear as std::monostate.
///
/// Without return_exceptions, the first failure in completion order (an
/// exception, or CancelledError for a cancelled child) propagates at once and
/// the other children keep running, as in asyncio. With return_exceptions,
/// gather waits for all and each result is an Outcome<T>.
///
/// Cancelling the task that awaits gather cancels every child; it then waits
/// for all of them and throws CancelledError.
///
/// Like every corio combinator, gather returns a lazy Coro: the children start
/// when it is first awaited (or when it is passed to create_task).
#pragma once

#include <array>
#include <span>
#include <tuple>
#include <vector>

#include <corio/detail/awaitable.hpp>
#include <corio/outcome.hpp>

namespace corio {

/// The type of return_exceptions.
struct ReturnExceptions {
  explicit ReturnExceptions() = default;
};
/// gather's first argument for asyncio's return_exceptions=True: each result an Outcome.
inline constexpr ReturnExceptions return_exceptions{};

namespace detail {

// Waits for the children as gather does; rethrows the first failure unless
// return_exceptions.
Coro<void> gather_wait(std::span<FutureStateBase* const> states, bool return_exceptions);

template <class T>
Outcome<value_or_monostate<T>> outcome_of(FutureStateBase* s) {
  try {
    return Outcome<value_or_monostate<T>>::success(take_value<T>(s, true));
  } catch (...) {
    return Outcome<value_or_monostate<T>>::failure(std::current_exception());
  }
}

template <class T, class A>
std::vector<Future<T>> ensure_futures(std::vector<A> aws) {
  std::vector<Future<T>> out;
  out.reserve(aws.size());
  for (A& a : aws) out.push_back(ensure_future(std::move(a)));
  return out;
}

template <class T>
std::vector<FutureStateBase*> states_of(const std::vector<Future<T>>& futs) {
  std::vector<FutureStateBase*> out;
  out.reserve(futs.size());
  for (const Future<T>& f : futs) out.push_back(f.state());
  return out;
}

template <class T>
Coro<std::vector<value_or_monostate<T>>> gather_values(std::vector<Future<T>> futs) {
  const std::vector<FutureStateBase*> states = states_of(futs);
  co_await gather_wait(states, false);
  std::vector<value_or_monostate<T>> out;
  out.reserve(futs.size());
  for (FutureStateBase* s : states) out.push_back(take_value<T>(s, true));
  co_return out;
}

template <class T>
Coro<std::vector<Outcome<value_or_monostate<T>>>> gather_outcomes(std::vector<Future<T>> futs) {
  const std::vector<FutureStateBase*> states = states_of(futs);
  co_await gather_wait(states, true);
  std::vector<Outcome<value_or_monostate<T>>> out;
  out.reserve(futs.size());
  for (FutureStateBase* s : states) out.push_back(outcome_of<T>(s));
  co_return out;
}

template <class... F>
Coro<std::tuple<value_or_monostate<typename F::value_type>...>> gather_tuple(F... futs) {
  const std::array<FutureStateBase*, sizeof...(F)> states{futs.state()...};
  co_await gather_wait(states, false);
  co_return std::tuple<value_or_monostate<typename F::value_type>...>(
      take_value<typename F::value_type>(futs.state(), true)...);
}

template <class... F>
Coro<std::tuple<Outcome<value_or_monostate<typename F::value_type>>...>> gather_tuple_outcomes(
    F... futs) {
  const std::array<FutureStateBase*, sizeof...(F)> states{futs.state()...};
  co_await gather_wait(states, true);
  co_return std::tuple<Outcome<value_or_monostate<typename F::value_type>>...>(
      outcome_of<typename F::value_type>(futs.state())...);
}

// Children start in argument order, when the gather starts.
template <class... A>
Coro<std::tuple<value_or_monostate<result_t<A>>...>> start_tuple(A... aws) {
  co_return co_await gather_tuple(ensure_future(std::move(aws))...);
}
template <class... A>
Coro<std::tuple<Outcome<value_or_monostate<result_t<A>>>...>> start_tuple_outcomes(A... aws) {
  co_return co_await gather_tuple_outcomes(ensure_future(std::move(aws))...);
}
template <class T, class A>
Coro<std::vector<value_or_monostate<T>>> start_vector(std::vector<A> aws) {
  co_return co_await gather_values<T>(ensure_futures<T>(std::move(aws)));
}
template <class T, class A>
Coro<std::vector<Outcome<value_or_monostate<T>>>> start_vector_outcomes(std::vector<A> aws) {
  co_return co_await gather_outcomes<T>(ensure_futures<T>(std::move(aws)));
}

}  // namespace detail

/// Runs the awaitables concurrently; their results as a tuple, in argument order.
template <detail::Awaitable... A>
requires(sizeof...(A) > 0)
Coro<std::tuple<detail::value_or_monostate<detail::result_t<A>>...>> gather(A&&... aws) {
  static_assert((detail::kOwnable<A> && ...), CORIO_OWNED_AWAITABLE_MESSAGE("gather()"));
  return detail::start_tuple<std::remove_cvref_t<A>...>(std::forward<A>(aws)...);
}

/// As gather(aws...), waiting for all: each result an Outcome, failures included.
template <detail::Awaitable... A>
requires(sizeof...(A) > 0)
Coro<std::tuple<Outcome<detail::value_or_monostate<detail::result_t<A>>>...>> gather(
    ReturnExceptions, A&&... aws) {
  static_assert((detail::kOwnable<A> && ...), CORIO_OWNED_AWAITABLE_MESSAGE("gather()"));
  return detail::start_tuple_outcomes<std::remove_cvref_t<A>...>(std::forward<A>(aws)...);
}

/// Runs the awaitables concurrently; their results as a vector, in order.
template <detail::Awaitable A>
Coro<std::vector<detail::value_or_monostate<detail::result_t<A>>>> gather(std::vector<A> aws) {
  return detail::start_vector<detail::result_t<A>>(std::move(aws));
}

/// As gather(aws), waiting for all: each result an Outcome, failures included.
template <detail::Awaitable A>
Coro<std::vector<Outcome<detail::value_or_monostate<detail::result_t<A>>>>> gather(
    ReturnExceptions, std::vector<A> aws) {
  return detail::start_vector_outcomes<detail::result_t<A>>(std::move(aws));
}

}  // namespace corio
