// co_await shield(aw): asyncio.shield.
//
// Awaits aw (a Coro becomes a task first) so that cancelling the awaiting task
// does not cancel aw: the awaiter gets CancelledError at once, while the
// inner task runs on to completion, owned by the loop.
#pragma once

#include <corio/detail/awaitable.hpp>

namespace corio {

namespace detail {
template <class T>
Coro<T> shield_future(Future<T> inner) {
  co_return co_await FutureAwaiter<T, OnCancel::detach>(inner.state());
}
}  // namespace detail

template <detail::Awaitable A>
Coro<detail::result_t<A>> shield(A aw) {
  return detail::shield_future(detail::ensure_future(std::move(aw)));
}

}  // namespace corio
