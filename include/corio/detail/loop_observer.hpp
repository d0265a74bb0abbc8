// The seam through which the debug layer (src/debug: the stall detector, the
// inspection server) watches a loop, so that the loop itself carries none of
// them. Internal; not part of the API.
//
// The contract, from the loop's side:
//   1. A loop has at most one observer, made at construction by the factory
//      the debug layer registers when it is linked in (every program linked
//      with corio::corio has it); without one the loop runs unobserved.
//   2. Every hook runs on the loop's thread and never throws; what an
//      observer reports goes through call_exception_handler.
//   3. running(true) when run_forever starts on a thread, running(false)
//      when it returns.
//   4. While watching() is true (and only then: an unobserved loop pays one
//      test of a bool), step_begin() comes before each ready batch (in debug
//      mode, before each step) and step_end(task) after it, with the step's
//      task when the loop knows it (debug mode), else null; blocking(true)
//      before a poll that may block and blocking(false) after it. The loop
//      reads watching() again after each batch or step and after
//      set_stall_detector(), since a step may turn the detector on or off.
//   5. closing() first thing in EventLoop::close(), while the loop's tasks
//      still exist; the observer is destroyed at the end of close().
#pragma once

#include <cstdint>
#include <memory>

#include <corio/stall_detector.hpp>

namespace corio {
class EventLoop;
struct RunOptions;
}  // namespace corio

namespace corio::detail {

class TaskBase;

class LoopObserver {
 public:
  virtual ~LoopObserver() = default;

  virtual bool watching() const noexcept = 0;
  virtual void running(bool on) noexcept = 0;
  virtual void step_begin() noexcept = 0;
  virtual void step_end(TaskBase* task) noexcept = 0;
  virtual void blocking(bool on) noexcept = 0;
  virtual void closing() noexcept = 0;

  // The stall detector behind EventLoop::set_stall_detector, stall_detector()
  // and LoopStats::stalls.
  virtual void set_stall_detector(StallOptions opts) = 0;
  virtual StallOptions stall_detector() const = 0;
  virtual std::uint64_t stalls() const noexcept = 0;
};

// The observer of a new loop, for its options (and the environment's say).
using LoopObserverFactory = std::unique_ptr<LoopObserver> (*)(EventLoop& loop, const RunOptions& opts);

// Called once, by the debug layer's static initializer.
void set_loop_observer_factory(LoopObserverFactory factory) noexcept;
// The registered factory, or null.
LoopObserverFactory loop_observer_factory() noexcept;

}  // namespace corio::detail
