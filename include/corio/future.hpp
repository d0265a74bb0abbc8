/// \file
/// corio::Future<T>: a placeholder for a result (asyncio.Future).
///
/// A copyable handle to shared, loop-affine state: pending, then finished with a
/// value or an exception, or cancelled. Done-callbacks are scheduled on the
/// loop, never called inline. Create one with loop.create_future<T>().
///
/// Suspends: `co_await fut` suspends the awaiting task while fut is pending
/// (a done future returns at once, without yielding).
/// Resumed by: whoever completes it (set_result, set_exception, cancel), via
/// the loop's ready queue on the next iteration.
/// Cancelling the awaiting task cancels the future (as asyncio does).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include <corio/detail/future_awaiter.hpp>

namespace corio {

/// What add_done_callback() returns, for remove_done_callback().
using CallbackId = std::uint64_t;

/// asyncio.Future: a copyable handle to a result, pending, then done (details at the top of
/// future.hpp).
template <class T = void>
class Future {
 public:
  /// The result's type.
  using value_type = T;

  Future() noexcept = default;  ///< an empty handle; valid() is false
  /// A handle to existing state (loop.create_future() makes one).
  explicit Future(detail::Ref<detail::FutureStateBase> s) noexcept : s_(std::move(s)) {}

  /// False for an empty handle.
  bool valid() const noexcept { return static_cast<bool>(s_); }
  /// Finished: with a value, with an exception, or cancelled.
  bool done() const noexcept { return s_->done(); }
  /// Finished by cancel().
  bool cancelled() const noexcept { return s_->cancelled(); }

  /// The value, or throws the exception, CancelledError, or InvalidStateError
  /// while pending. Copies the value (moves it for move-only T: once).
  T result() const { return detail::take_result<T>(s_.get(), false); }
  /// nullptr if finished with a value; throws CancelledError if cancelled,
  /// InvalidStateError if pending.
  std::exception_ptr exception() const { return s_->exception(); }

  /// Finishes a Future<void> (InvalidStateError if it is done).
  void set_result() requires std::is_void_v<T> {
    s_->check_pending("set_result");
    s_->finish_ok();
  }
  /// Finishes it with v (InvalidStateError if it is done).
  template <class U = T>
  requires(!std::is_void_v<T> && std::is_constructible_v<T, U&&>) void set_result(U&& v) {
    s_->check_pending("set_result");
    detail::value_of<T>(s_.get()).v.emplace(std::forward<U>(v));
    s_->finish_ok();
  }
  /// Finishes it with the exception e (InvalidStateError if it is done).
  void set_exception(std::exception_ptr e) { s_->set_exception(std::move(e)); }
  /// Cancels it if pending (awaiters get CancelledError(msg)); false if it was done.
  bool cancel(std::string msg = {}) { return s_->cancel(std::move(msg)); }

  /// fn(Future<T>) runs on the loop once the future is done (soon, if it is).
  CallbackId add_done_callback(std::function<void(Future<T>)> fn) {
    return s_->add_done_callback([fn = std::move(fn)](detail::FutureStateBase& s) {
      fn(Future<T>(detail::Ref<detail::FutureStateBase>::share(&s)));
    });
  }
  /// Returns how many callbacks were removed (0 or 1).
  std::size_t remove_done_callback(CallbackId id) noexcept { return s_->remove_done_callback(id); }

  /// co_await of an rvalue handle (e.g. `co_await create_task(f())`) moves
  /// the result out when no other handle shares it.
  auto operator co_await() const& noexcept { return detail::FutureAwaiter<T>(s_.get()); }
  /// The same; moves the result out when no other handle shares it.
  auto operator co_await() && noexcept {
    return detail::FutureAwaiter<T, detail::OnCancel::propagate, true>(s_.get());
  }

  /// Whether both handles share one state.
  friend bool operator==(const Future& a, const Future& b) noexcept { return a.s_ == b.s_; }

  /// For combinators and the loop.
  detail::FutureStateBase* state() const noexcept { return s_.get(); }

 protected:
  /// The shared state (null for an empty handle).
  detail::Ref<detail::FutureStateBase> s_;
};

}  // namespace corio
