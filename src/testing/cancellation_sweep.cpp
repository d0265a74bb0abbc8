// cancellation_sweep (see testing/cancellation_sweep.hpp).
#include <corio/testing/cancellation_sweep.hpp>

#include <corio/detail/task_state.hpp>
#include <corio/errors.hpp>

#include <optional>
#include <utility>

namespace corio::testing {

namespace {

// What a run leaves behind, once the operation and `after` are done.
// Summed over every host: a cancel on a client can leak on its server
// (a handler left waiting, a connection never closed).
struct Residue {
  std::size_t sockets = 0, tasks = 0, timers = 0, io_waits = 0, programs = 0;
};

constexpr std::pair<const char*, std::size_t Residue::*> kResidue[] = {
    {"sockets left open", &Residue::sockets},
    {"tasks alive", &Residue::tasks},
    {"timers set", &Residue::timers},
    {"socket waits parked", &Residue::io_waits},
    {"programs running", &Residue::programs},
};

Residue residue_of(const Simulation& sim) {
  Residue left{sim.open_sockets()};
  left.programs = sim.running_programs();
  for (const Simulation::Host& h : sim.hosts()) {
    const LoopStats stats = h.loop().stats();
    left.tasks += stats.tasks_alive;
    left.timers += stats.timers;
    left.io_waits += stats.io_waits;
  }
  return left;
}

struct Outcome {
  std::uint64_t seed = 0;
  int steps = 0;
  bool reached = true;  // false: the run never offered the moment to cancel at
  Residue left;
  std::string problem;  // empty: none
};

// When, at the k-th suspension point, the cancel lands: as soon as the
// operation is suspended there, or once its wake-up is queued and before it
// runs (an item handed over, a lock granted, a notification sent: the window
// where a cancel loses what was given). The second is only there when the
// waking came from another task's step, not from the poll that also runs it.
enum class Moment { waiting, woken };

std::string error_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// Runs until the k-th point's moment; false if the operation went past it.
bool reach(Simulation& sim, const Task<void>& op, const detail::TaskBase& state, int k, Moment m,
           double limit) {
  const auto at = static_cast<std::uint32_t>(k);
  if (m == Moment::waiting) {
    sim.run_until([&] { return op.done() || state.steps() >= at; }, limit);
    return !op.done();
  }
  sim.run_until(
      [&] { return op.done() || state.steps() > at || (state.steps() == at && state.queued()); },
      limit);
  return !op.done() && state.steps() == at;
}

// One run: uncancelled (cancel_at 0), or cancelled at the given moment of
// its cancel_at-th point.
Outcome run_once(const std::function<SweepRun(Simulation&)>& make, const SimulationOptions& options,
                 double settle, int cancel_at, Moment moment = Moment::waiting) {
  // The end, in reverse order: the tasks left are cancelled and unwind
  // while what they share is alive; then that goes (sockets close) while
  // the loops are open; then the simulation.
  Simulation sim(options);
  std::optional<SweepRun> made;
  struct EndTasks {
    Simulation& sim;
    ~EndTasks() { sim.cancel_all_tasks(); }
  } end_tasks{sim};
  const SweepRun& run = made.emplace(make(sim));
  sim.run_for(settle);
  Outcome out;
  out.seed = sim.seed();
  Task<void> op = run.host->spawn(run.operation());
  const auto* state = static_cast<const detail::TaskBase*>(op.state());
  if (cancel_at > 0) {
    out.reached = reach(sim, op, *state, cancel_at, moment, run.limit);
    if (!out.reached && moment == Moment::woken) return out;  // the waiting run covers it
    if (!op.done()) op.cancel();
  }
  sim.run_until([&] { return op.done(); }, run.limit, "the operation did not end");
  out.steps = static_cast<int>(state->steps());
  if (std::exception_ptr e = op.cancelled() ? nullptr : op.exception()) {
    out.problem = "the operation failed: " + error_of(e);
    return out;
  }
  if (run.after) {
    Task<void> next = run.host->spawn(run.after());
    sim.run_until([&] { return next.done(); }, run.limit, "the next operation did not end");
    if (next.cancelled() || next.exception()) {
      out.problem = "the next operation failed: " +
                    (next.cancelled() ? std::string("cancelled") : error_of(next.exception()));
      return out;
    }
  }
  sim.run_for(1);  // what the cancel set going (closes, resets) settles
  out.left = residue_of(sim);
  return out;
}

void check(SweepReport& report, const Outcome& clean, const Outcome& o, const std::string& where) {
  if (!o.problem.empty()) report.violations.push_back(where + o.problem);
  for (const auto& [what, field] : kResidue) {
    if (o.left.*field > clean.left.*field) {
      report.violations.push_back(where + std::to_string(o.left.*field) + " " + what + ", " +
                                  std::to_string(clean.left.*field) + " uncancelled");
    }
  }
}

}  // namespace

std::string SweepReport::describe() const {
  std::string text = std::to_string(violations.size()) + " violation(s) over " +
                     std::to_string(points) + " suspension point(s):";
  for (const std::string& v : violations) text += "\n  " + v;
  return text;
}

SweepReport cancellation_sweep(const std::function<SweepRun(Simulation&)>& make,
                               SimulationOptions options, double settle) {
  SweepReport report;
  const Outcome clean = run_once(make, options, settle, 0);
  if (!clean.problem.empty()) {
    report.violations.push_back("uncancelled: " + clean.problem);
    return report;
  }
  report.points = clean.steps - 1;  // the last step finishes it
  const std::string seed = " (seed " + std::to_string(clean.seed) + ")";
  for (int k = 1; k <= report.points; ++k) {
    for (Moment m : {Moment::waiting, Moment::woken}) {
      const Outcome o = run_once(make, options, settle, k, m);
      if (!o.reached && m == Moment::woken) continue;
      if (m == Moment::woken) ++report.woken_points;
      check(report, clean, o,
            "cancelled at " + std::to_string(k) + " of " + std::to_string(report.points) +
                (m == Moment::woken ? ", woken," : "") + seed + ": ");
    }
  }
  return report;
}

}  // namespace corio::testing
