// The process's memory as the kernel counts it, for tests that bound what a
// peer can make us allocate (a bound on RSS, not on timing).
#pragma once

#include <fstream>
#include <string>

#include <corio/detail/sanitizers.hpp>

namespace corio_testing {

// A "Vm..." field of /proc/self/status in KiB (VmRSS: resident now, VmHWM:
// its peak), 0 if absent.
inline long proc_status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  const std::string prefix = field + ":";
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(prefix, 0) == 0) return std::stol(line.substr(prefix.size()));
  }
  return 0;
}

// Sanitizers keep freed memory quarantined and shadow every byte: resident
// size says nothing there.
inline constexpr bool kMemoryIsMeasurable = !corio::detail::kSanitized;

}  // namespace corio_testing
