// The retry policy (see retry.hpp): ClientSession::with_retries around
// follow(), one try each, and the policy's pieces it uses.
#include <corio/detail/entropy.hpp>
#include <corio/http/client.hpp>

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include <corio/event_loop.hpp>
#include <corio/http/tunnel.hpp>
#include <corio/sleep.hpp>

#include "http/client/client_request.hpp"

namespace corio::http {

bool RetryPolicy::retries_method(std::string_view method) const noexcept {
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

bool RetryPolicy::retries_status(int status) const noexcept {
  return std::find(statuses.begin(), statuses.end(), status) != statuses.end();
}

std::chrono::milliseconds RetryPolicy::delay(std::size_t attempt, double random) const noexcept {
  const double doubled = static_cast<double>(backoff.count()) *
                         std::pow(2.0, static_cast<double>(std::min<std::size_t>(attempt, 64) - 1));
  const double capped = std::min(doubled, static_cast<double>(max_backoff.count()));
  const double scaled = capped * (1.0 - std::clamp(jitter, 0.0, 1.0) * random);
  return std::chrono::milliseconds(static_cast<std::int64_t>(scaled));
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value, double now) {
  std::uint64_t seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec == std::errc() && end == value.data() + value.size() && !value.empty()) {
    return std::chrono::milliseconds(std::min<std::uint64_t>(seconds, 1'000'000'000) * 1000);
  }
  // An HTTP date, IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the form
  // RFC 9110 section 5.6.7 has senders use.
  struct tm tm {};
  const std::string text(value);
  const char* rest = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!rest || *rest != '\0') return std::nullopt;
  const double at = static_cast<double>(::timegm(&tm));
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::max(0.0, at - now) * 1000));
}

namespace {

// In [0, 1): 53 random bits, the precision of a double.
double draw() { return static_cast<double>(corio::detail::random_u64() >> 11) * 0x1.0p-53; }

double unix_now() { return corio::detail::wall_time(); }

// How long to wait before trying again after this answer; nullopt: do not.
std::optional<std::chrono::milliseconds> wait_after(const ClientResponse& r, const RetryPolicy& p,
                                                    std::size_t attempt) {
  if (!p.retries_status(r.status())) return std::nullopt;
  const std::optional<std::string_view> after = r.headers().get("Retry-After");
  if (p.respect_retry_after && after && (r.status() == 429 || r.status() == 503)) {
    const std::optional<std::chrono::milliseconds> wait = parse_retry_after(*after, unix_now());
    if (wait && *wait > p.max_retry_after) return std::nullopt;
    if (wait) return wait;
  }
  return p.delay(attempt, draw());
}

// A proxy refusing CONNECT is retried as the answer it stands for: a 502
// or 503 (the proxy cannot reach the origin, or is overloaded) may pass.
// A 407 never: the credentials sent again are the same ones it refused.
bool retries_proxy_refusal(const RetryPolicy& p, int status) noexcept {
  return status != 407 && p.retries_status(status);
}

}  // namespace

// Each try's response is checked here, not by follow: a retried status is
// no error yet.
Coro<ClientResponse> ClientSession::with_retries(detail::PreparedRequest req, detail::TryOptions opts,
                                                 RetryPolicy retry) {
  const bool raise = std::exchange(opts.raise_for_status, false);
  for (std::size_t attempt = 1;; ++attempt) {
    const bool last = attempt >= retry.attempts;
    std::optional<std::chrono::milliseconds> wait;
    try {
      ClientResponse r = co_await follow(req, opts);
      if (!last) wait = wait_after(r, retry, attempt);
      if (!wait) {
        if (raise) r.raise_for_status();
        co_return r;
      }
      co_await discard_body(r);
    } catch (const ClientSSLError&) {
      throw;  // a certificate refused now is refused again
    } catch (const ClientHttpProxyError& e) {
      if (last || !retries_proxy_refusal(retry, e.status())) throw;
    } catch (const ClientConnectionError&) {
      if (last || !retry.connection_errors) throw;
    } catch (const TimeoutError&) {
      if (last || !retry.timeouts) throw;
    }
    co_await sleep(wait.value_or(retry.delay(attempt, draw())));
  }
}

}  // namespace corio::http
