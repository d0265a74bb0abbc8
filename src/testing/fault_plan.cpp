// FaultPlan and run_with_faults (see testing/fault_plan.hpp).
#include <corio/testing/fault_plan.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>

namespace corio::testing {

namespace {

constexpr const char* kKindNames[] = {"partition", "reset", "slow"};

// Below this, halving a fault's cost stops: a millisecond is the
// simulation's default latency, the smallest difference worth reporting.
constexpr double kSmallest = 0.001;

// Shrinking stops after this many runs: a report, even a partial one, beats
// a test that runs for minutes.
constexpr int kMaxRuns = 200;

double whole_ms(double seconds) { return std::round(seconds * 1000) / 1000; }

// The shortest text that reads back as the same double.
std::string number(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

double read_number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument("a fault plan: '" + std::string(text) + "' is not a number");
  }
  return v;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find(sep, at), text.size());
    std::string_view part = text.substr(at, end - at);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) parts.push_back(part);
    at = end + 1;
  }
  return parts;
}

// One fault's text: "<kind> <a>-<b> @<at>[ for <duration>][ by <latency>]".
Fault parse_fault(std::string_view text) {
  const std::vector<std::string_view> words = split(text, ' ');
  if (words.size() < 3 || words[2].front() != '@') {
    throw std::invalid_argument("a fault plan: cannot read '" + std::string(text) + "'");
  }
  Fault f;
  const auto* kind = std::find(std::begin(kKindNames), std::end(kKindNames), words[0]);
  if (kind == std::end(kKindNames)) throw std::invalid_argument("a fault plan: no fault '" + std::string(words[0]) + "'");
  f.kind = static_cast<Fault::Kind>(kind - std::begin(kKindNames));
  const std::vector<std::string_view> hosts = split(words[1], '-');
  if (hosts.size() != 2) throw std::invalid_argument("a fault plan: hosts are 'a-b', not '" + std::string(words[1]) + "'");
  f.a = static_cast<int>(read_number(hosts[0]));
  f.b = static_cast<int>(read_number(hosts[1]));
  f.at = read_number(words[2].substr(1));
  for (std::size_t i = 3; i + 1 < words.size(); i += 2) {
    (words[i] == "for" ? f.duration : f.latency) = read_number(words[i + 1]);
  }
  return f;
}

std::string fault_text(const Fault& f) {
  std::string text = std::string(kKindNames[static_cast<int>(f.kind)]) + " " + std::to_string(f.a) + "-" +
                     std::to_string(f.b) + " @" + number(f.at);
  if (f.kind != Fault::Kind::reset) text += " for " + number(f.duration);
  if (f.kind == Fault::Kind::slow) text += " by " + number(f.latency);
  return text;
}

}  // namespace

FaultPlan FaultPlan::random(std::uint64_t seed, int hosts, FaultPlanOptions options) {
  if (hosts < 2) throw std::invalid_argument("a fault plan needs two hosts at least");
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](double hi) { return whole_ms(std::uniform_real_distribution<double>(0, hi)(rng)); };
  std::vector<Fault> faults;
  for (int i = 0; i < options.faults; ++i) {
    Fault f;
    f.kind = static_cast<Fault::Kind>(std::uniform_int_distribution<int>(0, 2)(rng));
    f.at = uniform(options.horizon);
    f.a = std::uniform_int_distribution<int>(0, hosts - 1)(rng);
    f.b = (f.a + std::uniform_int_distribution<int>(1, hosts - 1)(rng)) % hosts;
    if (f.kind != Fault::Kind::reset) f.duration = std::max(kSmallest, uniform(options.max_duration));
    if (f.kind == Fault::Kind::slow) f.latency = std::max(kSmallest, uniform(options.max_latency));
    faults.push_back(f);
  }
  return FaultPlan(std::move(faults));
}

FaultPlan FaultPlan::parse(std::string_view text) {
  std::vector<Fault> faults;
  for (std::string_view one : split(text, ';')) faults.push_back(parse_fault(one));
  return FaultPlan(std::move(faults));
}

std::string FaultPlan::str() const {
  std::string text;
  for (const Fault& f : faults_) text += (text.empty() ? "" : "; ") + fault_text(f);
  return text;
}

// Hosts are looked up when the fault comes: the scenario adds them after
// the plan is applied. A fault naming a host the system does not have is
// passed over.
void FaultPlan::apply(Simulation& sim) const {
  const double start = sim.time();
  auto between = [&sim](int a, int b, auto what) {
    return [&sim, a, b, what] {
      const auto n = static_cast<int>(sim.hosts().size());
      if (a < n && b < n && a != b) what(sim.hosts()[static_cast<std::size_t>(a)], sim.hosts()[static_cast<std::size_t>(b)]);
    };
  };
  using Host = Simulation::Host;
  for (const Fault& f : faults_) {
    switch (f.kind) {
      case Fault::Kind::reset:
        sim.at(start + f.at, between(f.a, f.b, [&sim](const Host& a, const Host& b) { sim.reset(a, b); }));
        break;
      case Fault::Kind::partition:
        sim.at(start + f.at, between(f.a, f.b, [&sim](const Host& a, const Host& b) { sim.partition(a, b); }));
        sim.at(start + f.at + f.duration,
               between(f.a, f.b, [&sim](const Host& a, const Host& b) { sim.heal(a, b); }));
        break;
      case Fault::Kind::slow:
        sim.at(start + f.at, between(f.a, f.b, [&sim, l = f.latency](const Host& a, const Host& b) {
                 sim.slow(a, b, l);
               }));
        sim.at(start + f.at + f.duration,
               between(f.a, f.b, [&sim](const Host& a, const Host& b) { sim.slow(a, b, 0); }));
        break;
    }
  }
}

namespace {

struct Trial {
  std::uint64_t seed = 0;
  std::string failure;  // "": it held
};

Trial try_plan(const FaultScenario& scenario, const FaultPlan& plan, const SimulationOptions& options) {
  Simulation sim(options);
  plan.apply(sim);
  Trial t{sim.seed(), {}};
  try {
    t.failure = scenario(sim);
  } catch (const std::exception& e) {
    t.failure = e.what();
  } catch (...) {
    t.failure = "an exception that is not a std::exception";
  }
  return t;
}

using StillFails = std::function<bool(const std::vector<Fault>&)>;

// Drops each fault in turn, for good if the failure stays without it.
std::vector<Fault> drop_faults(std::vector<Fault> faults, const StillFails& still_fails) {
  for (std::size_t i = 0; i < faults.size();) {
    std::vector<Fault> fewer = faults;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    if (still_fails(fewer)) {
      faults = std::move(fewer);
    } else {
      ++i;
    }
  }
  return faults;
}

// Halves each fault's length and latency while the failure stays.
void halve_costs(std::vector<Fault> faults, const StillFails& still_fails) {
  for (std::size_t i = 0; i < faults.size(); ++i) {
    while (faults[i].duration > kSmallest || faults[i].latency > kSmallest) {
      std::vector<Fault> cheaper = faults;
      for (double* cost : {&cheaper[i].duration, &cheaper[i].latency}) {
        if (*cost > kSmallest) *cost /= 2;
      }
      if (!still_fails(cheaper)) break;
      faults = std::move(cheaper);
    }
  }
}

}  // namespace

FaultReport run_with_faults(const FaultScenario& scenario, FaultPlan plan, SimulationOptions options) {
  if (const char* env = std::getenv("CORIO_SIM_FAULTS"); env != nullptr && *env != '\0') {
    plan = FaultPlan::parse(env);
  }
  FaultReport report;
  const Trial first = try_plan(scenario, plan, options);
  report.runs = 1;
  report.seed = first.seed;
  report.plan = plan;
  report.failure = first.failure;
  report.failed = !first.failure.empty();
  if (!report.failed) return report;
  // Each try that still fails becomes the report's plan.
  const StillFails still_fails = [&](const std::vector<Fault>& faults) {
    if (report.runs >= kMaxRuns) return false;
    ++report.runs;
    FaultPlan smaller(faults);
    const Trial t = try_plan(scenario, smaller, options);
    if (t.failure.empty()) return false;
    report.plan = std::move(smaller);
    report.failure = t.failure;
    return true;
  };
  halve_costs(drop_faults(plan.faults(), still_fails), still_fails);
  return report;
}

std::string FaultReport::replay(const std::string& args) const {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string line = "CORIO_SIM_SEED=" + std::to_string(seed) + " CORIO_SIM_FAULTS='" + plan.str() + "' " +
                     (ec ? std::string("<the test program>") : self.string());
  return args.empty() ? line : line + " " + args;
}

}  // namespace corio::testing
