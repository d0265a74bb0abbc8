// WebSocketResponse (see websocket.hpp): the server's side of the opening
// handshake (RFC 6455 section 4.2), then the connection is the WebSocket's,
// tied to the server's shutdown.
#include <algorithm>

#include <corio/event_loop.hpp>
#include <corio/handle.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/websocket.hpp>

#include "http/server/server_connection.hpp"
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

// Over HTTP/2, an extended CONNECT (RFC 8441 section 5): the h2 server
// shows it as a GET with Upgrade: websocket (h2_stream.hpp), and it has no
// Connection field and no key (its stream is the proof of intent).
bool over_h2(const Request& req) noexcept { return req.version().major == 2; }

// One field, one value: "13, 8" or a second field is no version we speak.
void check_version(const Headers& h) {
  if (detail::list_values(h, "sec-websocket-version") != std::vector<std::string>{"13"}) {
    throw unsupported_version();
  }
}

// RFC 6455 section 4.2.1: what is not an opening handshake is a 400.
void check_handshake(const Request& req) {
  const Headers& h = req.headers();
  if (req.method() != "GET") throw HTTPException(400, "a WebSocket handshake is a GET");
  if (over_h2(req) && !req.is_upgrade()) {
    throw HTTPException(400, "a WebSocket over HTTP/2 is an extended CONNECT with :protocol websocket");
  }
  if (!over_h2(req) && req.version() != HttpVersion{1, 1}) {
    throw HTTPException(400, "a WebSocket handshake needs HTTP/1.1");
  }
  if (!h.has_token("upgrade", "websocket")) throw HTTPException(400, "no \"Upgrade: websocket\"");
  if (!over_h2(req) && !h.has_token("connection", "upgrade")) {
    throw HTTPException(400, "no \"Connection: Upgrade\"");
  }
  check_version(h);
  if (over_h2(req)) return;
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
  WsAccept a{Response(over_h2(req) ? 200 : 101), {}};
  Response& answer = a.answer;
  if (!over_h2(req)) {  // RFC 8441 section 5: a 200, none of these
    answer.headers.add("Upgrade", "websocket");
    answer.headers.add("Connection", "Upgrade");
    answer.headers.add("Sec-WebSocket-Accept", ws_accept(*h.get("sec-websocket-key")));
  }
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

namespace {

// A prepared WebSocket as one of its server's adopted connections
// (lifetime rule 6 in server_connection.hpp), with the taken connection's
// max_connections slot. Its state owns it (WsRare::server_tie) until the
// connection ends; it holds the state's address only.
class ServerTie : public Adopted {
 public:
  ServerTie(WsState& s, corio::detail::ServerSlot slot) noexcept
      : Adopted(&ServerTie::on_server_end, std::move(slot)), s_(s) {}
  ServerTie(const ServerTie&) = delete;
  ServerTie& operator=(const ServerTie&) = delete;
  ~ServerTie() {
    if (timer_) timer_.cancel();
  }

  // Graceful (shutdown()): our close frame, then the peer's within the
  // shorter of ws_shutdown_timeout and close_timeout; a receive() waiting
  // meanwhile returns with the peer's close, or with 1006 when the time is
  // up. Also when a close() of the handler's already runs: its wait ends
  // then too. Not graceful (close(), or the deadline passed): at once.
  static void on_server_end(Adopted* adopted, bool graceful) noexcept {
    auto* tie = static_cast<ServerTie*>(adopted);
    if (graceful) {
      try {
        tie->say_goodbye();
        return;
      } catch (...) {
        // Out of memory: ended at once.
      }
    }
    tie->s_.end(ws_close::going_away, "server closed", true);  // lets the tie go
  }

 private:
  void say_goodbye() {
    s_.send_close(ws_close::going_away, "server shutting down");
    const std::chrono::milliseconds within = std::min(ws_shutdown_timeout(), s_.settings().close_timeout);
    timer_ = get_running_loop().call_later(within, [this] {
      timer_ = TimerHandle();
      s_.end(ws_close::abnormal, "no close frame from the peer in time", true);  // lets the tie go
    });
  }

  WsState& s_;
  TimerHandle timer_;  // the goodbye's deadline
};

}  // namespace

void tie_to_server(WsState& s, Request& req) {
  TakenPlace place = taken_place(req);
  const std::shared_ptr<ServerTie> tie = std::make_shared<ServerTie>(s, std::move(place.slot));
  s.rare().server_tie = tie;
  LoopServer& server = place.server;
  server.adopt(tie.get());
  if (server.stopping()) ServerTie::on_server_end(tie.get(), true);
}

}  // namespace detail

Coro<WebSocket> WebSocketResponse::prepare(Request& req, WsOptions opts) {
  detail::WsAccept a = detail::accept_handshake(req, std::move(opts));
  auto [reader, writer] = co_await req.take_connection(std::move(a.answer));
  a.setup.taken_from = &req;
  co_return WebSocket(std::move(reader), std::move(writer), std::move(a.setup));
}

Coro<WebSocket> WebSocketResponse::prepare(Request& req) { return prepare(req, WsOptions{}); }

}  // namespace corio::http
