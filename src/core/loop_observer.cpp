// The loop's side of its observer (detail/loop_observer.hpp): the factory the
// debug layer registers, the stall detector's controls, which the observer
// holds, and the wait that tells it the loop is idle.
#include <atomic>

#include <corio/event_loop.hpp>

namespace corio {

namespace {
// Set once at static initialization; atomic because loops may be made on
// any thread, maybe while another library's initializer runs.
std::atomic<detail::LoopObserverFactory> g_observer_factory{nullptr};
}  // namespace

void detail::set_loop_observer_factory(LoopObserverFactory factory) noexcept {
  g_observer_factory.store(factory, std::memory_order_release);
}

detail::LoopObserverFactory detail::loop_observer_factory() noexcept {
  return g_observer_factory.load(std::memory_order_acquire);
}

void EventLoop::set_stall_detector(StallOptions opts) {
  check_open();
  if (!observer_) {
    if (!opts.enabled) return;
    throw RuntimeError("the stall detector is in corio's debug layer, which this program does not link");
  }
  observer_->set_stall_detector(opts);
  observed_ = observer_->watching();
}

StallOptions EventLoop::stall_detector() const {
  if (observer_) return observer_->stall_detector();
  StallOptions off;
  off.enabled = false;
  return off;
}

// A loop blocked in the poller is idle, not stalled: the watchdog sleeps.
int EventLoop::wait_for_io_observed(double timeout) {
  observer_->blocking(true);
  struct Unblock {
    detail::LoopObserver* observer;
    ~Unblock() { observer->blocking(false); }
  } unblock{observer_.get()};
  return wait_for_io(timeout);
}

}  // namespace corio
