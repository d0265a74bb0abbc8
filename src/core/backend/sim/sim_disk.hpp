// A simulation's disk (detail::FileSystem): on a simulation's thread corio's
// file operations go through it to the OS's files (in a test's temporary
// directory) and meet the faults set for the host that makes them: short
// reads and writes, EIO, a disk that fills (ENOSPC), a failing fsync. Each
// fault is drawn from a generator of the simulation's seed, its own so that
// a disk changes no draw of the network's, and only when its probability is
// set: a disk without faults draws nothing.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <corio/detail/file_system.hpp>
#include <corio/detail/sim_world.hpp>

#include "core/backend/sim/sim_network.hpp"

namespace corio::detail::sim {

class Disk final : public FileSystem {
 public:
  Disk(const Network& net, std::uint64_t seed);
  ~Disk() override;
  Disk(const Disk&) = delete;
  Disk& operator=(const Disk&) = delete;

  void set_faults(int host, const DiskFaults& faults);

  long read(int fd, char* buf, std::size_t n, std::int64_t offset) noexcept override;
  long write(int fd, const char* data, std::size_t n, std::int64_t offset) noexcept override;
  int fsync(int fd) noexcept override;

 private:
  struct HostDisk {
    DiskFaults faults;
    std::uint64_t written = 0;  // toward faults.capacity
  };
  HostDisk* current() noexcept;  // null: a host without faults
  bool chance(double p);
  std::size_t some_of(std::size_t n, double p);  // n, or with probability p 1..n-1 of it

  const Network& net_;
  std::mt19937_64 rng_;
  std::vector<HostDisk> hosts_;  // by host index, grown as faults are set
  FileSystem* replaced_;
};

}  // namespace corio::detail::sim
