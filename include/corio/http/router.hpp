/// \file
/// corio::http::Router: method + path pattern -> handler (aiohttp's
/// UrlDispatcher).
///
/// <!-- doc: body (corio::http::Router& router, corio::http::Handler get_user, corio::http::Handler serve) -->
///     router.add("GET", "/users/{id}", get_user);
///     router.add("GET", "/static/{path:.*}", serve);  // {name:.*}: the rest of the path
///
/// Patterns are split into segments: a literal segment matches itself, a
/// {name} segment any one non-empty segment (percent-decoded into
/// MatchInfo), a final {name:.*} everything that is left.
///
/// Precedence is aiohttp's: the pattern equal to the path first, then the
/// patterns with more leading literal segments, then the order of adding.
/// A route that matches the path but has no handler for the method passes to
/// the next: with post("/a/b") and get("/a/{x}"), GET /a/b is {x}'s. When
/// routes match the path but none the method, it is a 405 whose Allow lists
/// their methods; no route at all, 404. A HEAD request falls back to a
/// route's GET handler (the server drops the body).
///
/// Patterns without parameters are found by one hash lookup of the raw path,
/// without allocating.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <corio/coro.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/ws_handlers.hpp>

namespace corio::http {

/// A route's handler: the request in, the answer out.
using Handler = std::function<Coro<Response>(Request&)>;

/// The routes of a server: method and path pattern to handler.
class Router {
 public:
  /// What resolve() found: a handler, or the status to answer with.
  struct Match {
    const Handler* handler = nullptr;  ///< null: see status
    int status = 200;                  ///< 404 or 405 when there is no handler
    std::string allow;                 ///< for 405: "GET, POST"
  };

  /// ValueError for a pattern not starting with "/", or a bad {...}.
  /// Routes method on pattern to handler.
  void add(std::string method, std::string_view pattern, Handler handler);
  /// A WebSocket route served by a handler set (ws_handlers.hpp): GET on
  /// pattern answers the handshake, then handlers serve the connection.
  template <class Data = std::monostate>
  void ws(std::string_view pattern, WsHandlers<Data> handlers) {
    add("GET", pattern, ws_handler(std::move(handlers)));
  }
  /// Finds the handler of method on the raw (still percent-encoded) path;
  /// fills params with the decoded parameters.
  Match resolve(std::string_view method, std::string_view raw_path, MatchInfo& params) const;

 private:
  struct MethodHandler {
    std::string method;
    Handler handler;
  };
  using Methods = std::vector<MethodHandler>;
  struct Segment {
    std::string text;  ///< the literal, or the parameter's name
    enum Kind { literal, param, tail } kind = literal;
  };
  struct Dynamic {
    std::vector<Segment> segments;
    Methods methods;
    std::size_t literal_prefix = 0;  ///< literal segments before the first parameter
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  Match resolve_patterns(std::string_view method, std::string_view raw_path, MatchInfo& params,
                         const Methods* literal) const;
  static const Handler* pick(const Methods& methods, std::string_view method);
  static void refuse(const Methods& methods, Match& refused);
  static std::size_t literal_prefix(const std::vector<Segment>& segments);
  static bool match(const Dynamic& route, std::string_view raw_path, MatchInfo& params);
  static void add_method(Methods& methods, std::string method, Handler handler);

  std::unordered_map<std::string, Methods, Hash, std::equal_to<>> static_;
  std::vector<Dynamic> dynamic_;
};

}  // namespace corio::http
