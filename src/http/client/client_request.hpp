// The client's request side: a request prepared from RequestOptions (the
// form every redirect hop rewrites), its head serialised in one buffer, and
// the redirect rules. Pure functions over strings: tested without sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/http/client.hpp>
#include <corio/http/parser.hpp>

#include "http/client/connection_pool.hpp"

namespace corio::http::detail {

class ResponseBody;

struct PreparedRequest {
  std::string method;
  Url url;
  Headers headers;                  // the session's merged with the request's
  std::optional<std::string> body;  // its Content-Type is among the headers
  // Or a multipart body, streamed after the head (its files read then).
  std::shared_ptr<const FormData> form;
  std::uint64_t form_length = 0;
  bool auto_decompress = true;
  // Through this proxy: an http URL in absolute form with proxy_headers,
  // an https one in a CONNECT tunnel.
  std::optional<Url> proxy;
  Headers proxy_headers;
  // The session's and the request's: dropped by a redirect to another origin.
  std::vector<std::string> sensitive_headers;
};

// What every try of a request goes by, of its RequestOptions and the
// session's defaults (the rest is in its PreparedRequest).
struct TryOptions {
  ClientTimeout timeout;
  std::optional<std::string> proxy;  // RequestOptions::proxy
  bool allow_redirects = true;
  std::size_t max_redirects = 10;
  bool raise_for_status = false;
};

TryOptions try_options(const ClientOptions& session, const RequestOptions& opts);

// A request sent and the head of its (final, non-1xx) response.
struct Exchange {
  Lease lease;
  ResponseHead head;
  // Or, on HTTP/2, the response's body made already (the lease holds nothing).
  std::unique_ptr<ResponseBody> h2_body;
};

// ValueError for a method that is not a token, a header name that is not
// one, or a value with CR, LF or NUL (header injection).
PreparedRequest prepare_request(std::string method, Url url, const ClientOptions& session,
                                RequestOptions& opts);

// Bodies up to this size travel in the head's buffer (one write, one
// copy); larger ones are written after it without being copied.
inline constexpr std::size_t kInlineBodyMax = 16 * 1024;

// The request head through its blank line, with the jar's cookies (merged
// with any Cookie header given), and the body appended when it is small.
std::string serialize_request(const PreparedRequest& req, std::string_view jar_cookies);

// Where req's connection goes (connection_pool.hpp's Route).
Route route_for(const PreparedRequest& req);

bool is_redirect(int status) noexcept;
// Rewrites req for the hop to `next`, through `next_proxy`, after a
// redirect with `status`: method and body rules, and the caller's secrets
// dropped across origins (client.hpp says which).
void follow_redirect(PreparedRequest& req, int status, Url next, std::optional<Url> next_proxy);
// Safe to send twice (RFC 9110 section 9.2.2): retried on a stale connection.
bool idempotent(std::string_view method) noexcept;

}  // namespace corio::http::detail
