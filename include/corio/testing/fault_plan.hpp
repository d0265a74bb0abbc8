/// \file
/// corio::testing::FaultPlan and run_with_faults: faults drawn from a seed
/// (partitions that heal, resets, latency spikes, each at a drawn time),
/// run against a scenario in a Simulation, and, when the scenario fails,
/// shrunk to the smallest plan that still fails, with a one-line command
/// that replays it (QuickCheck's and Hypothesis's shrinking, applied to a
/// fault schedule as FoundationDB's simulation and Jepsen's nemeses draw
/// them).
///
/// A plan is a list of faults between hosts, named by their index (the order
/// Simulation::host added them). Shrinking first drops faults one at a time,
/// then halves what each remaining one costs (a partition's length, a spike's
/// length and latency), keeping each change while the failure persists. The
/// same plan and seed give the same run, so the smallest plan replays: with
/// CORIO_SIM_FAULTS set (as replay() prints it), run_with_faults runs that
/// plan instead of the one it is given.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/testing/simulation.hpp>

namespace corio::testing {

/// One fault between hosts a and b.
struct Fault {
  enum class Kind : std::uint8_t {
    partition,  ///< what a and b send each other is held for `duration`, then delivered
    reset,      ///< every connection between a and b breaks
    slow,       ///< `latency` more one way between a and b for `duration`
  };
  Kind kind = Kind::reset;
  double at = 0;        ///< simulated seconds after the plan is applied
  int a = 0, b = 1;     ///< the hosts' indexes
  double duration = 0;  ///< partition, slow: how long it lasts
  double latency = 0;   ///< slow: the one-way latency added
  friend bool operator==(const Fault&, const Fault&) = default;
};

/// What FaultPlan::random draws.
struct FaultPlanOptions {
  int faults = 6;             ///< how many
  double horizon = 10;        ///< each at a time in [0, horizon)
  double max_duration = 2;    ///< partitions and spikes last up to this long
  double max_latency = 0.5;   ///< a spike adds up to this
};

/// Faults to inject, in the order given.
class FaultPlan {
 public:
  FaultPlan() = default;
  explicit FaultPlan(std::vector<Fault> faults) : faults_(std::move(faults)) {}
  /// options.faults faults among `hosts` hosts (at least 2), every choice
  /// drawn from seed, times and lengths in whole milliseconds.
  static FaultPlan random(std::uint64_t seed, int hosts, FaultPlanOptions options = {});
  /// Reads what str() writes; std::invalid_argument if it cannot.
  static FaultPlan parse(std::string_view text);

  /// The plan in one line: "reset 0-1 @2.5; partition 1-2 @3 for 0.5; slow 0-2 @1 for 2 by 0.3".
  std::string str() const;
  /// Arranges every fault on sim's clock (Simulation::at), from its time now.
  void apply(Simulation& sim) const;
  const std::vector<Fault>& faults() const noexcept { return faults_; }

 private:
  std::vector<Fault> faults_;
};

/// Builds a system in the simulation it is given (the plan is applied
/// already), runs it, and returns "" if it held, else what went wrong. An
/// exception counts as a failure with its message.
using FaultScenario = std::function<std::string(Simulation&)>;

/// What run_with_faults found.
struct FaultReport {
  bool failed = false;   ///< whether the scenario failed under the plan given
  std::string failure;   ///< the smallest failing plan's failure
  FaultPlan plan;        ///< that plan (the plan given, if nothing failed)
  std::uint64_t seed = 0;  ///< the simulations' seed
  int runs = 0;          ///< scenario runs, the first included
  /// "CORIO_SIM_SEED=N CORIO_SIM_FAULTS='<plan>' <this program> <args>":
  /// the command that replays the smallest plan (args: a --gtest_filter, say).
  std::string replay(const std::string& args = {}) const;
};

/// Runs scenario under plan in a fresh Simulation(options); if it fails,
/// shrinks the plan (see the top of this file), each try in a fresh
/// simulation with the same seed. With CORIO_SIM_FAULTS set, its plan
/// replaces `plan`.
FaultReport run_with_faults(const FaultScenario& scenario, FaultPlan plan, SimulationOptions options = {});

}  // namespace corio::testing
