// cancellation_sweep (see testing/cancellation_sweep.hpp).
#include <corio/testing/cancellation_sweep.hpp>

#include <corio/detail/task_state.hpp>
#include <corio/errors.hpp>

#include <utility>

namespace corio::testing {

namespace {

// What a run leaves behind, once the operation and `after` are done.
struct Residue {
  std::size_t sockets = 0, tasks = 0, timers = 0;
};

constexpr std::pair<const char*, std::size_t Residue::*> kResidue[] = {
    {"sockets left open", &Residue::sockets},
    {"tasks alive", &Residue::tasks},
    {"timers set", &Residue::timers},
};

struct Outcome {
  std::uint64_t seed = 0;
  int steps = 0;
  Residue left;
  std::string problem;  // empty: none
};

std::string error_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// One run: uncancelled (cancel_at 0), or cancelled once the operation is
// suspended at its cancel_at-th point.
Outcome run_once(const std::function<SweepRun(Simulation&)>& make, const SimulationOptions& options,
                 double settle, int cancel_at) {
  Simulation sim(options);
  SweepRun run = make(sim);
  sim.run_for(settle);
  Outcome out;
  out.seed = sim.seed();
  Task<void> op = run.host->spawn(run.operation());
  const auto* state = static_cast<const detail::TaskBase*>(op.state());
  if (cancel_at > 0) {
    sim.run_until([&] { return op.done() || state->steps() >= static_cast<std::uint32_t>(cancel_at); });
    if (!op.done()) op.cancel();
  }
  sim.run_until([&] { return op.done(); }, 3600, "the operation did not end");
  out.steps = static_cast<int>(state->steps());
  if (std::exception_ptr e = op.cancelled() ? nullptr : op.exception()) {
    out.problem = "the operation failed: " + error_of(e);
    return out;
  }
  if (run.after) {
    Task<void> next = run.host->spawn(run.after());
    sim.run_until([&] { return next.done(); }, 3600, "the next operation did not end");
    if (next.cancelled() || next.exception()) {
      out.problem = "the next operation failed: " +
                    (next.cancelled() ? std::string("cancelled") : error_of(next.exception()));
      return out;
    }
  }
  sim.run_for(1);  // what the cancel set going (closes, resets) settles
  const LoopStats stats = run.host->loop().stats();
  out.left = {sim.open_sockets(), stats.tasks_alive, stats.timers};
  return out;
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
    const Outcome o = run_once(make, options, settle, k);
    const std::string where = "cancelled at " + std::to_string(k) + " of " +
                              std::to_string(report.points) + seed + ": ";
    if (!o.problem.empty()) report.violations.push_back(where + o.problem);
    for (const auto& [what, field] : kResidue) {
      if (o.left.*field > clean.left.*field) {
        report.violations.push_back(where + std::to_string(o.left.*field) + " " + what + ", " +
                                    std::to_string(clean.left.*field) + " uncancelled");
      }
    }
  }
  return report;
}

}  // namespace corio::testing
