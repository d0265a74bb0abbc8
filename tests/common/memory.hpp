// The process's memory as the kernel counts it, for tests that bound what a
// peer can make us allocate (a bound on RSS, not on timing).
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

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

struct Memory {
  long rss, hwm, peak;  // KiB: VmRSS, VmHWM, VmPeak
};
inline Memory memory_now() {
  return {proc_status_kib("VmRSS"), proc_status_kib("VmHWM"), proc_status_kib("VmPeak")};
}

// Resident memory (now and at its peak) grew by less than 8 MiB, and the
// address space by less than 64 MiB (room for a thread's stack and arena;
// it catches a large allocation whose untouched pages never became
// resident). Nothing is checked under sanitizers.
inline void expect_little_growth_since(const Memory& before) {
  if (!kMemoryIsMeasurable) return;
  const Memory after = memory_now();
  std::printf("memory KiB: rss %ld -> %ld, hwm %ld -> %ld, peak %ld -> %ld\n", before.rss,
              after.rss, before.hwm, after.hwm, before.peak, after.peak);
  EXPECT_LT(after.rss - before.rss, 8 * 1024);
  EXPECT_LT(after.hwm - before.hwm, 8 * 1024);
  EXPECT_LT(after.peak - before.peak, 64 * 1024);
}

}  // namespace corio_testing
