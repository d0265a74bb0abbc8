// A test clock for the deadlock check: time stands still, and the first time
// the loop would block with no deadline (just after the check looked), it runs
// `action`: the peer, thread or signal that the blocked wait was for.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include <corio/clock.hpp>
#include <corio/event_loop.hpp>

namespace corio_sync_test {

struct ActOnIdle final : corio::Clock {
  std::function<void()> action;
  bool acted = false;
  double now() override { return 0; }
  bool is_virtual() const noexcept override { return true; }
  double on_idle(double timeout) override {
    if (timeout < 0 && action) {
      acted = true;
      std::exchange(action, nullptr)();
    }
    return timeout;
  }
};

// Options for a loop on an ActOnIdle clock.
inline corio::RunOptions act_on_idle(const std::shared_ptr<ActOnIdle>& clock,
                                     corio::OnDeadlock mode = corio::OnDeadlock::report) {
  corio::RunOptions opts;
  opts.clock = clock;
  opts.on_deadlock = mode;
  return opts;
}

}  // namespace corio_sync_test
