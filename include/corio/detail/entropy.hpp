// The wall clock and the random numbers of corio's own choices that are not
// secrets (multipart boundaries, retry jitter): the system's, or on a
// simulation's thread its virtual clock and its seed, so that a seed replays
// them (testing/simulation.hpp). Secrets (session ids, WebSocket keys and
// masks, PKCE verifiers) come from the OS's CSPRNG, except on a simulation's
// thread, where they too are drawn from the seed (seeded_secret): a run
// replays byte for byte, and its secrets are no secret.
#pragma once

#include <cstddef>
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
// On a simulation's thread: fills out with n bytes drawn from its seed and
// returns true. Elsewhere false, out untouched: the caller asks the OS's
// CSPRNG (RAND_bytes, getrandom), as a secret must.
bool seeded_secret(void* out, std::size_t n);
// Makes e this thread's (null: the system's again); returns the one it replaces.
Entropy* replace_entropy(Entropy* e) noexcept;

}  // namespace corio::detail
