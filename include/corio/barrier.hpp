/// \file
/// corio::Barrier: asyncio.Barrier, a cyclic barrier for a fixed number of
/// parties.
///
/// <!-- doc: body -->
///     corio::Barrier b(3);
///     std::size_t index = co_await b.wait();   // in each of 3 tasks
///
/// Suspends: wait() until `parties` tasks have arrived; also, on arrival,
/// while the previous round is still draining out or a reset is in progress.
/// Resumed by: the last arrival (index parties-1, which does not suspend),
/// abort(), reset(), and the last task to leave a draining or resetting
/// barrier, which lets the blocked arrivals in.
///
/// The state machine is asyncio's (filling -> draining -> filling, with
/// resetting and broken), and so are its edge cases: a task cancelled while
/// filling simply leaves, and the round completes when enough others arrive.
/// There is no lock: on one loop thread every state change is atomic, so one
/// wait queue serves as asyncio's condition variable. Each state change wakes
/// every waiter, and each re-checks the state in a loop.
#pragma once

#include <cstddef>

#include <corio/coro.hpp>
#include <corio/detail/wait_queue.hpp>

namespace corio {

/// asyncio.Barrier: `parties` tasks wait in wait() until all have arrived (see the top of this
/// file).
class Barrier {
 public:
  /// Throws ValueError if parties < 1.
  explicit Barrier(int parties);
  Barrier(const Barrier&) = delete;
  Barrier& operator=(const Barrier&) = delete;

  /// Returns the arrival index of this task in its round, 0 .. parties-1.
  /// Throws BrokenBarrierError if the barrier is, or becomes, broken (abort)
  /// or is reset while the task waits.
  Coro<std::size_t> wait();
  /// Back to empty: tasks waiting now get BrokenBarrierError; once they have
  /// left, the barrier is usable again (also after abort). Completes at once.
  Coro<void> reset();
  /// Breaks the barrier: tasks waiting now and every later wait() get
  /// BrokenBarrierError, until reset(). Completes at once.
  Coro<void> abort();

  /// How many tasks make a round.
  std::size_t parties() const noexcept { return parties_; }
  /// Tasks waiting for the current round to fill (0 while draining).
  std::size_t n_waiting() const noexcept { return state_ == State::filling ? count_ : 0; }
  /// True after abort(), until reset().
  bool broken() const noexcept { return state_ == State::broken; }

 private:
  enum class State { filling, draining, resetting, broken };
  detail::Park park() noexcept;
  void leave() noexcept;
  static const detail::AwaitPoint::Ops kWaitOps;

  std::size_t parties_;
  // Tasks inside wait() past the arrival check: those filling the round, and
  // while draining or resetting, those not yet gone.
  std::size_t count_ = 0;
  State state_ = State::filling;
  detail::WaitQueue waiters_;
};

}  // namespace corio
