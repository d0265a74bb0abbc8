// The machinery under corio::testing::Simulation (testing/simulation.hpp):
// hosts, each an EventLoop on a simulated backend, one simulated network and
// one virtual clock for all of them, and the stepping. It lives in core
// because it reaches into the loop (one iteration at a time) and swaps its
// backend; the testing layer gives it its user-facing shape.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <corio/coro.hpp>

namespace corio {
class EventLoop;
}

namespace corio::detail {

struct SimWorldOptions {
  std::uint64_t seed = 1;
  double latency = 0.001;
  double jitter = 0.0;
  std::size_t window = 256 * 1024;
  bool short_io = false;
  double loss = 0;
};

/// What a host's disk does to corio's file operations in a simulation
/// (testing::DiskFaults). Each probability is drawn per operation from the
/// seed.
struct DiskFaults {
  double short_io = 0;     ///< a read or write moves a random part (at least a byte) of what it could
  double read_error = 0;   ///< a read fails with EIO
  double write_error = 0;  ///< a write fails with EIO
  double fsync_error = 0;  ///< an fsync fails with EIO
  /// Bytes the host may write in all: the write that reaches it is short,
  /// the next fails with ENOSPC, as on a disk that filled up.
  std::uint64_t capacity = UINT64_MAX;
};

class SimWorld {
 public:
  explicit SimWorld(SimWorldOptions options);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  // A new host called `name` (what the simulation's DNS answers for) at
  // `address` (an IPv4 address of its own); its index.
  int add_host(const std::string& name, const std::string& address);
  EventLoop& loop(int host);
  // Runs the hosts until done() says so (checked between steps) or time
  // reaches `until`. False: stopped at `until`, or nothing could ever happen
  // again (no host can run, nothing is on the wire, no timer is set).
  bool run(const std::function<bool()>& done, double until);
  double now() const noexcept;
  // Cancels every host's tasks and runs until they end (a minute at most).
  void cancel_all_tasks() noexcept;

  void partition(int a, int b);
  void heal(int a, int b);
  void reset(int a, int b);
  void set_disk_faults(int host, const DiskFaults& faults);
  // signo for the handler host's loop set (run there as a callback); false:
  // it has none.
  bool signal(int host, int signo);
  // A program create_subprocess_exec(name, ...) runs on a host of its own
  // (backend/sim/sim_process.hpp).
  void add_program(std::string name, std::function<Coro<int>(std::vector<std::string>)> main);
  void slow(int a, int b, double seconds);
  // Runs action when the clock reaches `when` (at once if it has), between
  // the hosts' steps; actions due together run in the order given.
  void at(double when, std::function<void()> action);
  std::uint64_t digest() const noexcept;
  // Simulated sockets not closed yet, on every host.
  std::size_t open_sockets() const noexcept;
  // Programs' children that have not exited yet.
  std::size_t running_programs() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corio::detail
