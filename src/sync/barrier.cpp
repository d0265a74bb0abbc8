// Barrier: asyncio's state machine (CPython Lib/asyncio/locks.py) with the
// Condition replaced by one wait queue, woken whole on every state change.
#include <corio/barrier.hpp>
#include <corio/errors.hpp>

namespace corio {

using detail::WaitQueue;

const detail::AwaitPoint::Ops Barrier::kWaitOps{&WaitQueue::Waiter::on_cancel, "barrier",
                                                  &WaitQueue::Waiter::describe};

// One wait for the next state change. A woken waiter cancelled before it ran
// needs no abandon function: every waiter was woken, so no wake-up is owed.
detail::Park Barrier::park() noexcept { return detail::Park(waiters_, this, nullptr, &kWaitOps); }

Barrier::Barrier(int parties) : parties_(static_cast<std::size_t>(parties)) {
  if (parties < 1) throw ValueError("parties must be > 0");
}

Coro<std::size_t> Barrier::wait() {
  // The previous round is still leaving, or a reset is: not this round yet.
  while (state_ == State::draining || state_ == State::resetting) co_await park();
  if (state_ == State::broken) throw BrokenBarrierError();
  const std::size_t index = count_++;
  // From here the task counts as inside: it must leave() however it ends
  // (asyncio's `finally`). Not a destructor: a frame destroyed at loop close
  // must not wake other tasks.
  try {
    if (index + 1 == parties_) {
      state_ = State::draining;  // the round is complete: release everyone
      waiters_.wake_all();
    } else {
      while (state_ == State::filling) co_await park();
      if (state_ == State::broken || state_ == State::resetting) throw BrokenBarrierError();
    }
  } catch (...) {
    leave();
    throw;
  }
  leave();
  co_return index;
}

// The last task out of a draining or resetting barrier opens it for the next
// round and lets in the arrivals blocked meanwhile.
void Barrier::leave() noexcept {
  if (--count_ > 0 || (state_ != State::draining && state_ != State::resetting)) return;
  state_ = State::filling;
  waiters_.wake_all();
}

Coro<void> Barrier::reset() {
  // With tasks inside, they must leave (with BrokenBarrierError) first.
  state_ = count_ > 0 ? State::resetting : State::filling;
  waiters_.wake_all();
  co_return;
}

Coro<void> Barrier::abort() {
  state_ = State::broken;
  waiters_.wake_all();
  co_return;
}

}  // namespace corio
