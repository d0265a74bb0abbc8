// The CORS middleware (see cors.hpp).
#include <corio/http/cors.hpp>

#include <algorithm>
#include <memory>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

bool listed(const std::vector<std::string>& list, std::string_view item) {
  return std::any_of(list.begin(), list.end(),
                     [item](const std::string& s) { return iequals(s, item); });
}

bool origin_allowed(const CorsOptions& o, std::string_view origin) {
  // Origins compare exactly (scheme and host are lower case in what browsers send).
  const bool in_list = std::any_of(o.allow_origins.begin(), o.allow_origins.end(),
                                   [origin](const std::string& s) { return s == "*" || s == origin; });
  return in_list || (o.allow_origin && o.allow_origin(origin));
}

bool wildcard(const CorsOptions& o) {
  return std::find(o.allow_origins.begin(), o.allow_origins.end(), "*") != o.allow_origins.end();
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

// Every name in a comma-separated Access-Control-Request-Headers is allowed.
bool headers_allowed(const CorsOptions& o, std::string_view requested) {
  if (listed(o.allow_headers, "*")) return true;
  bool all = true;
  syntax::for_each_element(requested, [&](std::string_view name) {
    all = all && listed(o.allow_headers, name);
  });
  return all;
}

void add_vary_origin(Headers& h) {
  const std::optional<std::string_view> vary = h.get("Vary");
  if (!vary) {
    h.add("Vary", "Origin");
  } else if (!list_contains(*vary, "Origin") && !list_contains(*vary, "*")) {
    h.set("Vary", std::string(*vary) + ", Origin");
  }
}

// Allow-Origin (and Credentials, Vary) for an allowed origin.
void allow(const CorsOptions& o, std::string_view origin, Headers& h) {
  const bool any = wildcard(o) && !o.allow_credentials;
  h.set("Access-Control-Allow-Origin", any ? std::string("*") : std::string(origin));
  if (o.allow_credentials) h.set("Access-Control-Allow-Credentials", "true");
  if (!any) add_vary_origin(h);
}

Response preflight(const CorsOptions& o, std::string_view origin, const Request& req) {
  const std::string_view method = req.headers().get_or("Access-Control-Request-Method", "");
  const std::string_view requested = req.headers().get_or("Access-Control-Request-Headers", "");
  if (!origin_allowed(o, origin) || !listed(o.allow_methods, method) ||
      !headers_allowed(o, requested)) {
    Response denied = Response::text("CORS preflight refused", 403);
    add_vary_origin(denied.headers);
    return denied;
  }
  Response r(204);
  allow(o, origin, r.headers);
  r.headers.set("Access-Control-Allow-Methods", join(o.allow_methods));
  if (!requested.empty()) {
    r.headers.set("Access-Control-Allow-Headers",
                  listed(o.allow_headers, "*") ? std::string(requested) : join(o.allow_headers));
  }
  if (o.max_age) r.headers.set("Access-Control-Max-Age", std::to_string(o.max_age->count()));
  return r;
}

Coro<Response> apply(const CorsOptions& o, Request& req, Next next) {
  const std::optional<std::string_view> origin = req.headers().get("Origin");
  if (!origin) co_return co_await next(req);
  if (req.method() == "OPTIONS" && req.headers().contains("Access-Control-Request-Method")) {
    co_return preflight(o, *origin, req);
  }
  Response resp = co_await next(req);
  if (origin_allowed(o, *origin)) {
    allow(o, *origin, resp.headers);
    if (!o.expose_headers.empty()) {
      resp.headers.set("Access-Control-Expose-Headers", join(o.expose_headers));
    }
  } else if (!wildcard(o)) {
    add_vary_origin(resp.headers);
  }
  co_return resp;
}

}  // namespace

Middleware cors(CorsOptions options) {
  // Shared by the copies the server's workers make of the middleware.
  auto shared = std::make_shared<const CorsOptions>(std::move(options));
  return [shared](Request& req, Next next) { return apply(*shared, req, next); };
}

}  // namespace corio::http
