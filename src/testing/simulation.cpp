// Simulation (see testing/simulation.hpp): the user's side of
// detail::SimWorld.
#include <corio/testing/simulation.hpp>

#include <cstdlib>

namespace corio::testing {

namespace {

std::uint64_t seed_of(const SimulationOptions& o) {
  if (o.seed != 0) return o.seed;
  const char* env = std::getenv("CORIO_SIM_SEED");
  return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : 1;
}

detail::SimWorldOptions world_options(const SimulationOptions& o) {
  return {seed_of(o), o.latency, o.jitter, o.window, o.short_io, o.loss};
}

}  // namespace

Simulation::Simulation(SimulationOptions options)
    : seed_(seed_of(options)), world_(world_options(options)) {}

Simulation::~Simulation() = default;

Simulation::Host& Simulation::host(std::string name) {
  const std::string address = "10.0.0." + std::to_string(hosts_.size() + 1);
  const int index = world_.add_host(name, address);
  return hosts_.emplace_back(Host(&world_, index, std::move(name), address));
}

void Simulation::run_for(double seconds) {
  const double until = time() + seconds;
  world_.run([] { return false; }, until);
}

void Simulation::run_until(const std::function<bool()>& done, double limit, const char* what) {
  const double until = time() + limit;
  if (world_.run(done, until)) return;
  const std::string why = time() >= until ? " within the time limit" : ": nothing is left to happen";
  throw SimulationError(std::string(what) + why + " at t=" + std::to_string(time()) + "s; " +
                        replay_hint());
}

std::string Simulation::replay_hint() const {
  return "seed " + std::to_string(seed_) + " (replay: CORIO_SIM_SEED=" + std::to_string(seed_) +
         " and the same test)";
}

}  // namespace corio::testing
