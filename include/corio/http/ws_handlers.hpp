/// \file
/// corio::http::WsHandlers: a WebSocket route served by a handler set, run
/// per message (Bun's `websocket: {open, message, close}`, uWebSockets'
/// `app.ws<UserData>`), with nothing suspended once idle.
///
/// <!-- doc: fragment in corio::http -->
///     struct Chat { std::string name; };
///
///     Coro<void> on_open(ServerWebSocket<Chat> ws, Request& req) {
///       ws.data().name = std::string(req.param("name"));
///       co_return;
///     }
///     Coro<void> on_message(ServerWebSocket<Chat> ws, WsMessage msg) {
///       co_await ws.send(msg);
///     }
///
///     void routes(Server& server) {
///       server.ws<Chat>("/chat/{name}", {.open = on_open, .message = on_message});
///     }
///
/// Per connection: `open` runs once after the 101, with the Request (the
/// only callback that gets it: the request's head, its field list and the
/// HTTP frames are gone once it returned); `message` runs for each whole
/// text or binary message, in order, one at a time: the next message is
/// not read from the socket until the previous one's coroutine finished
/// (back-pressure: the memory a connection holds is bounded by
/// WsOptions::max_msg_size); `close` runs exactly once, when the connection
/// ended, with its close code and reason (the peer's close, ours, 1006 for
/// a reset, an abort, an unanswered heartbeat or the loop's close, 1001 for
/// the server's close or shutdown). Pings are answered and the closing
/// handshake is done by the library. An idle connection waits in the loop's
/// watch of its socket: no task, no coroutine frame. A busy one (from its
/// second message on) waits in its task until it has been idle 1 to 2 s,
/// then parks so (docs/websocket.md).
///
/// A callback that throws closes the connection with 1011 and is reported
/// through the loop's exception handler, as a route handler's error is.
///
/// ServerWebSocket is a copyable handle (a reference count): other tasks may
/// keep one and send through it (a broadcast). It stays valid after the
/// close: sending then throws RuntimeError, as on a closed WebSocket.
///
/// Suspends: send*(), ping(), pong() while the connection's write buffer is
/// above its high-water mark. Resumed by: the loop.
#pragma once

#include <compare>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include <corio/coro.hpp>
#include <corio/errors.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/websocket.hpp>

namespace corio::http {

namespace detail {
class WsServed;  // one connection served by a handler set (src/http/ws/ws_served.hpp)
using WsServedPtr = std::shared_ptr<WsServed>;
void* ws_user_data(const WsServed& s) noexcept;

/// A handler set with its user data's type erased: one per route, shared
/// by the route's connections.
struct WsRoute {
  WsOptions options;
  std::function<Coro<void>(WsServedPtr, Request&)> open;
  /// Per message, so one indirect call to the user's std::function, not
  /// two: `route` is the WsTypedRoute<Data> that holds it.
  Coro<void> (*message)(const WsRoute& route, WsServedPtr&& s, WsMessage&& msg) = nullptr;
  std::function<void(WsServedPtr, int, std::string_view)> close;
  void* (*make_data)() = nullptr;  ///< null: no user data (std::monostate)
  void (*free_data)(void*) noexcept = nullptr;
};

/// The route handler that answers the handshake and serves the connection.
std::function<Coro<Response>(Request&)> ws_route_handler(std::shared_ptr<const WsRoute> route);

/// What every ServerWebSocket<Data> can do, whatever its Data.
class ServerWebSocketBase {
 public:
  /// A message (text or binary, as msg says); waits while the write buffer is full.
  [[nodiscard]] Coro<void> send(const WsMessage& msg) const;
  [[nodiscard]] Coro<void> send_str(std::string_view text) const;   ///< a text message
  [[nodiscard]] Coro<void> send_bytes(std::string_view data) const;  ///< a binary message
  /// Control frames: at most 125 bytes of payload (ValueError).
  [[nodiscard]] Coro<void> ping(std::string_view payload = {}) const;
  [[nodiscard]] Coro<void> pong(std::string_view payload = {}) const;  ///< unsolicited

  /// Starts the closing handshake: sends the close frame now (once) and
  /// returns; the library reads the peer's answer (within close_timeout,
  /// then aborts) and then calls `close`. Messages that still come are
  /// dropped. Codes and reason as WebSocket::close() (ValueError).
  void close(int code = ws_close::normal, std::string_view reason = {}) const;
  /// Closes the transport at once, without a close frame (1006).
  void abort() const noexcept;

  bool closed() const noexcept;  ///< a close frame was sent or the connection ended
  std::optional<int> close_code() const noexcept;  ///< as WebSocket::close_code()
  const std::string& close_reason() const noexcept;  ///< as WebSocket::close_reason()
  const std::string& protocol() const noexcept;  ///< the agreed subprotocol, "" for none
  bool compressed() const noexcept;              ///< permessage-deflate agreed
  std::string peername() const;  ///< the peer's address, as get_extra_info("peername")

  /// Handles compare by connection (for sets and maps of connections).
  auto operator<=>(const ServerWebSocketBase&) const noexcept = default;
  bool operator==(const ServerWebSocketBase&) const noexcept = default;

 protected:
  explicit ServerWebSocketBase(WsServedPtr s) noexcept : s_(std::move(s)) {}
  WsServedPtr s_;  ///< never null
};

template <class Data>
struct WsErase;
template <class Data>
struct WsTypedRoute;
}  // namespace detail

/// One WebSocket connection served by a handler set: a copyable handle
/// (details at the top of ws_handlers.hpp). Data: the connection's own
/// state, default-constructed before `open`, destroyed with the last handle.
template <class Data = std::monostate>
class ServerWebSocket : public detail::ServerWebSocketBase {
 public:
  /// Made by the server for each callback.
  explicit ServerWebSocket(detail::WsServedPtr s) noexcept : ServerWebSocketBase(std::move(s)) {}
  /// The connection's user data.
  Data& data() const noexcept
    requires(!std::is_same_v<Data, std::monostate>)
  {
    return *static_cast<Data*>(detail::ws_user_data(*s_));
  }
};

/// A WebSocket route's callbacks and options (Router::ws, Server::ws).
/// message is required; open and close may be left empty.
template <class Data = std::monostate>
struct WsHandlers {
  /// After the 101, before the first message is read: the only callback
  /// that gets the Request (valid while it runs).
  std::function<Coro<void>(ServerWebSocket<Data>, Request&)> open{};
  /// Each whole text or binary message, one at a time, in order.
  std::function<Coro<void>(ServerWebSocket<Data>, WsMessage)> message{};
  /// Once, when the connection ended: its close code and reason. Not a
  /// coroutine, so that it runs whatever ended the connection (the loop's
  /// close included); start a task for asynchronous work.
  std::function<void(ServerWebSocket<Data>, int code, std::string_view reason)> close{};
  WsOptions options{};  ///< as WebSocketResponse::prepare's (heartbeat, deflate, ...)
};

namespace detail {

template <class Data>
struct WsTypedRoute final : WsRoute {
  using Plain = Coro<void> (*)(ServerWebSocket<Data>, WsMessage);
  std::function<Coro<void>(ServerWebSocket<Data>, WsMessage)> typed_message;
  Plain plain_message = nullptr;  // typed_message's target when a plain function
};

// The wrappers hand each callback its typed handle; they are not
// coroutines: each returns the user's Coro, whose frame holds the handle.
template <class Data>
struct WsErase {
  static std::shared_ptr<const WsRoute> route(WsHandlers<Data> h) {
    auto r = std::make_shared<WsTypedRoute<Data>>();
    r->options = std::move(h.options);
    if (h.open) {
      r->open = [f = std::move(h.open)](WsServedPtr s, Request& req) {
        return f(ServerWebSocket<Data>(std::move(s)), req);
      };
    }
    // A plain function (what the docs show) is called directly: the
    // std::function's own call and its copies of the arguments are a few
    // percent of an echo's instructions.
    using Route = WsTypedRoute<Data>;
    if (const auto* plain = h.message.template target<typename Route::Plain>()) {
      r->plain_message = *plain;
      r->message = [](const WsRoute& route, WsServedPtr&& s, WsMessage&& m) {
        return static_cast<const Route&>(route).plain_message(ServerWebSocket<Data>(std::move(s)),
                                                              std::move(m));
      };
    } else {
      r->typed_message = std::move(h.message);
      r->message = [](const WsRoute& route, WsServedPtr&& s, WsMessage&& m) {
        return static_cast<const Route&>(route).typed_message(ServerWebSocket<Data>(std::move(s)),
                                                              std::move(m));
      };
    }
    if (h.close) {
      r->close = [f = std::move(h.close)](WsServedPtr s, int code, std::string_view why) {
        f(ServerWebSocket<Data>(std::move(s)), code, why);
      };
    }
    if constexpr (!std::is_same_v<Data, std::monostate>) {
      r->make_data = []() -> void* { return new Data(); };
      r->free_data = [](void* p) noexcept { delete static_cast<Data*>(p); };
    }
    return r;
  }
};

}  // namespace detail

/// The route handler serving a WebSocket route with `handlers`, for
/// Router::add / Server::route (Router::ws and Server::ws call it).
/// ValueError when handlers.message is empty.
template <class Data>
std::function<Coro<Response>(Request&)> ws_handler(WsHandlers<Data> handlers) {
  if (!handlers.message) throw ValueError("WsHandlers::message is required");
  return detail::ws_route_handler(detail::WsErase<Data>::route(std::move(handlers)));
}

}  // namespace corio::http
