/// \file
/// Timeouts: asyncio.timeout, asyncio.timeout_at and asyncio.wait_for.
///
/// Two shapes, because C++ has no `async with`:
///
/// <!-- doc: body (std::function<corio::Coro<>(std::string)> fetch, std::string url, std::function<corio::Coro<>()> step1, std::function<corio::Coro<>()> step2) -->
///     co_await corio::timeout(2s, fetch(url));              // a wrapper around one awaitable
///     co_await corio::timeout(2s, [&](corio::Timeout& cm) -> corio::Coro<> {
///       co_await step1();                                   // a block, with the Timeout object
///       cm.reschedule(corio::get_running_loop().time() + 5);
///       co_await step2();
///     });
///
/// The block's body is awaited inline in the current task. When the deadline
/// passes, the task is cancelled; the CancelledError unwinds the body
/// (destructors run) and turns into TimeoutError at the block's end. A
/// cancellation that came from elsewhere stays a CancelledError: the decision
/// uses the task's cancelling() count, exactly as asyncio.timeout does, so
/// nested timeouts and outer cancellations compose. std::nullopt as the delay
/// or deadline disables the timeout (asyncio's None); reschedule() moves it.
///
/// Suspends: only where the awaitable or body does. Resumed by: whatever the
/// body awaits, or the deadline's cancellation.
#pragma once

#include <chrono>
#include <optional>

#include <corio/detail/awaitable.hpp>

namespace corio {

/// asyncio.Timeout: the deadline of one timeout block, handed to its body.
/// Created entered (in the running task); not copyable or movable (its timer
/// sits in the loop's heap).
class Timeout : private detail::TimerNode {
 public:
  /// A deadline at `when` (loop time; nullopt: none) for the running task.
  explicit Timeout(std::optional<double> when);
  Timeout(const Timeout&) = delete;
  Timeout& operator=(const Timeout&) = delete;
  ~Timeout();

  /// The deadline on the loop's time() scale; nullopt when disabled.
  std::optional<double> when() const noexcept { return when_; }
  /// Moves the deadline (nullopt disables it); a deadline already past
  /// expires on the next loop iteration. RuntimeError once expiring or over.
  void reschedule(std::optional<double> when);
  /// True once the deadline passed during the block.
  bool expired() const noexcept { return state_ == State::expiring || state_ == State::expired; }

  /// The block's CancelledError handler: throws TimeoutError if the deadline
  /// caused the cancellation, else returns (the caller rethrows).
  void on_cancelled();

 private:
  enum class State : unsigned char { entered, expiring, expired };
  static void on_expire(detail::TimerNode* n) noexcept;

  detail::TaskBase& task_;
  EventLoop& loop_;
  std::optional<double> when_;
  int cancelling_at_entry_;
  State state_ = State::entered;
};

namespace detail {

template <class Body>
concept TimeoutBody = requires(Body& b, Timeout& cm) {
  { b(cm) } -> CoroType;
};
template <class Body>
using timeout_body_result_t = typename std::invoke_result_t<Body&, Timeout&>::value_type;

template <class D>
struct IsDuration : std::false_type {};
template <class Rep, class Period>
struct IsDuration<std::chrono::duration<Rep, Period>> : std::true_type {};
template <class D>
struct IsOptionalDuration : std::false_type {};
template <class D>
struct IsOptionalDuration<std::optional<D>> : IsDuration<D> {};

// A timeout's length: a std::chrono duration, an optional of one, or
// std::nullopt for none (asyncio's None).
template <class D>
concept Delay =
    std::is_same_v<D, std::nullopt_t> || IsDuration<D>::value || IsOptionalDuration<D>::value;

template <Delay D>
std::optional<double> seconds_of(const D& delay) {
  if constexpr (std::is_same_v<D, std::nullopt_t>) {
    return std::nullopt;
  } else if constexpr (IsDuration<D>::value) {
    return std::chrono::duration<double>(delay).count();
  } else {
    if (!delay) return std::nullopt;
    return std::chrono::duration<double>(*delay).count();
  }
}

// A deadline as given: on the loop's time() scale, or relative to the
// moment the combinator starts (combinators are lazy: the clock starts at
// the await, not at the call).
struct Deadline {
  std::optional<double> when;
  bool relative = false;
  std::optional<double> resolve() const {
    if (!when || !relative) return when;
    return get_running_loop().time() + *when;
  }
};

template <class T, class S>
Coro<T> await_with_deadline(Deadline deadline, S aw) {
  Timeout cm(deadline.resolve());
  try {
    co_return co_await awaitable_of<S>(aw);
  } catch (const CancelledError&) {
    cm.on_cancelled();
    throw;
  }
}

template <class T, class Body>
Coro<T> run_with_deadline(Deadline deadline, Body body) {
  Timeout cm(deadline.resolve());
  try {
    co_return co_await body(cm);
  } catch (const CancelledError&) {
    cm.on_cancelled();
    throw;
  }
}

// The deadline, then the awaitable or the block.
template <class X>
auto with_deadline(Deadline when, X&& x) {
  if constexpr (TimeoutBody<std::remove_cvref_t<X>>) {
    using Body = std::remove_cvref_t<X>;
    return run_with_deadline<timeout_body_result_t<Body>, Body>(when, std::forward<X>(x));
  } else {
    static_assert(kStorable<X>, CORIO_STORED_AWAITABLE_MESSAGE("timeout()"));
    return await_with_deadline<result_t<X>, stored_t<X>>(when, std::forward<X>(x));
  }
}

template <class X>
concept AwaitableOrTimeoutBody = Awaitable<X> || TimeoutBody<std::remove_cvref_t<X>>;

// wait_for with a timeout <= 0, as asyncio: a done Future or Task gives its
// result; a pending one is cancelled and waited for (TimeoutError unless it
// swallowed the cancellation); anything else is never started.
template <class T, class S>
Coro<T> wait_for_expired(S aw) {
  if constexpr (FutureHandle<std::remove_cvref_t<S>>) {
    if (!aw.done()) {
      TaskBase& self = current_task_for("wait_for()");
      const int cancelling = self.cancelling();
      aw.cancel();
      try {
        // Detached: a cancellation of this task ends the wait, not aw's.
        co_await FutureAwaiter<T, OnCancel::detach>(aw.state());
      } catch (const CancelledError&) {
        if (self.cancelling() > cancelling || !aw.cancelled()) throw;  // ours: it propagates
        throw TimeoutError();
      }
    }
    co_return take_result<T>(aw.state(), false);
  } else {
    throw TimeoutError();
  }
}

}  // namespace detail

/// co_await timeout(delay, aw_or_body): delay is a std::chrono duration, an
/// optional of one, or std::nullopt (no limit).
template <detail::Delay D, detail::AwaitableOrTimeoutBody X>
auto timeout(const D& delay, X&& x) {
  return detail::with_deadline({detail::seconds_of(delay), true}, std::forward<X>(x));
}

/// `when` is on the loop's time() scale; std::nullopt: no limit.
template <detail::AwaitableOrTimeoutBody X>
auto timeout_at(std::optional<double> when, X&& x) {
  return detail::with_deadline({when, false}, std::forward<X>(x));
}

/// asyncio.wait_for: the awaitable with a timeout; TimeoutError on expiry, and
/// the inner work is cancelled. An exception the inner work raises while it
/// is being cancelled propagates instead of TimeoutError.
template <detail::Awaitable A, detail::Delay D>
Coro<detail::result_t<A>> wait_for(A&& aw, const D& delay) {
  static_assert(detail::kStorable<A>, CORIO_STORED_AWAITABLE_MESSAGE("wait_for()"));
  using T = detail::result_t<A>;
  const std::optional<double> secs = detail::seconds_of(delay);
  if (secs && *secs <= 0)
    return detail::wait_for_expired<T, detail::stored_t<A>>(std::forward<A>(aw));
  return detail::await_with_deadline<T, detail::stored_t<A>>({secs, true}, std::forward<A>(aw));
}

}  // namespace corio
