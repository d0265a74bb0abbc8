/// \file
/// corio::http::RetryPolicy: when the client tries a request again
/// (ClientOptions::retry for the session, RequestOptions::retry for one
/// request), as urllib3's Retry and aiohttp-retry do.
///
/// <!-- doc: body -->
///     corio::http::ClientOptions opts;
///     opts.retry.attempts = 4;                       // the first one and 3 retries
///     opts.retry.backoff = std::chrono::milliseconds(200);
///     corio::http::ClientSession session(std::move(opts));
///
/// A request is tried again after a connection error (refused, reset, the
/// server closing before it answered; not a TLS certificate refusal), after
/// a timeout, and after an answer whose status is in `statuses` (429, 500,
/// 502, 503, 504), only if its method is in `methods` (the idempotent ones,
/// RFC 9110 section 9.2.2: a POST is not repeated unless asked). Before try
/// n+1 it waits backoff * 2^(n-1), at most max_backoff, scaled by a random
/// factor in [1 - jitter, 1] so that clients failing together do not come
/// back together; a Retry-After (seconds or an HTTP date) on a 429 or 503
/// is waited for instead, unless longer than max_retry_after (then that
/// answer is returned as it is). A proxy refusing a CONNECT tunnel
/// (ClientHttpProxyError) counts as an answer with its status, never
/// retried for a 407 (the same credentials would be refused again); a
/// connection error reaching the proxy is a connection error. Each try has the whole ClientTimeout of
/// its own. The last try's answer or error is the request's; a retried
/// answer's body is read and dropped (its connection kept) first.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corio::http {

/// When and how often a request is tried again.
struct RetryPolicy {
  std::size_t attempts = 1;  ///< tries in all; 1: none repeated
  std::chrono::milliseconds backoff{100};        ///< the wait before the first retry, doubled each time
  std::chrono::milliseconds max_backoff{10'000};  ///< the longest wait between tries
  double jitter = 0.5;  ///< 0: the exact backoff

  /// Answers tried again.
  std::vector<int> statuses = {429, 500, 502, 503, 504};
  /// Methods tried again (compared exactly, as sent: upper case).
  std::vector<std::string> methods = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"};
  bool connection_errors = true;  ///< whether a connection error is tried again
  bool timeouts = true;           ///< whether a timeout is tried again
  bool respect_retry_after = true;  ///< whether a 429/503's Retry-After sets the wait

  /// A longer Retry-After is not waited for: that answer is returned.
  std::chrono::milliseconds max_retry_after{60'000};

  bool retries_method(std::string_view method) const noexcept;  ///< whether method is in methods
  bool retries_status(int status) const noexcept;  ///< whether status is in statuses

  /// The wait before try `attempt` + 1 (attempt counts from 1), for a
  /// random draw in [0, 1).
  std::chrono::milliseconds delay(std::size_t attempt, double random) const noexcept;
};

/// A Retry-After value (RFC 9110 section 10.2.3): delta-seconds, or an
/// HTTP date, as the time left from now (unix seconds); nullopt if it is
/// neither. A date in the past is zero.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value, double now);

}  // namespace corio::http
