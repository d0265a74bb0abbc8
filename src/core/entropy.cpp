// The system's wall clock and random numbers, unless a simulation stands in
// (see detail/entropy.hpp).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include <corio/detail/entropy.hpp>

namespace corio::detail {

namespace {
thread_local Entropy* current = nullptr;
}  // namespace

std::uint64_t random_u64() {
  if (current != nullptr) return current->random();
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

double wall_time() {
  if (current != nullptr) return current->wall();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool seeded_secret(void* out, std::size_t n) {
  if (current == nullptr) return false;
  auto* p = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < n; i += sizeof(std::uint64_t)) {
    const std::uint64_t r = current->random();
    std::memcpy(p + i, &r, std::min(sizeof r, n - i));
  }
  return true;
}

Entropy* replace_entropy(Entropy* e) noexcept {
  Entropy* old = current;
  current = e;
  return old;
}

}  // namespace corio::detail
