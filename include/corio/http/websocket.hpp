/// \file
/// corio::http::WebSocket: RFC 6455 WebSocket connections, server and client
/// (aiohttp's WebSocketResponse and ClientWebSocketResponse in one type),
/// with permessage-deflate (RFC 7692).
///
/// <!-- doc: fragment in corio::http -->
///     // server: a route handler takes the connection over from the HTTP server
///     Coro<Response> echo(Request& req) {
///       WebSocket ws = co_await WebSocketResponse::prepare(req);
///       while (auto msg = co_await ws.receive()) co_await ws.send(*msg);
///       co_return Response{};  // ignored: the connection is the WebSocket's
///     }
///
///     // client
///     Coro<> chat(ClientSession& session) {
///       WebSocket ws = co_await session.ws_connect("ws://127.0.0.1:8080/ws");
///       co_await ws.send_str("hello");
///       std::optional<WsMessage> reply = co_await ws.receive();
///       co_await ws.close();
///     }
///
/// receive() gives whole text and binary messages (fragments reassembled;
/// text checked to be UTF-8, across fragments too) and answers what comes
/// between them itself: a ping with a pong, a close with the closing
/// handshake; it returns nullopt once the connection is closed, and
/// close_code() / close_reason() then say how. A peer that breaks the
/// protocol is answered with a close frame and the connection ends: 1002
/// (a bad frame, a masking violation: clients must mask, servers must not),
/// 1007 (text that is not UTF-8, corrupt compressed data), 1009 (a message
/// over WsOptions::max_msg_size, refused when its frame header arrives, so
/// memory stays bounded). Nothing is thrown for a peer's fault.
///
/// Sending: one message at a time goes out whole (a Lock keeps a fragmented
/// or compressed message's frames together; pings and pongs may go between
/// its fragments). Each send waits while the connection's write buffer is
/// above its high-water mark (StreamWriter::drain()): a slow peer suspends
/// the sender, and memory stays bounded. Sending after the close started
/// throws RuntimeError; on a connection that failed, std::system_error.
///
/// Heartbeat (WsOptions::heartbeat): when the peer has sent nothing for that
/// long, a ping; no answer within half of it, and the connection is aborted
/// (close code 1006). The HTTP server's timeouts do not apply to a WebSocket;
/// its shutdown() closes one (1001), waiting for the peer's answer only
/// ServerOptions::ws_shutdown_timeout (1 s by default).
///
/// One task receives at a time; others may send, ping and close meanwhile
/// (close() then lets the receiving task read the peer's close frame).
///
/// Suspends: receive() until a message or the close; send*(), ping(),
/// pong() while the write buffer is above its high-water mark; close()
/// until the peer's close frame (within close_timeout), then the transport
/// closes. Resumed by: the loop (socket readiness, timers).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/coro.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/http/headers.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http {

class Request;

/// Close codes (RFC 6455 section 7.4.1).
namespace ws_close {
inline constexpr int normal = 1000;            ///< done, as intended
inline constexpr int going_away = 1001;        ///< the endpoint is leaving (shutdown, navigation)
inline constexpr int protocol_error = 1002;    ///< the peer broke RFC 6455
inline constexpr int unsupported_data = 1003;  ///< a message type the endpoint does not take
inline constexpr int no_status = 1005;  ///< a close frame without a code (never sent)
inline constexpr int abnormal = 1006;   ///< no close frame at all (never sent)
inline constexpr int invalid_data = 1007;         ///< a text message that is not UTF-8, say
inline constexpr int policy_violation = 1008;     ///< a message against the endpoint's policy
inline constexpr int message_too_big = 1009;      ///< over WsOptions::max_msg_size
inline constexpr int mandatory_extension = 1010;  ///< (client) an extension the server did not agree
inline constexpr int internal_error = 1011;       ///< (server) an unexpected condition
}  // namespace ws_close

/// A data message's kind.
enum class WsMsgType { text, binary };

/// One whole data message, its fragments joined and decompressed.
struct WsMessage {
  WsMsgType type = WsMsgType::text;  ///< text or binary
  std::string data;  ///< text: valid UTF-8
  bool is_text() const noexcept { return type == WsMsgType::text; }  ///< whether type is text
  bool is_binary() const noexcept { return type == WsMsgType::binary; }  ///< whether type is binary
};

/// permessage-deflate (RFC 7692). A server accepts the client's first offer
/// it can honour; a client offers these settings and checks the answer.
///
/// The defaults keep an idle connection's compression memory small (zlib
/// holds 144 KiB for a 15-bit deflate stream, 39 KiB for an inflate one):
/// the server compresses each message on its own (server_no_context_takeover,
/// which RFC 7692 lets a server answer unasked; a client asks for it), so no
/// deflate stream outlives a message; and where the client lets its window
/// be limited (browsers, npm ws and python-websockets do) the server asks for
/// 4 KiB (client_max_window_bits = 12, as python-websockets' server does),
/// which bounds the window kept for the client's next message while the
/// connection idles. Set server_no_context_takeover to false to let a server
/// carry its context over (better compression of small, similar messages, at
/// the price of a deflate stream per connection).
struct WsDeflateOptions {
  bool enabled = true;  ///< offered (client) or accepted (server)
  /// Each server message compressed on its own: a server answers it always,
  /// a client asks for it. false: only when the client asks (server), not asked (client).
  bool server_no_context_takeover = true;
  /// Each client message compressed on its own: a server answers it always,
  /// a client offers it. false: only when the client offers it.
  bool client_no_context_takeover = false;
  int server_max_window_bits = 15;          ///< 9..15 (zlib has no 8-bit raw window)
  /// 9..15: the most a server lets a client use when the client allows a
  /// limit; the most a client uses (and offers).
  int client_max_window_bits = 12;
  int level = 6;                            ///< zlib's compression level, 1..9

  /// Messages shorter than this go uncompressed (RSV1 clear): deflate's
  /// framing costs more than it saves on them.
  std::size_t min_size = 64;
};

/// A WebSocket's limits, timers, extensions and subprotocols, either side.
struct WsOptions {
  std::size_t max_msg_size = 4 * 1024 * 1024;  ///< aiohttp's; over it: close 1009
  std::optional<std::chrono::milliseconds> heartbeat;  ///< off by default, as aiohttp
  std::chrono::milliseconds close_timeout{10'000};     ///< for the peer's close frame

  /// Outgoing messages longer than this are sent in fragments of it; 0: one frame each.
  std::size_t max_fragment = 0;
  WsDeflateOptions deflate;  ///< permessage-deflate's settings

  /// Subprotocols: a server's in its order of preference (it picks the first
  /// the client offers; none agreed is no Sec-WebSocket-Protocol), a client's
  /// offered (an answer not among them fails the handshake).
  std::vector<std::string> protocols;
  Headers headers;  ///< client: extra request headers (Origin, Authorization, ...)

  /// Client only: whether ws_connect goes over HTTP/2 (RFC 8441's extended
  /// CONNECT, a stream of a pooled h2 connection). Unset (the default): when
  /// the session already holds an h2 connection to the origin, else
  /// HTTP/1.1's Upgrade, as browsers do (a WebSocket alone is no reason to
  /// open an h2 connection; one already open saves a connection and a
  /// handshake). true: over h2 wherever the session may speak it
  /// (ClientOptions::http2 by ALPN on wss, http2_prior_knowledge on ws),
  /// opening a connection if needed. false: always HTTP/1.1. Either way, a
  /// server that does not say SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 gets the
  /// HTTP/1.1 Upgrade.
  std::optional<bool> http2;

  /// Client only: instead of the session's proxy (ClientOptions::proxy, or
  /// the environment's with trust_env); "" for none. Through a proxy the
  /// handshake goes in a CONNECT tunnel, for ws:// as for wss://.
  std::optional<std::string> proxy;
};

/// ws_connect's handshake failed: the server answered something other than
/// a valid 101 (status() is its status; 101 when the 101 itself was wrong).
class WSServerHandshakeError : public ClientResponseError {
 public:
  using ClientResponseError::ClientResponseError;
};

namespace detail {
struct WsState;
enum class WsRole { server, client };
struct WsSetup;
}  // namespace detail

/// One WebSocket connection, server or client side (RFC 6455).
class WebSocket {
 public:
  /// Made by WebSocketResponse::prepare() and ClientSession::ws_connect().
  WebSocket(StreamReader reader, StreamWriter writer, detail::WsSetup setup);
  WebSocket(WebSocket&&) noexcept;  ///< the connection moves along
  WebSocket& operator=(WebSocket&&) noexcept;  ///< the connection moves along

  /// Closes the transport without a closing handshake if close() was not awaited.
  ~WebSocket();

  /// The next text or binary message; nullopt once the connection closed.
  [[nodiscard]] Coro<std::optional<WsMessage>> receive();
  [[nodiscard]] Coro<void> send_str(std::string_view text);   ///< a text message (UTF-8 not checked)
  [[nodiscard]] Coro<void> send_bytes(std::string_view data);  ///< a binary message
  [[nodiscard]] Coro<void> send(const WsMessage& msg);  ///< a message of msg's type

  /// Control frames: at most 125 bytes of payload (ValueError).
  [[nodiscard]] Coro<void> ping(std::string_view payload = {});
  [[nodiscard]] Coro<void> pong(std::string_view payload = {});  ///< unsolicited (pings are answered)

  /// The closing handshake: sends a close frame (once), waits for the peer's within close_timeout
  /// (or until cancelled), closes the transport. code: 1000-4999 but the reserved 1004-1006 and
  /// 1015 (ValueError); reason at most 123 bytes.
  [[nodiscard]] Coro<void> close(int code = ws_close::normal, std::string_view reason = {});
  /// Closes the transport at once, without a close frame.
  void abort() noexcept;

  bool closed() const noexcept;  ///< a close frame was sent or the connection ended

  /// The peer's close code (1005 when its close frame had none), the code we
  /// closed with after its protocol error, or 1006 for a connection that
  /// ended without a close frame; nullopt while open.
  std::optional<int> close_code() const noexcept;
  const std::string& close_reason() const noexcept;  ///< the reason that came with close_code()
  const std::string& protocol() const noexcept;  ///< the agreed subprotocol, "" for none
  bool compressed() const noexcept;              ///< permessage-deflate agreed
  std::string peername() const;  ///< the peer's address, as get_extra_info("peername")

 private:
  std::shared_ptr<detail::WsState> s_;
};

/// The server side's handshake, in a route handler.
class WebSocketResponse {
 public:
  /// Whether req asks for a WebSocket (GET with Upgrade: websocket).
  static bool can_prepare(const Request& req) noexcept;
  /// Checks the opening handshake (HTTPException 400 when it is not one, 426
  /// with Sec-WebSocket-Version: 13 for another WebSocket version), answers
  /// 101 with the agreed subprotocol and extensions, and takes the
  /// connection over from the HTTP server (Request::take_connection).
  [[nodiscard]] static Coro<WebSocket> prepare(Request& req, WsOptions opts);
  /// The same with the default options. An overload, not a default argument:
  /// a default WsOptions would be a temporary of the caller's co_await, kept
  /// in the handler's frame for the connection's whole life.
  [[nodiscard]] static Coro<WebSocket> prepare(Request& req);
};

}  // namespace corio::http
