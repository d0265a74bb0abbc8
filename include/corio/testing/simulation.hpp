/// \file
/// corio::testing::Simulation: a whole corio system (a server, its clients,
/// a tool server...) in one process, on one virtual clock, over a simulated
/// network, with every open choice drawn from one seed, so that a seed
/// replays a run exactly. docs/simulation.md is the guide, with a whole
/// program: an HTTP service, its client, a partition, a replay.
///
/// Each host is an EventLoop of its own on a simulated backend: its tasks,
/// timers and sockets are its own, and corio's layers (streams, TLS, HTTP,
/// WebSocket, MCP over HTTP) run on it unchanged. Time moves only when no
/// host can run, straight to the next timer or delivery: an hour of a quiet
/// system takes milliseconds.
///
/// What is simulated: TCP streams between hosts (latency, jitter, a bounded
/// window per connection, short reads and writes, refused and unreachable
/// connects, FIN, resets, partitions), UDP datagrams (latency, reordering by
/// jitter, loss), DNS (a host's name is its address), each host's default
/// executor (to_thread and run_in_executor jobs run on the simulation's
/// thread, in the host's turn, taking no virtual time), faults of each
/// host's disk in front of the real files (DiskFaults), Unix sockets (a
/// path is its host's), signals (signal()) and subprocesses: programs
/// registered with program(), their standard streams simulated pipes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/detail/sim_world.hpp>
#include <corio/event_loop.hpp>
#include <corio/task.hpp>

namespace corio::testing {

struct SimulationOptions {
  /// What every choice is drawn from. 0: the environment's CORIO_SIM_SEED, else 1.
  std::uint64_t seed = 0;
  double latency = 0.001;  ///< one way, seconds
  double jitter = 0.0;     ///< up to this much more per segment, seconds
  std::size_t window = 256 * 1024;  ///< bytes in flight plus unread, per connection and direction
  /// Each send takes, and each read returns, a random part (at least a
  /// byte) of what it could: the code that loops over short counts runs.
  bool short_io = false;
  /// The chance that a datagram is lost (each drawn from the seed).
  double loss = 0.0;
};

/// What a host's disk does to corio's file operations (AsyncFile) there
/// (detail/sim_world.hpp has the fields: short_io, read_error, write_error,
/// fsync_error, capacity). The files themselves are real: put them in a
/// test's temporary directory.
using DiskFaults = detail::DiskFaults;

/// Thrown by Simulation::run_until_complete when the task cannot finish: the
/// message names the seed and how to replay it.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Simulation {
 public:
  /// One simulated host: an address and a loop of its own.
  class Host {
   public:
    const std::string& name() const noexcept { return name_; }
    /// Its IPv4 address, "10.0.0.<n>" for the n-th host.
    const std::string& address() const noexcept { return address_; }
    /// Its loop (not running between steps: use spawn()).
    EventLoop& loop() const { return world_->loop(index_); }
    /// Starts coro as a task of this host's loop.
    template <class T>
    Task<T> spawn(Coro<T> coro) {
      return loop().create_task(std::move(coro));
    }

   private:
    friend class Simulation;
    Host(detail::SimWorld* w, int index, std::string name, std::string address)
        : world_(w), index_(index), name_(std::move(name)), address_(std::move(address)) {}
    detail::SimWorld* world_;
    int index_;
    std::string name_, address_;
  };

  explicit Simulation(SimulationOptions options = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  /// Adds a host.
  Host& host(std::string name);
  /// Every host, in the order added.
  const std::deque<Host>& hosts() const noexcept { return hosts_; }

  /// Runs every host until `coro`, started on h, is done, and returns its
  /// result (or throws its exception). SimulationError if it cannot finish
  /// (nothing left to happen) or `limit` seconds of simulated time pass.
  template <class T>
  T run_until_complete(Host& h, Coro<T> coro, double limit = 3600) {
    return run_until_complete(h.spawn(std::move(coro)), limit);
  }
  /// The same for a task already started (Host::spawn), so that faults can
  /// come and go while it runs (run_for, partition, heal).
  template <class T>
  T run_until_complete(Task<T> task, double limit = 3600) {
    run_until([&] { return task.done(); }, limit, "the task did not finish");
    return task.result();
  }
  /// Runs every host until done() (asked between rounds, in which each host
  /// runs at most one iteration) holds; SimulationError, naming `what`, if it
  /// never can within `limit` seconds.
  void run_until(const std::function<bool()>& done, double limit = 3600,
                 const char* what = "the condition did not hold");
  /// Runs every host for `seconds` of simulated time.
  void run_for(double seconds);

  /// Cancels every host's tasks and runs the hosts until those have ended
  /// (a minute of simulated time at most), as the destructor does first.
  /// Objects the tasks used (sessions, streams) can then be destroyed while
  /// the hosts' loops are still open, as they must be.
  void cancel_all_tasks() noexcept { world_.cancel_all_tasks(); }

  /// Simulated seconds since the start.
  double time() const noexcept { return world_.now(); }
  /// The seed this run draws from.
  std::uint64_t seed() const noexcept { return seed_; }
  /// A fingerprint of every delivery so far: two runs with the same seed
  /// and program have the same.
  std::uint64_t digest() const noexcept { return world_.digest(); }
  /// "seed N (replay: CORIO_SIM_SEED=N <the test>)": for failure messages.
  std::string replay_hint() const;

  /// Faults. A partition holds what a and b send each other (and their
  /// connection attempts) until heal(); reset() kills their connections.
  void partition(const Host& a, const Host& b) { world_.partition(a.index_, b.index_); }
  void heal(const Host& a, const Host& b) { world_.heal(a.index_, b.index_); }
  void reset(const Host& a, const Host& b) { world_.reset(a.index_, b.index_); }
  /// A latency spike: `seconds` more one way between a and b, until slow(a, b, 0).
  void slow(const Host& a, const Host& b, double seconds) { world_.slow(a.index_, b.index_, seconds); }
  /// Runs `action` (a fault, say) when the simulated clock reaches `when`,
  /// between the hosts' steps; testing/fault_plan.hpp schedules its faults so.
  void at(double when, std::function<void()> action) { world_.at(when, std::move(action)); }
  /// Sends signo to h, as the OS would to its process: the handler h's loop
  /// set for it (EventLoop::add_signal_handler, run_until_signal) runs there
  /// as a callback. False if there is none: nothing happens then (a host is
  /// no process to end; a program's host ends as Simulation::program says).
  bool signal(const Host& h, int signo) { return world_.signal(h.index_, signo); }
  /// Registers a program: create_subprocess_exec(name, args, ...) on any
  /// host then runs main({name, args...}) on a host of its own (the
  /// parent's address; its own loop, tasks and sockets), whose standard
  /// streams are simulated pipes to the parent: the program takes them with
  /// connect_read_pipe(0) and connect_write_pipe(1) or (2), as a real one
  /// takes its fds (mcp::Server::run_stdio does). The child exits when main
  /// returns (its returncode; 1 if it threw): its other tasks are cancelled
  /// and unwind, then the parent's Process::wait() returns. A signal
  /// (Process::terminate, kill) runs the program's handler, if it set one,
  /// else ends it (returncode -signo). Another name gives ENOENT, as a
  /// program not installed does; Redirect::to_stdout is not simulated.
  void program(std::string name, std::function<Coro<int>(std::vector<std::string> argv)> main) {
    world_.add_program(std::move(name), std::move(main));
  }
  /// Simulated sockets not closed yet, on every host.
  std::size_t open_sockets() const noexcept { return world_.open_sockets(); }
  /// Children of program() that have not exited yet, started from any host.
  std::size_t running_programs() const noexcept { return world_.running_programs(); }
  /// The faults of h's disk from now on (none at first).
  void set_disk_faults(const Host& h, const DiskFaults& faults) {
    world_.set_disk_faults(h.index_, faults);
  }

 private:
  std::uint64_t seed_;
  detail::SimWorld world_;
  std::deque<Host> hosts_;  // stable addresses
};

}  // namespace corio::testing
