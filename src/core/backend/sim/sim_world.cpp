// A simulation's hosts and their stepping (see detail/sim_world.hpp).
//
// The whole system runs on the calling thread, one host at a time, in
// rounds, on one virtual clock:
//   1. every host that can run now (ready callbacks or tasks, a timer due,
//      a socket ready) runs one loop iteration, in an order drawn from the
//      seed, with its loop as the running loop and the network serving its
//      sockets;
//   2. when none can, time jumps to the earliest of the hosts' timers and
//      the network's deliveries, and what is due then arrives; but first,
//      while a host waits for a real thread (a job on a pool of the
//      user's), the simulation sleeps until that thread posts.
// A host's executor jobs (to_thread) run at the start of its turn in a
// round, on this thread (sim_executor.hpp).
// Each host's loop sees a clock that never waits (time moves only in 2), so
// a host never blocks in poll(): the round decides who runs.
#include <corio/detail/sim_world.hpp>

#include <algorithm>
#include <deque>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include <corio/event_loop.hpp>

#include "core/backend/sim/sim_backend.hpp"
#include "core/backend/sim/sim_disk.hpp"
#include "core/backend/sim/sim_executor.hpp"
#include "core/backend/sim/loop_driver.hpp"
#include "core/backend/sim/sim_process.hpp"
#include "core/backend/sim/sim_network.hpp"

namespace corio::detail {

namespace {

// The simulation's time, as each host's loop reads it: it never waits.
class SimClock final : public Clock {
 public:
  explicit SimClock(const sim::Network& net) : net_(net) {}
  double now() override { return net_.now(); }
  double on_idle(double) override { return 0; }
  bool is_virtual() const noexcept override { return true; }

 private:
  const sim::Network& net_;
};

}  // namespace

struct SimWorld::Impl {
  Impl(SimWorld& world, const SimWorldOptions& o)
      : net({o.seed, o.latency, o.jitter, o.window, o.short_io, o.loss}),
        disk(net, o.seed),
        programs(world, net),
        clock(std::make_shared<SimClock>(net)) {}
  // As corio::run() ends: the tasks left are cancelled and given a minute
  // of simulated time to finish (a cancelled task may still talk to its
  // peers).
  void cancel_all_tasks() noexcept {
    for (Host& h : hosts) LoopDriver::cancel_tasks(*h.loop);
    try {
      (void)run([this] { return std::none_of(hosts.begin(), hosts.end(), [](Host& h) {
                  return LoopDriver::has_tasks(*h.loop);
                }); },
                net.now() + 60);
    } catch (...) {
      // A loop that throws here is closed all the same.
    }
  }
  ~Impl() {
    // Then the loops close, while the network still knows their sockets.
    cancel_all_tasks();
    programs.clear();
    for (Host& h : hosts) {
      net.set_current_host(h.index);
      h.executor->run_queued();  // close() waits for their results, which only this thread makes
      if (!h.loop->is_closed()) h.loop->close();
    }
    hosts.clear();
  }

  struct Host {
    int index;
    sim::SimBackend* backend;    // the loop's
    // The loop's default, owned here: the loop holds a reference to it
    // (SimExecutorRef), which a program may replace (set_default_executor).
    std::unique_ptr<sim::SimExecutor> executor;
    std::unique_ptr<EventLoop> loop;
  };

  bool can_run(Host& h) {
    if (programs.exited(h.index)) return false;  // a child process that has exited
    return LoopDriver::runnable(*h.loop) || h.backend->has_ready() || h.executor->has_jobs();
  }
  // A host waits for a thread of the user's (its own pool's job): nothing
  // it would post can be simulated, so the simulation waits for it, in real
  // time, before it moves virtual time on.
  bool awaits_thread() {
    return std::any_of(hosts.begin(), hosts.end(), [this](Host& h) {
      return !programs.exited(h.index) && !h.executor->has_jobs() &&
             LoopDriver::awaits_thread(*h.loop);
    });
  }
  bool run(const std::function<bool()>& done, double until);
  bool round();
  double next_event();
  bool act();

  sim::Network net;
  sim::ThreadPosts posts;  // real threads' posts to the hosts' loops
  sim::Disk disk;
  sim::Programs programs;
  std::shared_ptr<SimClock> clock;
  std::deque<Host> hosts;  // a child process's is added while others' pointers are held (round())
  // The world's own timers (a fault plan's faults), by (when, order given).
  std::map<std::pair<double, std::uint64_t>, std::function<void()>> actions;
  std::uint64_t next_action = 0;
};

// Step 1: the hosts that can run, each one iteration.
bool SimWorld::Impl::round() {
  std::vector<Host*> order;
  for (Host& h : hosts) {
    if (can_run(h)) order.push_back(&h);
  }
  std::shuffle(order.begin(), order.end(), net.rng());
  for (Host* h : order) {
    net.set_current_host(h->index);
    h->executor->run_round();
    LoopDriver::step(*h->loop);
  }
  return !order.empty();
}

// The world's actions that are due, before any host runs: false if none was.
bool SimWorld::Impl::act() {
  bool any = false;
  while (!actions.empty() && actions.begin()->first.first <= net.now()) {
    std::function<void()> action = std::move(actions.begin()->second);
    actions.erase(actions.begin());
    action();
    any = true;
  }
  return any;
}

double SimWorld::Impl::next_event() {
  double t = net.next_delivery();
  if (!actions.empty()) t = std::min(t, actions.begin()->first.first);
  for (Host& h : hosts) t = std::min(t, LoopDriver::next_timer(*h.loop));
  return t;
}

SimWorld::SimWorld(SimWorldOptions options) : impl_(std::make_unique<Impl>(*this, options)) {}
SimWorld::~SimWorld() = default;

int SimWorld::add_host(const std::string& name, const std::string& address) {
  Impl& w = *impl_;
  const int index = w.net.add_host(name, address);
  auto backend = std::make_unique<sim::SimBackend>(w.net, index, w.posts);
  sim::SimBackend* raw = backend.get();
  std::unique_ptr<EventLoop> loop = LoopDriver::make(std::move(backend), w.clock);
  auto jobs = std::make_unique<sim::SimExecutor>();
  loop->set_default_executor(std::make_unique<sim::SimExecutorRef>(*jobs));
  w.hosts.push_back({index, raw, std::move(jobs), std::move(loop)});
  return index;
}

EventLoop& SimWorld::loop(int host) { return *impl_->hosts.at(static_cast<std::size_t>(host)).loop; }

bool SimWorld::run(const std::function<bool()>& done, double until) { return impl_->run(done, until); }

bool SimWorld::Impl::run(const std::function<bool()>& done, double until) {
  for (;;) {
    // Read before the hosts are looked at, so a post that comes while they
    // are cannot be missed by the wait below.
    const std::uint32_t posts_seen = posts.seen();
    if (done()) return true;
    if (act() || round()) {
      (void)programs.reap();  // a child's exit is seen in the round it came
      continue;
    }
    if (programs.reap()) continue;
    if (awaits_thread()) {  // a real thread's post is the next event: time stands still
      posts.wait_after(posts_seen);
      continue;
    }
    const double t = next_event();  // step 2
    if (std::isinf(t)) return false;
    if (t > until) {
      net.advance_to(until);
      return false;
    }
    net.advance_to(t);
  }
}

double SimWorld::now() const noexcept { return impl_->net.now(); }
void SimWorld::cancel_all_tasks() noexcept { impl_->cancel_all_tasks(); }
void SimWorld::partition(int a, int b) { impl_->net.partition(a, b); }
void SimWorld::heal(int a, int b) { impl_->net.heal(a, b); }
void SimWorld::reset(int a, int b) { impl_->net.reset(a, b); }
void SimWorld::set_disk_faults(int host, const DiskFaults& faults) { impl_->disk.set_faults(host, faults); }
void SimWorld::add_program(std::string name,
                           std::function<Coro<int>(std::vector<std::string>)> main) {
  impl_->programs.add(std::move(name), std::move(main));
}
bool SimWorld::signal(int host, int signo) { return LoopDriver::signal(loop(host), signo); }
void SimWorld::slow(int a, int b, double seconds) { impl_->net.slow(a, b, seconds); }
void SimWorld::at(double when, std::function<void()> action) {
  impl_->actions.emplace(std::make_pair(when, impl_->next_action++), std::move(action));
}
std::uint64_t SimWorld::digest() const noexcept { return impl_->net.digest(); }
std::size_t SimWorld::open_sockets() const noexcept { return impl_->net.open_sockets(); }
std::size_t SimWorld::running_programs() const noexcept { return impl_->programs.running(); }

}  // namespace corio::detail
