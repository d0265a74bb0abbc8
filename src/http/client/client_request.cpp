// Preparing and serialising client requests; the redirect rules (see
// client_request.hpp).
#include "http/client/client_request.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include <corio/errors.hpp>

namespace corio::http {

JsonBody::JsonBody(const nlohmann::json& value) : text(value.dump()) {}

namespace detail {

namespace {

// RFC 9110 section 5.6.2's tchar.
bool is_token(std::string_view s) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           kSpecials.find(ch) != std::string_view::npos;
  });
}

void check_field(const Header& f) {
  if (!is_token(f.name)) throw ValueError("invalid header name: \"" + f.name + "\"");
  if (f.value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    throw ValueError("invalid value for header " + f.name + ": CR, LF and NUL are not allowed");
  }
}

// The session's headers, then the request's, each replacing the session's
// fields of its name (aiohttp's merge).
Headers merge_headers(const Headers& session, const Headers& request) {
  Headers out;
  for (const Header& f : session) {
    if (!request.contains(f.name)) out.add(f.name, f.value);
  }
  for (const Header& f : request) out.add(f.name, f.value);
  for (const Header& f : out) check_field(f);
  return out;
}

void set_default(Headers& h, std::string_view name, std::string value) {
  if (!h.contains(name)) h.add(std::string(name), std::move(value));
}

std::optional<std::string> take_body(RequestOptions& opts, Headers& headers) {
  const int given = int(opts.data.has_value()) + int(opts.form.has_value()) +
                    int(opts.json.has_value()) + int(opts.multipart.has_value());
  if (given > 1) throw ValueError("give one of data, form, json and multipart, not several");
  if (opts.data) {
    set_default(headers, "Content-Type", "application/octet-stream");
    return std::move(opts.data);
  }
  if (opts.form) {
    set_default(headers, "Content-Type", "application/x-www-form-urlencoded");
    return encode_query(*opts.form);
  }
  if (opts.json) {
    set_default(headers, "Content-Type", "application/json");
    return std::move(opts.json->text);
  }
  return std::nullopt;
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += ": ";
  out += value;
  out += "\r\n";
}

}  // namespace

PreparedRequest prepare_request(std::string method, Url url, const ClientOptions& session,
                                RequestOptions& opts) {
  if (!is_token(method)) throw ValueError("invalid method: \"" + method + "\"");
  if (!opts.params.empty()) {
    const std::string extra = encode_query(opts.params);
    url.query = url.query.empty() ? extra : url.query + "&" + extra;
  }
  PreparedRequest req;
  req.method = std::move(method);
  req.url = std::move(url);
  req.headers = merge_headers(session.headers, opts.headers);
  req.body = take_body(opts, req.headers);
  if (opts.multipart) {
    set_default(req.headers, "Content-Type", opts.multipart->content_type());
    req.form_length = opts.multipart->content_length();
    req.form = std::make_shared<const FormData>(std::move(*opts.multipart));
  }
  req.auto_decompress = session.auto_decompress;
  req.sensitive_headers = session.sensitive_headers;
  req.sensitive_headers.insert(req.sensitive_headers.end(), opts.sensitive_headers.begin(),
                               opts.sensitive_headers.end());
  return req;
}

TryOptions try_options(const ClientOptions& session, const RequestOptions& opts) {
  return TryOptions{opts.timeout.value_or(session.timeout), opts.proxy, opts.allow_redirects,
                    opts.max_redirects, opts.raise_for_status.value_or(session.raise_for_status)};
}

std::string serialize_request(const PreparedRequest& req, std::string_view jar_cookies) {
  // Through a proxy (not a tunnel), the absolute form (RFC 9112 section 3.2.2).
  const bool absolute = req.proxy && !req.url.is_https();
  const std::string target = absolute ? req.url.to_string() : req.url.target();
  const bool inline_body = req.body && req.body->size() <= kInlineBodyMax;
  std::string out;
  out.reserve(256 + target.size() + req.headers.size() * 32 + (inline_body ? req.body->size() : 0));
  out += req.method;
  out += ' ';
  out += target;
  out += " HTTP/1.1\r\n";
  if (!req.headers.contains("Host")) append_field(out, "Host", req.url.host_header());
  if (absolute) {
    for (const Header& f : req.proxy_headers) append_field(out, f.name, f.value);
  }
  std::string cookies(jar_cookies);
  for (const Header& f : req.headers) {
    // One Cookie field (RFC 6265 section 5.4): the caller's, then the jar's.
    if (iequals(f.name, "Cookie")) {
      cookies = cookies.empty() ? f.value : f.value + "; " + cookies;
      continue;
    }
    append_field(out, f.name, f.value);
  }
  if (!cookies.empty()) append_field(out, "Cookie", cookies);
  if (!req.headers.contains("User-Agent")) append_field(out, "User-Agent", "corio");
  if (!req.headers.contains("Accept")) append_field(out, "Accept", "*/*");
  if (req.auto_decompress && !req.headers.contains("Accept-Encoding")) {
    append_field(out, "Accept-Encoding", "gzip, deflate");
  }
  // A POST, PUT or PATCH without a body still says so (servers may insist, 411).
  const bool says_length = req.body || req.form || req.method == "POST" || req.method == "PUT" ||
                          req.method == "PATCH";
  if (says_length && !req.headers.contains("Content-Length")) {
    const std::uint64_t length = req.body ? req.body->size() : req.form ? req.form_length : 0;
    append_field(out, "Content-Length", std::to_string(length));
  }
  out += "\r\n";
  if (inline_body) out += *req.body;
  return out;
}

Route route_for(const PreparedRequest& req) {
  if (!req.proxy) return Route{req.url, std::nullopt, {}, req.form != nullptr};
  if (req.url.is_https()) return Route{req.url, req.proxy, req.proxy_headers};
  // A proxy taking absolute-form requests speaks HTTP/1.1 (h2c prior
  // knowledge is about origins).
  return Route{*req.proxy, std::nullopt, {}, true};
}

bool is_redirect(int status) noexcept {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

namespace {

// What the caller meant for one origin only: sent on to another, a
// redirect would hand it to whoever the first server names (curl's
// CVE-2022-27776; Go and requests drop these too). Proxy-Authorization is
// the proxy's: it stays only when the next hop goes to the proxy in
// absolute form, since through a tunnel or without a proxy the origin
// would read it. Cookies the jar holds for the new origin still go there.
void drop_secrets(PreparedRequest& req, const Url& next, const std::optional<Url>& next_proxy) {
  req.headers.remove("Authorization");
  req.headers.remove("Cookie");
  if (!next_proxy || next.is_https()) req.headers.remove("Proxy-Authorization");
  for (const std::string& name : req.sensitive_headers) req.headers.remove(name);
}

}  // namespace

void follow_redirect(PreparedRequest& req, int status, Url next, std::optional<Url> next_proxy) {
  // RFC 9110 section 15.4: what browsers (and aiohttp) do, which the RFC allows.
  const bool to_get = (status == 303 && req.method != "HEAD") ||
                      ((status == 301 || status == 302) && req.method == "POST");
  if (to_get) {
    req.method = "GET";
    req.body.reset();
    req.form.reset();
    req.headers.remove("Content-Type");
    req.headers.remove("Content-Length");
  }
  if (next.origin() != req.url.origin()) drop_secrets(req, next, next_proxy);
  // The Host of the new URL, not a Host the caller set for the old one.
  if (next.host_header() != req.url.host_header()) req.headers.remove("Host");
  req.url = std::move(next);
  req.proxy = std::move(next_proxy);
}

bool idempotent(std::string_view method) noexcept {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE" ||
         method == "PUT" || method == "DELETE";
}

}  // namespace detail

}  // namespace corio::http
