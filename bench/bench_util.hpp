// Small helpers shared by the C++ core benchmarks (corio and the Asio peer).
#pragma once

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace bench_util {

// Bytes handed out by malloc right now (main arena + mmapped chunks).
inline std::size_t heap_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Resident set size in bytes, from /proc/self/statm.
inline std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Process CPU time in seconds (user + system, all threads).
inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline double wall_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// The timer benchmark's deadlines: uniform in [0, 1 s], fixed seed, generated
// before the timed region so every implementation schedules the same delays.
inline constexpr std::size_t kTimers = 1'000'000;
inline constexpr std::size_t kMemTasks = 100'000;

// First-touch page faults are very slow on some VMs (~20 us per 4 KiB page measured on the
// Firecracker guest this suite was written on, against ~0.2 us on bare metal), which would
// make a 1M-object benchmark measure the hypervisor. Before the timer benchmark, both C++
// programs therefore grow the malloc heap by `bytes`, touch it and free it, with trimming
// off, so later allocations reuse resident pages. CORIO_BENCH_COLD=1 in the environment
// skips this (cold-heap numbers).
inline void prefault_heap(std::size_t bytes = std::size_t{768} << 20) {
  if (const char* cold = std::getenv("CORIO_BENCH_COLD"); cold && *cold && *cold != '0') return;
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // keep freed memory at the top of the heap resident
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // blocks below 1 MiB come from the (prefaulted) heap
  constexpr std::size_t chunk = 256 << 10;
  std::vector<void*> blocks;
  blocks.reserve(bytes / chunk);
  for (std::size_t done = 0; done < bytes; done += chunk) {
    auto* p = static_cast<unsigned char*>(std::malloc(chunk));
    if (!p) break;
    for (std::size_t i = 0; i < chunk; i += 4096) p[i] = 1;
    blocks.push_back(p);
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) std::free(*it);
}

inline std::vector<std::chrono::nanoseconds> timer_delays(std::size_t n = kTimers) {
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<std::int64_t> dist(0, 1'000'000'000);
  std::vector<std::chrono::nanoseconds> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i) v.emplace_back(dist(rng));
  return v;
}

}  // namespace bench_util
