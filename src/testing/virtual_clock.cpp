#include <corio/testing/virtual_clock.hpp>

namespace corio::testing {

double VirtualClock::on_idle(double timeout) {
  // Nothing can happen before the next timer but real I/O, which a virtual
  // time test does not wait for: jump to the timer and poll without blocking.
  if (timeout > 0) {
    now_ += timeout;
    return 0;
  }
  return timeout;
}

void VirtualClock::advance(double seconds) {
  if (seconds > 0) now_ += seconds;
}

}  // namespace corio::testing
