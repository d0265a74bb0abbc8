/// \file
/// JSON-RPC 2.0 messages (https://www.jsonrpc.org/specification), as MCP
/// uses them: the shapes, their validation, and the standard error codes.
///
/// <!-- doc: body in corio::mcp (std::string line, json result, std::function<void(json)> send) -->
///     json j = parse_json(line);           // RpcError(parse_error) if not JSON
///     Message m = parse_message(j);        // InvalidMessage if not JSON-RPC
///     if (m.is_request()) send(make_response(m.id, result));
///
/// No transport and no dispatch here (session.hpp does those): this file
/// only says what a message is. Validation is strict where MCP is: ids are
/// strings or integers (never null, never fractional); params, when
/// present, are an object or an array; "jsonrpc" is exactly "2.0"; a
/// response has exactly one of result and error. Unknown members are
/// ignored, as the spec allows.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <corio/json/parse.hpp>

namespace corio::mcp {

/// The JSON value of every message (nlohmann::json).
using json = nlohmann::json;

/// The codes JSON-RPC 2.0 reserves.
namespace error_code {
inline constexpr int parse_error = -32700;       ///< not JSON
inline constexpr int invalid_request = -32600;   ///< JSON, but not a valid message
inline constexpr int method_not_found = -32601;  ///< no such method
inline constexpr int invalid_params = -32602;  ///< params wrong for the method
inline constexpr int internal_error = -32603;  ///< the handler failed
/// Not JSON-RPC's but the MCP SDKs' (Python's CONNECTION_CLOSED, TypeScript's
/// ConnectionClosed): the peer went away before it answered. A server may use
/// -32000 for errors of its own too: ConnectionClosedError tells them apart.
inline constexpr int connection_closed = -32000;
}  // namespace error_code

/// An error answer. A method handler throws it to answer its request with
/// this code, message and data; the session turns any other exception into
/// internal_error.
class RpcError : public std::runtime_error {
 public:
  /// An error answer with this code, message and data (null: none).
  RpcError(int code, const std::string& message, json data = nullptr)
      : std::runtime_error(message), code_(code), data_(std::move(data)) {}
  /// The JSON-RPC error code.
  int code() const noexcept { return code_; }
  /// The error's data; null when none.
  const json& data() const noexcept { return data_; }

 private:
  int code_;
  json data_;
};

/// The peer went away while a request of ours waited for its answer: it
/// closed the connection or its output, or its process exited (a stdio
/// server that died mid-call). Never an answer the peer sent, so, unlike the
/// code (error_code::connection_closed), the type cannot be a server's own
/// error.
class ConnectionClosedError : public RpcError {
 public:
  /// why: what ended the connection.
  explicit ConnectionClosedError(const std::string& why = "connection closed")
      : RpcError(error_code::connection_closed, why) {}
};

/// JSON that is not a valid message. id is the message's id when one could
/// be read (the error answer then carries it), else null, as the spec says.
class InvalidMessage : public RpcError {
 public:
  /// The message with this id (null: unknown) is invalid, for this reason.
  InvalidMessage(json id, const std::string& why)
      : RpcError(error_code::invalid_request, why), id_(std::move(id)) {}
  /// The message's id, or null.
  const json& id() const noexcept { return id_; }

 private:
  json id_;
};

/// One JSON-RPC message, as parse_message() reads it.
struct Message {
  /// Which of the four kinds a message is.
  enum class Kind { request, notification, response, error };
  Kind kind = Kind::notification;  ///< which kind this one is
  json id;             ///< requests and responses: a string or an integer; null otherwise
  std::string method;  ///< requests and notifications
  json params;         ///< an object or an array; null when absent
  json result;         ///< responses
  json error;          ///< error responses: {"code", "message", "data"?}

  /// A request: it expects an answer.
  bool is_request() const noexcept { return kind == Kind::request; }
  /// A notification: it gets no answer.
  bool is_notification() const noexcept { return kind == Kind::notification; }
  /// An answer: a result or an error.
  bool is_response() const noexcept { return kind == Kind::response || kind == Kind::error; }
};

/// text as JSON; RpcError(parse_error) naming where it stopped otherwise,
/// or that it nests deeper than limits.max_depth (http/json.hpp: the peer's
/// depth must not become the stack's), or holds a NUL byte.
json parse_json(std::string_view text, const http::JsonLimits& limits = {});
/// One message (a batch is the caller's decision: it is an array). Throws
/// InvalidMessage.
Message parse_message(const json& j);

/// A request (params null: none).
json make_request(const json& id, std::string_view method, json params = nullptr);
/// A notification (params null: none).
json make_notification(std::string_view method, json params = nullptr);
/// The result answer to the request with this id.
json make_response(const json& id, json result);
/// The error answer to the request with this id (data null: none).
json make_error(const json& id, int code, std::string_view message, const json& data = nullptr);
/// e's error answer to the request with this id.
json make_error(const json& id, const RpcError& e);

}  // namespace corio::mcp
