/// \file
/// corio::testing::cancellation_sweep: an async operation cancelled at each of
/// its suspension points in turn, each time in a fresh simulation with the
/// same seed, and after each the system checked: the bugs behind
/// redis-py#2665 and asyncpg's "another operation is in progress" (a
/// cancellation at the one await that leaves a connection out of step) are
/// found this way.
///
/// First the operation runs uncancelled, which counts its suspension points
/// (N) and measures what it leaves behind: open sockets, live tasks, timers,
/// parked socket waits and running programs (Simulation::program). Then,
/// for k = 1..N, a fresh simulation runs it until it is suspended at its
/// k-th point and cancels it there; and where the operation can be caught
/// woken but not yet run at that point (another task's step woke it: an
/// item handed over, a lock granted), a second run cancels it in that
/// window too, where a cancel loses what it was given. After each run: (1)
/// the operation ended in CancelledError (or finished, if it was past its
/// last await), never another error; (2) `after`, the next operation on the
/// same objects, succeeds; (3) no more sockets, tasks, timers, parked socket
/// waits or running programs are left, on all hosts together, than in the
/// uncancelled run (nothing leaked, on the operation's host or its peers). A
/// violation names k and the seed. tests/testing/sweep_*_test.cpp apply it
/// to corio's own operations; docs/simulation.md lists them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/testing/simulation.hpp>

namespace corio::testing {

/// One run's system, made afresh in each simulation.
struct SweepRun {
  Simulation::Host* host = nullptr;     ///< where the operation runs
  std::function<Coro<void>()> operation;  ///< the operation under test
  std::function<Coro<void>()> after;    ///< the next operation on the same objects (may be empty)
  /// Simulated seconds the operation, and then `after`, may take each
  /// (a daily job's needs a day).
  double limit = 3600;
};

struct SweepReport {
  int points = 0;  ///< suspension points of the uncancelled operation
  /// Of those, the points where a second run cancelled it woken, before it ran.
  int woken_points = 0;
  std::vector<std::string> violations;  ///< "cancelled at 3 of 7: ..."
  bool ok() const noexcept { return violations.empty(); }
  /// The violations, one per line (for a test's failure message).
  std::string describe() const;
};

/// Runs the sweep. `make` builds the system in the simulation it is given
/// (hosts, servers, the objects the operation and `after` share) and returns
/// the run; `settle` is how much simulated time the system gets before the
/// operation starts (servers listening, sessions open).
SweepReport cancellation_sweep(const std::function<SweepRun(Simulation&)>& make,
                               SimulationOptions options = {}, double settle = 0.5);

}  // namespace corio::testing
