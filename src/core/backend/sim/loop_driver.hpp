// The loop's side of a simulation's stepping (sim_world.cpp, sim_process.cpp):
// what only a friend of EventLoop can do.
#pragma once

#include <limits>
#include <memory>

#include <corio/detail/task_state.hpp>
#include <corio/event_loop.hpp>

#include "core/backend/choose.hpp"
#include "core/loop_state.hpp"
#include "core/signals.hpp"

namespace corio::detail {

struct LoopDriver {
  static std::unique_ptr<EventLoop> make(std::unique_ptr<IoBackend> backend,
                                         std::shared_ptr<Clock> clock) {
    RunOptions opts;
    opts.clock = std::move(clock);
    std::unique_ptr<EventLoop> loop(new EventLoop(opts, BackendChoice{std::move(backend), {}}));
    // Its signals are the simulation's (SimWorld::signal), never the thread's.
    loop->signals_ = std::make_unique<SignalHandlers>(*loop, SignalHandlers::Source::simulation);
    return loop;
  }
  // A signal for the loop's handler, run as a callback on the loop as the
  // signalfd's reader would; false if it has none now.
  static bool signal(EventLoop& loop, int signo) {
    if (!loop.signals_->handles(signo)) return false;
    loop.call_soon([&loop, signo] { (void)loop.signals_->deliver(signo); });
    return true;
  }
  // Whether an iteration would do anything but poll.
  static bool runnable(EventLoop& loop) {
    const LoopState& st = *loop.state_;
    return !loop.ready.empty() || (!st.timers.empty() && st.timers.top_when() <= loop.time()) ||
           st.ts_pending.load(std::memory_order_acquire);
  }
  // Whether a thread will post to the loop soon: a run_in_executor call on
  // a pool of the user's, not back yet. (The default pool's calls run
  // inline in the host's turn: by the time no host can run, they are back.
  // A ThreadsafeHold is not counted: its thread may post at any time, or
  // never, and virtual time cannot stand still for it.)
  static bool awaits_thread(EventLoop& loop) { return loop.executor_calls > 0; }
  static double next_timer(EventLoop& loop) {
    const LoopState& st = *loop.state_;
    return st.timers.empty() ? std::numeric_limits<double>::infinity() : st.timers.top_when();
  }
  static bool has_tasks(EventLoop& loop) { return !loop.tasks.empty(); }
  static void cancel_tasks(EventLoop& loop) {
    for (TaskBase* t : loop.tasks.snapshot()) t->request_cancel("the simulation ended");
  }
  static void step(EventLoop& loop) {
    loop.enter_run();
    try {
      loop.run_once();
    } catch (...) {
      loop.leave_run();
      throw;
    }
    loop.leave_run();
  }
};

}  // namespace corio::detail
