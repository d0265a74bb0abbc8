// Virtual time for tests (Trio's MockClock with autojump_threshold=0, Tokio's
// start_paused): time stands still while anything is ready to run, and jumps
// straight to the next timer whenever the loop would otherwise wait. A test of
// "sleep 10 minutes, then time out" runs in microseconds, the same way every
// time.
//
//   auto clock = std::make_shared<corio::testing::VirtualClock>();
//   corio::run(main(), {.clock = clock});
//
// Only timers advance virtual time: a loop waiting for real I/O with no timer
// pending blocks as usual.
#pragma once

#include <corio/clock.hpp>

namespace corio::testing {

class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(double start = 0.0) : now_(start) {}
  double now() override { return now_; }
  double on_idle(double timeout) override;
  bool is_virtual() const noexcept override { return true; }
  // Moves time forward by hand (tests that want to stop between timers).
  void advance(double seconds);

 private:
  double now_;
};

}  // namespace corio::testing
