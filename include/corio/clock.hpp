/// \file
/// The clock an event loop reads time through.
///
/// The loop never calls the OS clock directly: it asks its Clock, so tests can
/// give it a corio::testing::VirtualClock and run hours of timer logic in
/// microseconds, deterministically (Trio's MockClock, Tokio's paused time).
#pragma once

namespace corio {

/// Where a loop reads its time: MonotonicClock, or a testing::VirtualClock.
class Clock {
 public:
  virtual ~Clock() = default;
  /// Seconds on a monotonic scale.
  virtual double now() = 0;
  /// The loop is about to wait for I/O for up to `timeout` seconds (negative:
  /// no deadline). Returns how long it should really wait. A virtual clock
  /// advances itself here and answers 0.
  virtual double on_idle(double timeout) { return timeout; }
  /// A virtual clock makes the loop check for ready I/O before it asks
  /// on_idle() to jump, so that I/O is handled at the instant it is ready.
  virtual bool is_virtual() const noexcept { return false; }
};

/// CLOCK_MONOTONIC, as asyncio's loop.time() uses time.monotonic().
class MonotonicClock final : public Clock {
 public:
  double now() override;
};

}  // namespace corio
