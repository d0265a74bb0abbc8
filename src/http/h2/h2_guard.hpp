// An HTTP/2 connection's defences against a peer that costs the server more
// than its requests are worth (RFC 9113 section 10.5; docs/http-server.md,
// "HTTP/2 defences"). nghttp2 1.52 (Debian's, with its security fixes)
// guards some by itself, tuned in h2_session.cpp: CONTINUATION frames per
// header block (CVE-2024-27316 class), SETTINGS entries per frame, unsent
// SETTINGS and PING ACKs (NGHTTP2_ERR_FLOODED), an RST_STREAM rate (its
// last resort: 1000, then 33 a second). What it cannot see, a guard
// counts, and past a limit the connection ends with GOAWAY
// (ENHANCE_YOUR_CALM):
//   - peer resets (Rapid Reset, CVE-2023-44487: each opened stream starts
//     a handler, each reset lets the peer open another under
//     max_concurrent_streams): a token bucket of 2 x max_concurrent_streams
//     (at least 100), refilled in 10 s;
//   - handlers running on one connection: at most 2 x max_concurrent_streams
//     (nginx's bound on streams opened at once); nghttp2 counts only open
//     streams, and a stream the peer reset is closed while its handler runs;
//   - control frames (PING, SETTINGS, PRIORITY, WINDOW_UPDATE, RST_STREAM)
//     that carry no request: 500 (below nghttp2's 1,000 unsent ACKs), refilled at 100 a second,
//     plus one back per request started and per DATA frame sent (the WINDOW_UPDATEs a large answer
//     earns);
//   - an HPACK bomb: a header block that decodes to more than 4 x
//     limits.max_head_bytes (past 1 x it is refused with 431 and not kept;
//     past 4 x it is an attack, not a big request).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace corio::http {
struct ServerOptions;
}

namespace corio::http::detail {

// `capacity` tokens, `rate` more a second (the loop's time, in seconds).
class TokenBucket {
 public:
  TokenBucket(double capacity, double rate, double now) noexcept
      : tokens_(capacity), capacity_(capacity), rate_(rate), at_(now) {}
  bool take(double now) noexcept {
    tokens_ = std::min(capacity_, tokens_ + (now - at_) * rate_);
    at_ = now;
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }
  void give() noexcept { tokens_ = std::min(capacity_, tokens_ + 1); }

 private:
  double tokens_;
  double capacity_;
  double rate_;
  double at_;
};

class H2Guard {
 public:
  H2Guard(const ServerOptions& options, double now) noexcept;
  // A frame other than HEADERS, DATA and CONTINUATION came; false: over a limit.
  bool frame(std::uint8_t type, double now) noexcept;
  // A handler may start while `running` others do.
  bool may_start(std::size_t running) const noexcept { return running < max_running_; }
  void earned() noexcept { control_.give(); }  // a request started, a DATA frame went
  // A header block decoded to `bytes` so far (counted as HTTP/1.1 lines).
  bool head_within(std::size_t bytes) const noexcept { return bytes <= max_head_decoded_; }

 private:
  TokenBucket resets_;
  TokenBucket control_;
  std::size_t max_running_;
  std::size_t max_head_decoded_;
};

}  // namespace corio::http::detail
