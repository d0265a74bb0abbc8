// The wall clock and the random numbers of corio's own choices that are not
// secrets (multipart boundaries, retry jitter): the system's, or on a
// simulation's thread its virtual clock and its seed, so that a seed replays
// them (testing/simulation.hpp). Secrets (session ids, WebSocket keys, PKCE
// verifiers) always come from the OS's CSPRNG.
#pragma once

#include <cstdint>

namespace corio::detail {

class Entropy {
 public:
  virtual ~Entropy() = default;
  virtual std::uint64_t random() = 0;
  virtual double wall() = 0;  // seconds since the epoch
};

// This thread's Entropy's, else a per-thread generator seeded once from std::random_device.
std::uint64_t random_u64();
// This thread's Entropy's, else the system clock's: seconds since the epoch.
double wall_time();
// Makes e this thread's (null: the system's again); returns the one it replaces.
Entropy* replace_entropy(Entropy* e) noexcept;

}  // namespace corio::detail
