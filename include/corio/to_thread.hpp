/// \file
/// corio::to_thread: asyncio.to_thread. Runs a blocking function on the
/// loop's default thread pool and gives its result (or exception) back to the
/// awaiting task, while the loop goes on running other tasks.
///
/// <!-- doc: body (std::string (*read_file)(std::string), std::string path) -->
///     std::string body = co_await corio::to_thread(read_file, path);
///
/// Like every Coro it is lazy: the function is submitted when awaited.
/// Cancelling the awaiting task cannot stop the thread; the task gets
/// CancelledError at once and the function's result is dropped when it ends.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

#include <corio/event_loop.hpp>

namespace corio {

/// Runs fn(args...) on the loop's default thread pool; its result, back on the loop.
template <class F, class... Args>
Coro<std::decay_t<std::invoke_result_t<F, Args...>>> to_thread(F fn, Args... args) {
  auto call = [fn = std::move(fn), ... args = std::move(args)]() mutable {
    return std::invoke(std::move(fn), std::move(args)...);
  };
  // Named, not a temporary inside the co_await expression: g++ 12 destroys
  // such temporaries twice (their move-only captures were freed twice).
  auto fut = get_running_loop().run_in_executor(nullptr, std::move(call));
  co_return co_await fut;
}

}  // namespace corio
