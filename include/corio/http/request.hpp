/// \file
/// corio::http::Request: one request as a server handler sees it (aiohttp's
/// web.Request): the head, the route's path parameters, and the body, read
/// on demand from the connection.
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> create_user(Request& req) {
///       nlohmann::json body = co_await req.json();      // 400 if it is not JSON (json.hpp's limits)
///       User user = co_await req.json_as<User>();       // or: 422 if it is not a User (json_as.hpp)
///       std::string_view id = req.param("id");          // /users/{id}
///       co_return Response::json(nlohmann::json{{"id", id}, {"name", user.name}}, 201);
///     }
///
/// Typed parameters, as FastAPI's `item_id: int` and `limit: int = 10`: a
/// path or query parameter converted to T (integers, floating point, bool,
/// std::string), a text that is not a T answered with a 422 in FastAPI's
/// shape, {"detail": [{"type": "int_parsing", "loc": ["path", "id"], "msg":
/// "Input should be a valid integer, unable to parse string as an
/// integer", "input": "x"}]} (json_schema.hpp's error_details):
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> show(Request& req) {
///       const int id = req.path_as<int>("id");                  // /items/{id}
///       const int limit = req.query_as<int>("limit", 10);       // ?limit=N, 10 if absent
///       const std::optional<bool> full = req.query_as<std::optional<bool>>("full");
///       co_return Response::text(std::to_string(id + limit + full.value_or(false)));
///     }
///
/// A query_as<T>(name) without a fallback requires the parameter (a 422
/// "missing" without it), unless T is a std::optional. Constraints
/// (constraints.hpp) bound a value as FastAPI's Query(10, ge=1, le=100):
/// `req.query_as<int>("limit", 10, {.ge = 1, .le = 100})`. bool takes what
/// pydantic takes: true/false, 1/0, yes/no, on/off, t/f, y/n, in any case.
/// query_as<T>() with no name reads the whole query into a struct whose
/// fields are listed (json_fields.hpp), constraints and all (json_as.hpp).
///
/// The body is not read before the handler asks for it: read(), text() and
/// json() take all of it (at most Limits::max_body, else 413), read_chunk()
/// streams it piece by piece ("" at the end). A client that sent
/// "Expect: 100-continue" gets its "100 Continue" at the first of these calls.
/// Whatever the handler leaves unread the server discards before the next
/// request (or closes the connection when that would cost too much).
///
/// Suspends: the body reads, until the peer has sent the bytes. Resumed by:
/// the loop, when the socket is readable. A body that breaks the protocol
/// (a bad chunk, over the limit) throws ParseError, which the server turns
/// into its status and a closed connection.
///
/// The same Request serves HTTP/1.1 and HTTP/2 (docs/http-server.md,
/// "HTTP/2"): a handler tells them apart only if it asks (version()).
///
/// Valid only during the handler call: it refers to the connection's buffers.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/url.hpp>
#include <corio/json/constraints.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http {

class Response;
class Request;

namespace detail {
class HttpConnection;
class RequestSource;
/// For the server's own protocols (a WebSocket's handler set): the
/// connection a request came on.
HttpConnection& connection_of(Request& req) noexcept;
/// The same for a request that came on another protocol (an HTTP/2 stream);
/// nullptr for HTTP/1.1.
RequestSource* source_of(Request& req) noexcept;
}  // namespace detail

/// The values of a route's {name} parameters, percent-decoded, in order.
using MatchInfo = std::vector<std::pair<std::string, std::string>>;

namespace detail {
// A parameter's text as a value (typed_params.cpp); HTTPException(422) in
// FastAPI's shape, its loc [where, name], when it is not one, or "missing"
// when text is null. Integers within [min, max].
std::int64_t param_integer(const std::string_view* text, const char* where, std::string_view name,
                           std::int64_t min, std::int64_t max);
double param_number(const std::string_view* text, const char* where, std::string_view name);
bool param_bool(const std::string_view* text, const char* where, std::string_view name);
std::string param_string(const std::string_view* text, const char* where, std::string_view name);

// The query as the JSON object a schema describes, checked against it (query_as<T>()).
nlohmann::json query_object(const QueryParams& query, const nlohmann::json& schema);

template <class T>
struct is_optional_param : std::false_type {};
template <class T>
struct is_optional_param<std::optional<T>> : std::true_type {};

template <class T>
T param_as(std::optional<std::string_view> text, const char* where, std::string_view name) {
  if constexpr (is_optional_param<T>::value) {
    if (!text) return std::nullopt;
    return param_as<typename T::value_type>(text, where, name);
  } else {
    const std::string_view* p = text ? &*text : nullptr;
    if constexpr (std::is_same_v<T, bool>) {
      return param_bool(p, where, name);
    } else if constexpr (std::is_integral_v<T>) {
      // A 64-bit unsigned T is read within the signed range.
      constexpr std::int64_t max = sizeof(T) < 8 || std::is_signed_v<T>
                                       ? static_cast<std::int64_t>(std::numeric_limits<T>::max())
                                       : std::numeric_limits<std::int64_t>::max();
      return static_cast<T>(param_integer(p, where, name, std::numeric_limits<T>::min(), max));
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(param_number(p, where, name));
    } else {
      static_assert(std::is_same_v<T, std::string>, "path_as / query_as: an integer, floating point, bool or std::string");
      return param_string(p, where, name);
    }
  }
}

// A parameter's value (its text given for the 422's input) held to rules.
void check_param(double value, const Constraints& rules, const char* where, std::string_view name,
                 std::string_view text);
void check_param(std::string_view value, const Constraints& rules, const char* where,
                 std::string_view name);

template <class T>
T checked_param(std::optional<std::string_view> text, const Constraints& rules, const char* where,
                std::string_view name) {
  T value = param_as<T>(text, where, name);
  if constexpr (std::is_arithmetic_v<T>) {
    check_param(static_cast<double>(value), rules, where, name, *text);
  } else {
    check_param(std::string_view(value), rules, where, name);
  }
  return value;
}
}  // namespace detail

/// A request's protocol version, as aiohttp's request.version: {1, 1},
/// {1, 0}, or {2, 0} for HTTP/2.
struct HttpVersion {
  int major = 1;  ///< 1 or 2
  int minor = 1;  ///< 1 for HTTP/1.1, 0 for HTTP/1.0 and HTTP/2
  friend bool operator==(HttpVersion, HttpVersion) = default;  ///< both parts equal
};

/// One request as its handler sees it; valid during the handler call only.
class Request {
 public:
  /// Made by the server for each request, over the connection it came on.
  Request(const RequestHead& head, detail::HttpConnection* conn)
      : head_(head), via_(reinterpret_cast<std::uintptr_t>(conn)) {}
  /// Made by the server for a request that came on an HTTP/2 stream.
  Request(const RequestHead& head, detail::RequestSource* source)
      : head_(head), via_(reinterpret_cast<std::uintptr_t>(source) | 1) {}
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  const std::string& method() const noexcept { return head_.method; }  ///< "GET", as sent
  const std::string& target() const noexcept { return head_.target; }  ///< as sent: "/p%20q?x=1"

  /// The target's path, percent-decoded ("/p q"). A bad escape: 400.
  const std::string& path() const;
  std::string_view raw_path() const noexcept;  ///< the path as sent
  std::string_view query_string() const noexcept;  ///< after "?", as sent
  const QueryParams& query() const;  ///< parsed on first use
  const Headers& headers() const noexcept { return head_.headers; }  ///< the request's header block
  int version_minor() const noexcept { return head_.version_minor; }  ///< 1 for HTTP/1.1, 0 for HTTP/1.0
  /// {1, 1}, {1, 0}, or {2, 0} for a request that came on an HTTP/2 stream.
  HttpVersion version() const noexcept {
    return over_h1() ? HttpVersion{1, head_.version_minor} : HttpVersion{2, 0};
  }
  std::string peername() const;  ///< "127.0.0.1:50312"

  MatchInfo& match_info() noexcept { return match_info_; }  ///< the route's path parameters
  const MatchInfo& match_info() const noexcept { return match_info_; }  ///< the same, read-only

  /// A path parameter's value; "" if the route has none of that name.
  std::string_view param(std::string_view name) const noexcept;
  /// The same; nullopt if the route has none of that name.
  std::optional<std::string_view> param_text(std::string_view name) const noexcept;
  /// A path parameter as a T; HTTPException(422) if it is not one.
  template <class T>
  T path_as(std::string_view name) const;
  /// A query parameter as a T (the first, if repeated); HTTPException(422)
  /// if it is not one, or if it is absent and T is not a std::optional.
  template <class T>
  T query_as(std::string_view name) const;
  /// The same, fallback when the parameter is absent.
  template <class T>
  T query_as(std::string_view name, T fallback) const;
  /// A path parameter as a T within rules (FastAPI's Path(ge=1)); 422 if not.
  template <class T>
  T path_as(std::string_view name, const Constraints& rules) const;
  /// A query parameter as a T within rules (FastAPI's Query(10, ge=1, le=100)),
  /// fallback (unchecked) when it is absent; 422 if it is not such a T.
  template <class T>
  T query_as(std::string_view name, T fallback, const Constraints& rules) const;
  /// The whole query as a T whose fields are listed (json_fields.hpp): every
  /// problem in one 422. Defined in json_as.hpp (include it).
  template <class T>
  T query_as() const;

  /// The whole body (413 past Limits::max_body).
  Coro<std::string> read();
  Coro<std::string> text() { return read(); }  ///< read(), by aiohttp's name

  /// The body parsed as JSON; HTTPException(400) if it is not.
  Coro<nlohmann::json> json();
  /// The same, checked against a JSON Schema (json_schema.hpp): a body that
  /// does not match is HTTPException(422) with a JSON body listing every
  /// problem in FastAPI's shape, {"detail": [{"type": "int_type", "loc":
  /// ["body", "days"], "msg": "Input should be a valid integer", "input":
  /// "3"}, ...]} (error_details in json_schema.hpp). As FastAPI, a body
  /// that is not JSON is a 422 too, {"type": "json_invalid", "loc": ["body",
  /// 17], "msg": "JSON decode error", "input": {}, "ctx": {"error": "syntax
  /// error at byte 17"}} (17: the byte where the parser stopped), and an
  /// empty one {"type": "missing", "loc": ["body"], "msg": "Field required",
  /// "input": null}; JSON over json.hpp's limits stays a 400.
  Coro<nlohmann::json> json(nlohmann::json schema);
  /// The body as a T whose fields are listed (json_fields.hpp): json() with
  /// T's schema (its problems in the fields' declared order), then decoded.
  /// Defined in json_as.hpp (include it).
  template <class T>
  Coro<T> json_as();
  /// The next piece of the body as it arrives; "" once it is all read.
  Coro<std::string> read_chunk();
  /// The body's trailer fields (chunked bodies), once it is read.
  const Headers& trailers() const noexcept;

  /// Whether the request asks to switch protocols (Connection: upgrade with
  /// an Upgrade field) or is a CONNECT: what take_connection() is for. On
  /// HTTP/2, an extended CONNECT (RFC 8441, `:protocol`), which reaches the
  /// handler as a GET with `Upgrade: <protocol>` (a WebSocket's handshake
  /// reads the same on both versions).
  bool is_upgrade() const noexcept;
  /// Answers with `answer` (a 101 for an Upgrade, a 2xx for CONNECT: its
  /// head only, with its headers as given, Connection included) and hands
  /// the connection over: the streams are the caller's, the bytes that came
  /// after the request buffered in the reader. The server sends nothing
  /// more on it, reads no further request from it and applies none of its
  /// timeouts to it; whatever the handler returns afterwards is dropped.
  /// Any unread body is read first (the switch comes after the message).
  /// The Request stays readable afterwards while the handler runs (its
  /// head, query, match info, peername; a chunked body's trailers): the
  /// server keeps the head alone and takes the rest of the request's state
  /// back (docs/websocket.md). On HTTP/2 the stream of an extended CONNECT
  /// is handed over instead: the answer is its HEADERS frame, the streams
  /// carry its DATA frames both ways, write_eof() is END_STREAM and close()
  /// ends the stream; the connection's other streams go on (docs/http2.md).
  /// RuntimeError when called twice, or on another HTTP/2 request
  /// (is_upgrade() is false there).
  Coro<std::pair<StreamReader, StreamWriter>> take_connection(Response answer);

 private:
  friend detail::HttpConnection& detail::connection_of(Request& req) noexcept;
  friend detail::RequestSource* detail::source_of(Request& req) noexcept;
  // What the request came on: an HTTP/1.1 connection, called directly
  // (its hot path pays no virtual call), or, with bit 0 set (both are
  // 8-aligned), an HTTP/2 stream's RequestSource (src/http/server/request_source.hpp).
  // One word, as the connection's pointer was: a WebSocket's handler keeps
  // its Request for the connection's life.
  bool over_h1() const noexcept { return (via_ & 1) == 0; }
  detail::HttpConnection* conn() const noexcept {
    return reinterpret_cast<detail::HttpConnection*>(via_);
  }
  detail::RequestSource* source() const noexcept {
    return reinterpret_cast<detail::RequestSource*>(via_ & ~std::uintptr_t{1});
  }
  const RequestHead& head_;
  std::uintptr_t via_;
  MatchInfo match_info_;
  mutable std::optional<std::string> path_;
  mutable std::optional<QueryParams> query_;
};

template <class T>
T Request::path_as(std::string_view name) const {
  return detail::param_as<T>(param_text(name), "path", name);
}

template <class T>
T Request::path_as(std::string_view name, const Constraints& rules) const {
  return detail::checked_param<T>(param_text(name), rules, "path", name);
}

template <class T>
T Request::query_as(std::string_view name, T fallback, const Constraints& rules) const {
  const std::optional<std::string_view> text = query().get(name);
  return text ? detail::checked_param<T>(text, rules, "query", name) : std::move(fallback);
}

template <class T>
T Request::query_as(std::string_view name) const {
  return detail::param_as<T>(query().get(name), "query", name);
}

template <class T>
T Request::query_as(std::string_view name, T fallback) const {
  const std::optional<std::string_view> text = query().get(name);
  return text ? detail::param_as<T>(text, "query", name) : std::move(fallback);
}

}  // namespace corio::http
