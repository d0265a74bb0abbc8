#include <corio/detail/multi_wait.hpp>
#include <corio/gather.hpp>

namespace corio::detail {

Coro<void> gather_wait(std::span<FutureStateBase* const> states, bool return_exceptions) {
  // gather reports every child's failure itself (or, after the first, drops
  // them as asyncio does): no "exception was never retrieved" for children.
  for (FutureStateBase* s : states) s->mark_retrieved();
  MultiWaitOptions opts;
  opts.until = return_exceptions ? Until::all : Until::first_failure;
  opts.cancelled_is_failure = true;
  opts.cancel_children = true;
  MultiWait wait(states, opts);
  co_await wait;
  if (!return_exceptions) {
    if (FutureStateBase* failed = wait.first_failure()) failed->rethrow_if_failed();
  }
}

}  // namespace corio::detail
