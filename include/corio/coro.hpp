/// \file
/// corio::Coro<T>: the return type of every async function.
///
/// Lazy, like a Python coroutine object: calling the function allocates its
/// frame and runs nothing. `co_await coro` runs it inline in the awaiting task,
/// with no task and no loop round trip (`await coro()` in Python): nested on the
/// stack when it finishes at once, through the trampoline in detail/driver.hpp
/// otherwise, so chains of any depth use bounded stack. Move-only, and
/// awaiting consumes it: a second co_await is a RuntimeError, as in asyncio.
/// [[nodiscard]], so a forgotten co_await is a compiler warning.
///
/// Suspends: never by itself; only where its body awaits something.
/// Resumed by: the task that drives it (see task.hpp).
#pragma once

#include <coroutine>
#include <cstdint>
#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include <corio/detail/await_site.hpp>
#include <corio/detail/driver.hpp>
#include <corio/detail/frame_alloc.hpp>

namespace corio {

/// The return type of every async function (defined below).
template <class T = void>
class Coro;

namespace detail {

[[noreturn]] void throw_reused_coro();

// g++ 12 lays a coroutine's frame out wrongly when a co_await sits in the
// condition of an if, while, for, do or switch and the body declares no
// variable at all: the condition's hidden variable goes before the frame's
// header, so the promise is 8 bytes further than coroutine_handle assumes
// and no handle can resume the coroutine (it hangs, or runs on garbage).
// Nothing a promise does avoids it (a minimal task type without corio shows
// it too); Coro at least stops such a coroutine where it is created, with
// a message, instead of a silent hang. clang lays frames out right.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ <= 12
#define CORIO_CHECK_FRAME_LAYOUT 1
inline constinit thread_local const void* tls_starting_promise = nullptr;
#endif
[[noreturn]] void abort_misplaced_frame() noexcept;

class CoroPromiseBase {
 public:
  // Suspends a new coroutine (Coro is lazy); under g++ 12 it also checks that
  // the frame the compiler hands over (the true one) holds this promise where
  // coroutine_handle will look for it.
  struct InitialAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    void await_suspend([[maybe_unused]] std::coroutine_handle<P> self) noexcept {
#ifdef CORIO_CHECK_FRAME_LAYOUT
      if (static_cast<const CoroPromiseBase*>(&self.promise()) != tls_starting_promise) {
        abort_misplaced_frame();
      }
#endif
    }
    void await_resume() noexcept {}
  };
  InitialAwaiter initial_suspend() noexcept {
#ifdef CORIO_CHECK_FRAME_LAYOUT
    // Read back at once by InitialAwaiter::await_suspend: nothing runs between.
    tls_starting_promise = this;
#endif
    return {};
  }

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) noexcept {
      CoroPromiseBase& p = h.promise();
      // Started inline: return into the awaiter's await_suspend, which lets
      // the awaiting coroutine continue without suspending. A task's root
      // has no continuation: the driver stops and the task collects it.
      if (p.started_inline()) return;
      if (auto c = p.continuation()) transfer_to(c);
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  CoroPromiseBase() noexcept : site_() {}
  ~CoroPromiseBase() {
    if (failed()) exception_.~exception_ptr();
  }
  CoroPromiseBase(const CoroPromiseBase&) = delete;
  CoroPromiseBase& operator=(const CoroPromiseBase&) = delete;

  void unhandled_exception() noexcept {
    note_unwind(site_);
    site_.~AwaitSite();
    new (&exception_) std::exception_ptr(std::current_exception());
    continuation_ |= kFailed;
  }
  // Whether the body ended in an exception, and that exception.
  bool failed() const noexcept { return (continuation_ & kFailed) != 0; }
  std::exception_ptr exception() const noexcept { return failed() ? exception_ : nullptr; }
  void rethrow_if_failed() const {
    if (failed()) std::rethrow_exception(exception_);
  }

  // Every co_await in a Coro body passes through here: it records where the
  // coroutine waits (one pointer store with g++), which is what call graphs
  // and async stack traces read. The awaitable itself is passed on untouched.
  template <class A>
  auto await_transform(A&& awaitable, AwaitSiteArg where = CORIO_AWAIT_SITE_HERE) {
    site_ = to_await_site(where);
    using W = decltype(awaiter_of(static_cast<A&&>(awaitable)));
    return SiteAwaiter<W>{awaiter_of(static_cast<A&&>(awaitable))};
  }
  // The co_await this coroutine is (or last was) suspended at; not once it failed.
  const AwaitSite& await_site() const noexcept { return site_; }

  static void* operator new(std::size_t n) { return frame_alloc(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_free(p, n); }

  std::coroutine_handle<> continuation() const noexcept {
    return std::coroutine_handle<>::from_address(reinterpret_cast<void*>(continuation_ & ~kFlags));
  }
  bool started_inline() const noexcept { return (continuation_ & kInline) != 0; }
  // Whether the awaiting coroutine is a Coro too, whose promise a call graph
  // may read at the usual place in its frame (see parent()).
  bool parent_is_coro() const noexcept { return (continuation_ & kCoroParent) != 0; }
  void set_continuation(std::coroutine_handle<> c, bool inline_start,
                        bool coro_parent = false) noexcept {
    continuation_ = reinterpret_cast<std::uintptr_t>(c.address()) | (inline_start ? kInline : 0) |
                    (coro_parent ? kCoroParent : 0);
  }
  // Back from an inline start that suspended: from now on it transfers back
  // when done. (Keeps kFailed: the body may have failed already.)
  void clear_inline() noexcept { continuation_ &= ~kInline; }
  // The awaiting Coro's promise, or nullptr when the awaiter is no Coro.
  // Both compilers place the promise right after the two frame pointers,
  // aligned to its own alignment; parent_is_coro() holds only for promises
  // aligned as CoroPromiseBase or to at most 16, where that offset is 16.
  CoroPromiseBase* parent() const noexcept {
    if (!parent_is_coro()) return nullptr;
    return &std::coroutine_handle<CoroPromiseBase>::from_address(continuation().address()).promise();
  }

 private:
  // The awaiting coroutine's frame address, with bit 0 saying "started
  // inline" (frames are at least 8-aligned): a flag of its own would cost
  // 8 bytes in every frame, and a suspended task's frame is on the
  // 256-byte budget.
  static constexpr std::uintptr_t kInline = 1;
  static constexpr std::uintptr_t kCoroParent = 2;
  static constexpr std::uintptr_t kFailed = 4;  // exception_ holds the body's exception
  static constexpr std::uintptr_t kFlags = kInline | kCoroParent | kFailed;
  // An exception leaves this coroutine: the running task records where
  // (task_state.cpp), for the "never retrieved" report's async traceback.
  static void note_unwind(const AwaitSite& site) noexcept;
  std::uintptr_t continuation_ = 0;
  // A coroutine that is running or suspended has a site; one that failed has
  // an exception and is only waiting to be collected: one slot for both keeps
  // a frame 8 bytes smaller (the 256-byte budget).
  union {
    AwaitSite site_;
    std::exception_ptr exception_;
  };
};

// Whether a call graph may read P's frame as a Coro's (CoroPromiseBase::parent()).
template <class P>
constexpr bool is_coro_promise() noexcept {
  if constexpr (std::is_base_of_v<CoroPromiseBase, P>) {
    return alignof(P) <= 16;
  } else {
    return false;
  }
}

template <class T>
class CoroPromise final : public CoroPromiseBase {
 public:
  Coro<T> get_return_object() noexcept;
  template <class U = T>
  requires std::is_convertible_v<U&&, T>
  void return_value(U&& v) { value_.emplace(std::forward<U>(v)); }
  T take() {
    rethrow_if_failed();
    return std::move(*value_);
  }
  std::optional<T> value_;
};

template <>
class CoroPromise<void> final : public CoroPromiseBase {
 public:
  Coro<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() {
    rethrow_if_failed();
  }
};

}  // namespace detail

/// The return type of an async function: lazy, move-only, run by co_await (see the top of this
/// file).
template <class T>
class [[nodiscard]] Coro {
 public:
  /// The promise the compiler's coroutine machinery uses.
  using promise_type = detail::CoroPromise<T>;
  /// What co_await gives.
  using value_type = T;
  /// The coroutine's handle.
  using handle_type = std::coroutine_handle<promise_type>;

  Coro() noexcept = default;
  /// Owns the frame h (the promise makes one).
  explicit Coro(handle_type h) noexcept : h_(h) {}
  /// Takes o's coroutine; o becomes empty.
  Coro(Coro&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  /// Destroys its own coroutine (if any) and takes o's.
  Coro& operator=(Coro&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Coro(const Coro&) = delete;
  Coro& operator=(const Coro&) = delete;
  ~Coro() { reset(); }

  /// Whether it holds a coroutine not yet run (false once awaited, moved from or released).
  bool valid() const noexcept { return static_cast<bool>(h_); }

  /// Owns the frame from operator co_await on: awaiting consumes the Coro,
  /// and the frame is destroyed with the awaiter, at the end of the full
  /// expression that awaited it.
  class Awaiter {
   public:
    /// Takes over the frame it runs.
    explicit Awaiter(handle_type h) noexcept : h_(h) {}
    /// Movable until awaited.
    Awaiter(Awaiter&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Awaiter& operator=(Awaiter&&) = delete;
    ~Awaiter() {
      if (h_) h_.destroy();
    }
    /// Never ready: the coroutine runs in await_suspend().
    bool await_ready() const noexcept { return false; }
    /// Runs the coroutine right here, nested on the stack, up to a bounded
    /// depth: if it finishes without suspending (the common case), the awaiter
    /// goes on without ever suspending. Past the bound, or when it does
    /// suspend, control goes through the trampoline (detail/driver.hpp).
    template <class P>
    bool await_suspend(std::coroutine_handle<P> awaiting) noexcept {
      auto& p = h_.promise();
      constexpr bool coro_parent = detail::is_coro_promise<P>();
      if (detail::InlineScope scope; scope.entered()) {
        p.set_continuation(awaiting, true, coro_parent);
        h_.resume();
        if (h_.done()) return false;  // the common case: no store back into a dead frame
        p.clear_inline();
        return true;
      }
      p.set_continuation(awaiting, false, coro_parent);
      detail::transfer_to(h_);
      return true;
    }
    /// The coroutine's result, or it throws the coroutine's exception.
    T await_resume() { return h_.promise().take(); }

   private:
    handle_type h_;
  };

  /// Awaiting consumes the coroutine: it runs once. Awaiting it again, or
  /// awaiting a Coro moved from or handed to a task, is asyncio's
  /// RuntimeError, not undefined behaviour.
  Awaiter operator co_await() && { return Awaiter(take_for_await()); }
  /// An lvalue is consumed too: awaiting it again is a RuntimeError.
  Awaiter operator co_await() & { return Awaiter(take_for_await()); }

  /// Hands the frame over (to a Task); the Coro becomes empty.
  handle_type release() noexcept { return std::exchange(h_, nullptr); }

 private:
  handle_type take_for_await() {
    if (!h_) detail::throw_reused_coro();
    return std::exchange(h_, nullptr);
  }
  void reset() noexcept {
    if (h_) std::exchange(h_, nullptr).destroy();
  }
  handle_type h_;
};

template <class T>
Coro<T> detail::CoroPromise<T>::get_return_object() noexcept {
  return Coro<T>(Coro<T>::handle_type::from_promise(*this));
}
inline Coro<void> detail::CoroPromise<void>::get_return_object() noexcept {
  return Coro<void>(Coro<void>::handle_type::from_promise(*this));
}

namespace detail {

template <class A>
struct IsCoro : std::false_type {};
template <class T>
struct IsCoro<Coro<T>> : std::true_type {};
template <class A>
concept CoroType = IsCoro<std::remove_cvref_t<A>>::value;

// A callable that returns a Coro when called with args: the other shape of
// create_task (create_task(fn, args...)).
template <class F, class... Args>
concept CoroCallable = !CoroType<F> && std::invocable<std::decay_t<F>&, std::decay_t<Args>&...> &&
                       CoroType<std::invoke_result_t<std::decay_t<F>&, std::decay_t<Args>&...>>;
template <class F, class... Args>
using callable_result_t =
    typename std::invoke_result_t<std::decay_t<F>&, std::decay_t<Args>&...>::value_type;

// fn and args live in this coroutine's frame for as long as the Coro that
// fn(args...) returns runs, so a lambda's captures stay valid however long
// it suspends (folly's co_invoke). A capturing lambda coroutine called
// directly dangles after its first suspension: its closure is a temporary.
template <class R, class F, class... Args>
Coro<R> invoke_owned(F fn, Args... args) {
  co_return co_await std::invoke(fn, args...);
}

}  // namespace detail

static_assert(std::is_move_constructible_v<Coro<int>> && !std::is_copy_constructible_v<Coro<int>>);

}  // namespace corio
