/// \file
/// co_await shield(aw): asyncio.shield.
///
/// Awaits aw (a Coro becomes a task first) so that cancelling the awaiting task
/// does not cancel aw: the awaiter gets CancelledError at once, while the
/// inner task runs on to completion, owned by the loop. Lazy like every corio
/// combinator: a Coro starts as a task when the shield is first awaited.
#pragma once

#include <corio/detail/awaitable.hpp>

namespace corio {

namespace detail {
template <class A>
Coro<result_t<A>> shield_start(A aw) {
  auto inner = ensure_future(std::move(aw));
  co_return co_await FutureAwaiter<result_t<A>, OnCancel::detach>(inner.state());
}
}  // namespace detail

/// Awaits aw; cancelling the awaiting task does not cancel aw (asyncio.shield).
template <detail::Awaitable A>
Coro<detail::result_t<A>> shield(A&& aw) {
  static_assert(detail::kOwnable<A>, CORIO_OWNED_AWAITABLE_MESSAGE("shield()"));
  return detail::shield_start<std::remove_cvref_t<A>>(std::forward<A>(aw));
}

}  // namespace corio
