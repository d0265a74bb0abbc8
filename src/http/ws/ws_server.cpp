// WebSocketResponse (see websocket.hpp): the server's side of the opening
// handshake (RFC 6455 section 4.2), then the connection is the WebSocket's.
#include <algorithm>

#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/websocket.hpp>

#include "http/ws/ws_handshake.hpp"
#include "http/ws/ws_session.hpp"

namespace corio::http {

namespace {

// RFC 6455 section 4.4: a version we do not speak is answered with the one
// we do, so that the client can retry with it. 426 needs an Upgrade field
// (RFC 9110 section 15.5.22), and Upgrade its Connection option (7.8).
HTTPException unsupported_version() {
  return HTTPException(
      426, "only WebSocket version 13 is supported",
      Headers{
          {"Sec-WebSocket-Version", "13"}, {"Upgrade", "websocket"}, {"Connection", "Upgrade"}});
}

// RFC 6455 section 4.2.1: what is not an opening handshake is a 400.
void check_handshake(const Request& req) {
  const Headers& h = req.headers();
  if (req.method() != "GET") throw HTTPException(400, "a WebSocket handshake is a GET");
  // An h2 stream cannot be taken over (RFC 8441's CONNECT is not served).
  if (req.version() != HttpVersion{1, 1}) throw HTTPException(400, "a WebSocket handshake needs HTTP/1.1");
  if (!h.has_token("upgrade", "websocket")) throw HTTPException(400, "no \"Upgrade: websocket\"");
  if (!h.has_token("connection", "upgrade")) throw HTTPException(400, "no \"Connection: Upgrade\"");
  // One field, one value: "13, 8" or a second field is no version we speak.
  if (detail::list_values(h, "sec-websocket-version") != std::vector<std::string>{"13"}) {
    throw unsupported_version();
  }
  if (h.count("sec-websocket-key") != 1 || !detail::is_valid_ws_key(*h.get("sec-websocket-key"))) {
    throw HTTPException(400, "Sec-WebSocket-Key is not the base64 of 16 bytes");
  }
}

// The server's first choice among the client's offers (websocket.hpp).
std::string pick_protocol(const Headers& h, const std::vector<std::string>& ours) {
  const std::vector<std::string> offered = detail::list_values(h, "sec-websocket-protocol");
  for (const std::string& p : ours) {
    if (std::find(offered.begin(), offered.end(), p) != offered.end()) return p;
  }
  return {};
}

}  // namespace

bool WebSocketResponse::can_prepare(const Request& req) noexcept {
  return req.method() == "GET" && req.headers().has_token("upgrade", "websocket");
}

namespace detail {

WsAccept accept_handshake(const Request& req, WsOptions opts) {
  check_handshake(req);
  const Headers& h = req.headers();
  WsAccept a{Response(101), {}};
  Response& answer = a.answer;
  answer.headers.add("Upgrade", "websocket");
  answer.headers.add("Connection", "Upgrade");
  answer.headers.add("Sec-WebSocket-Accept", ws_accept(*h.get("sec-websocket-key")));
  WsSetup& setup = a.setup;
  setup.role = WsRole::server;
  setup.protocol = pick_protocol(h, opts.protocols);
  if (!setup.protocol.empty()) answer.headers.add("Sec-WebSocket-Protocol", setup.protocol);
  std::optional<DeflateAccept> deflate = accept_deflate(joined(h, "sec-websocket-extensions"), opts.deflate);
  if (deflate) {
    answer.headers.add("Sec-WebSocket-Extensions", deflate->answer);
    setup.deflate = deflate->agreed;
  }
  setup.options = std::move(opts);
  return a;
}

}  // namespace detail

Coro<WebSocket> WebSocketResponse::prepare(Request& req, WsOptions opts) {
  detail::WsAccept a = detail::accept_handshake(req, std::move(opts));
  auto [reader, writer] = co_await req.take_connection(std::move(a.answer));
  co_return WebSocket(std::move(reader), std::move(writer), std::move(a.setup));
}

Coro<WebSocket> WebSocketResponse::prepare(Request& req) { return prepare(req, WsOptions{}); }

}  // namespace corio::http
