// Percentiles of the lag window (lag_window.hpp).
#include "lag_window.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace corio::detail {

LagPercentiles LagWindow::percentiles() const {
  LagPercentiles out;
  out.samples = static_cast<std::size_t>(std::min<std::uint64_t>(count_, samples_.size()));
  if (out.samples == 0) return out;
  std::vector<double> sorted(samples_.begin(),
                             samples_.begin() + static_cast<std::ptrdiff_t>(out.samples));
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest sample with at least p of them at or below it.
  const auto rank = [&sorted](double p) {
    const auto r = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::max<std::size_t>(r, 1) - 1];
  };
  out.p50 = rank(0.50);
  out.p90 = rank(0.90);
  out.p99 = rank(0.99);
  out.max = sorted.back();
  return out;
}

}  // namespace corio::detail
