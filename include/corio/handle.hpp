/// \file
/// corio::Handle and corio::TimerHandle: what call_soon / call_later return.
///
/// A handle owns a scheduled callback. cancel() stops it from running (and
/// releases what the callback captured at once, as asyncio does); a cancelled
/// timer leaves the timer heap immediately.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

#include <corio/detail/frame_alloc.hpp>
#include <corio/detail/intrusive.hpp>

namespace corio {

class EventLoop;

namespace detail {

// An entry of the loop's timer min-heap, ordered by (when, seq). Embedded in
// whatever waits for it: a call_later handle, a sleeping task's awaiter.
struct TimerNode {
  static constexpr std::size_t kNotInHeap = std::numeric_limits<std::size_t>::max();
  double when = 0;
  std::size_t heap_index = kNotInHeap;
  // Called in the loop's "expired timers" phase, in deadline order. Must only
  // schedule work (push on the ready queue), never run user code.
  void (*expire)(TimerNode*) noexcept = nullptr;
  bool in_heap() const noexcept { return heap_index != kNotInHeap; }
};

class CallbackHandle final : public ReadyNode, public TimerNode, public Pooled {
 public:
  CallbackHandle(EventLoop* loop, std::function<void()> fn) noexcept
      : loop(loop), fn(std::move(fn)) {}
  EventLoop* loop;
  std::function<void()> fn;
  // Atomic because call_soon_threadsafe() hands a Handle to a foreign thread
  // while the loop holds the queued reference.
  std::atomic<std::uint32_t> refs{1};
  bool cancelled = false;
  bool queued = false;
  bool running = false;  // fn is executing: cancel() must not destroy it

  friend void add_ref(CallbackHandle* h) noexcept {
    h->refs.fetch_add(1, std::memory_order_relaxed);
  }
  friend void release(CallbackHandle* h) noexcept {
    if (h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete h;
  }
};

}  // namespace detail

/// A callback scheduled by call_soon() (details at the top of handle.hpp).
class Handle {
 public:
  Handle() noexcept = default;
  /// A handle to a scheduled callback (the loop makes them).
  explicit Handle(detail::Ref<detail::CallbackHandle> h) noexcept : h_(std::move(h)) {}
  /// Stops the callback from running and releases what it captured, at once.
  void cancel();
  /// Whether cancel() was called.
  bool cancelled() const noexcept { return h_ && h_->cancelled; }
  /// False for an empty handle.
  explicit operator bool() const noexcept { return static_cast<bool>(h_); }

 protected:
  /// The scheduled callback (null for an empty handle).
  detail::Ref<detail::CallbackHandle> h_;
};

/// A callback scheduled by call_later() or call_at().
class TimerHandle : public Handle {
 public:
  /// The Handle's constructors.
  using Handle::Handle;
  /// The deadline, on the loop's time() scale.
  double when() const noexcept { return h_->when; }
};

}  // namespace corio
