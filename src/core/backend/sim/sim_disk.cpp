// A simulation's disk (see sim_disk.hpp).
#include "core/backend/sim/sim_disk.hpp"

#include <algorithm>
#include <cerrno>

namespace corio::detail::sim {

namespace {
// The disk's generator: the seed's, on a stream of its own.
constexpr std::uint64_t kDiskStream = 0x6469736b;  // "disk"
}  // namespace

Disk::Disk(const Network& net, std::uint64_t seed)
    : net_(net), rng_(seed ^ kDiskStream), replaced_(replace_file_system(this)) {}

Disk::~Disk() { replace_file_system(replaced_); }

void Disk::set_faults(int host, const DiskFaults& faults) {
  const auto i = static_cast<std::size_t>(host);
  if (hosts_.size() <= i) hosts_.resize(i + 1);
  hosts_[i].faults = faults;
}

Disk::HostDisk* Disk::current() noexcept {
  const auto i = static_cast<std::size_t>(net_.current_host());
  return i < hosts_.size() ? &hosts_[i] : nullptr;
}

bool Disk::chance(double p) {
  return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p;
}

std::size_t Disk::some_of(std::size_t n, double p) {
  if (n < 2 || !chance(p)) return n;
  return std::uniform_int_distribution<std::size_t>(1, n - 1)(rng_);
}

long Disk::read(int fd, char* buf, std::size_t n, std::int64_t offset) noexcept {
  if (HostDisk* d = current()) {
    if (chance(d->faults.read_error)) return -EIO;
    n = some_of(n, d->faults.short_io);
  }
  return os_file_system().read(fd, buf, n, offset);
}

// A disk that fills takes what still fits (a short write), then ENOSPC.
long Disk::write(int fd, const char* data, std::size_t n, std::int64_t offset) noexcept {
  HostDisk* d = current();
  if (d == nullptr) return os_file_system().write(fd, data, n, offset);
  if (chance(d->faults.write_error)) return -EIO;
  const std::uint64_t room = d->faults.capacity - std::min(d->written, d->faults.capacity);
  if (room == 0 && n > 0) return -ENOSPC;
  n = some_of(static_cast<std::size_t>(std::min<std::uint64_t>(n, room)), d->faults.short_io);
  const long done = os_file_system().write(fd, data, n, offset);
  if (done > 0) d->written += static_cast<std::uint64_t>(done);
  return done;
}

int Disk::fsync(int fd) noexcept {
  HostDisk* d = current();
  if (d != nullptr && chance(d->faults.fsync_error)) return -EIO;
  return os_file_system().fsync(fd);
}

}  // namespace corio::detail::sim
