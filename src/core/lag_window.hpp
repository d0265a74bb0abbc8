// The loop's recent lag samples (loop_stats.hpp), in a ring that never
// allocates: recording is one store and one increment, and the sorting
// happens in percentiles(), when someone asks for stats().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <corio/loop_stats.hpp>

namespace corio::detail {

class LagWindow {
 public:
  void record(double lag) noexcept {
    samples_[static_cast<std::size_t>(count_ % samples_.size())] = lag;
    ++count_;
  }
  // Nearest-rank percentiles of the samples held now.
  LagPercentiles percentiles() const;

 private:
  std::array<double, LoopStats::lag_window> samples_{};
  std::uint64_t count_ = 0;  // recorded so far; the ring holds the last lag_window
};

}  // namespace corio::detail
