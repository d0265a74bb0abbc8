// H2Guard's limits (see h2_guard.hpp).
#include "http/h2/h2_guard.hpp"

#include <nghttp2/nghttp2.h>

#include <corio/http/server.hpp>

namespace corio::http::detail {

namespace {

constexpr double kControlFrames = 500;
constexpr double kControlPerSecond = 100;
constexpr double kResetRefillSeconds = 10;
constexpr std::size_t kHeadBombFactor = 4;

double reset_burst(const ServerOptions& options) {
  return std::max(100.0, 2.0 * options.max_concurrent_streams);
}

}  // namespace

H2Guard::H2Guard(const ServerOptions& options, double now) noexcept
    : resets_(reset_burst(options), reset_burst(options) / kResetRefillSeconds, now),
      control_(kControlFrames, kControlPerSecond, now),
      max_running_(std::max<std::size_t>(2 * std::size_t{options.max_concurrent_streams}, 1)),
      max_head_decoded_(kHeadBombFactor * options.limits.max_head_bytes) {}

bool H2Guard::frame(std::uint8_t type, double now) noexcept {
  switch (type) {
    case NGHTTP2_RST_STREAM:
      return resets_.take(now) && control_.take(now);
    case NGHTTP2_PING:
    case NGHTTP2_SETTINGS:
    case NGHTTP2_PRIORITY:
    case NGHTTP2_WINDOW_UPDATE:
      return control_.take(now);
    default:
      return true;
  }
}

}  // namespace corio::http::detail
