/// \file
/// corio::http::cors: Cross-Origin Resource Sharing as a middleware
/// (aiohttp-cors, Starlette's CORSMiddleware), per the Fetch standard.
///
/// <!-- doc: body (corio::http::Server& server) -->
///     corio::http::CorsOptions cors;
///     cors.allow_origins = {"https://app.example"};   // or {"*"}, or cors.allow_origin = predicate
///     cors.allow_credentials = true;
///     cors.expose_headers = {"X-Request-Id"};
///     server.use(corio::http::cors(std::move(cors)));
///
/// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
/// answered by the middleware itself, whatever the routes: 204 with the
/// Allow-Methods, Allow-Headers and Max-Age an allowed request gets, 403
/// without CORS headers for an origin, method or header not allowed. Any
/// other request with an allowed Origin runs as usual and its answer (an
/// error answer too: middleware runs for those) gets Allow-Origin, plus
/// Allow-Credentials and Expose-Headers when configured. "Vary: Origin" is
/// added whenever the answer depends on the Origin (everything but a
/// wildcard without credentials), so caches keep one copy per origin.
///
/// A wildcard with credentials echoes the request's Origin: browsers refuse
/// "*" together with credentials.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/http/server.hpp>

namespace corio::http {

/// What cors() allows, and what it tells the browser.
struct CorsOptions {
  /// Origins allowed, exactly as browsers send them ("https://a.example:8443");
  /// "*" allows any.
  std::vector<std::string> allow_origins;
  /// Also allowed: origins this says yes to (called on the connection's loop).
  std::function<bool(std::string_view origin)> allow_origin;
  /// Methods a preflight may ask for.
  std::vector<std::string> allow_methods = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
  /// Request headers a preflight may ask for beyond the CORS-safelisted ones
  /// (compared without case); "*" allows any (echoed back).
  std::vector<std::string> allow_headers;
  /// Response headers the page may read (Access-Control-Expose-Headers).
  std::vector<std::string> expose_headers;
  /// Whether the page may send credentials (Access-Control-Allow-Credentials).
  bool allow_credentials = false;
  std::optional<std::chrono::seconds> max_age;  ///< how long a preflight answer may be cached
};

/// The CORS middleware for Server::use().
Middleware cors(CorsOptions options);

}  // namespace corio::http
