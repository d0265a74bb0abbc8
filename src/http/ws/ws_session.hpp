// The state one WebSocket's handle shares with its heartbeat task, and what
// the two handshakes hand it (see websocket.hpp).
//
// Lifetime: WebSocket holds the WsState by shared_ptr, and so does the
// heartbeat task while it runs; ~WebSocket and the end of the connection
// cancel the task, which breaks the cycle.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <corio/event.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/websocket.hpp>
#include <corio/lock.hpp>
#include <corio/task.hpp>

#include "http/ws/ws_deflate.hpp"
#include "http/ws/ws_frame.hpp"

namespace corio::http::detail {

struct WsSetup {
  WsRole role = WsRole::server;
  WsOptions options;
  std::string protocol;
  std::optional<DeflateAgreement> deflate;
  // WebSocketResponse::prepare()'s request: the WebSocket made from this
  // setup is tied to that request's server (tie_to_server).
  Request* taken_from = nullptr;
};

// The server's half of the opening handshake (ws_server.cpp): the 101 to
// send and the connection's setup; HTTPException when req is not one.
struct WsAccept {
  Response answer;
  WsSetup setup;
};
WsAccept accept_handshake(const Request& req, WsOptions opts);
// A WebSocket its handler owns (WebSocketResponse::prepare) joins the
// connections req's server ends (ws_server.cpp), so that a shutdown closes
// it (1001) and waits for its peer only ServerOptions::ws_shutdown_timeout,
// as it does for a handler set's (ws_served.cpp). Also when the server is
// already shutting down: then its close starts at once.
void tie_to_server(WsState& s, Request& req);

// What a receive() step leaves the coroutine to do (WsState::step).
enum class WsStep { message, wait, drain, ended };

// The options read after the handshake.
struct WsSettings {
  explicit WsSettings(const WsOptions& o)
      : close_timeout(o.close_timeout), max_fragment(o.max_fragment), min_compressed(o.deflate.min_size) {}
  std::chrono::milliseconds close_timeout;
  std::size_t max_fragment;
  std::size_t min_compressed;  // WsDeflateOptions::min_size
};

// What most connections never use, allocated on first use (WsState::rare()):
// settings off their defaults, a subprotocol, a heartbeat, the reason of the
// close and the event a close() waits on while another task receives.
struct WsRare {
  explicit WsRare(const WsOptions& o) : settings(o) {}
  WsSettings settings;
  std::string protocol;
  std::string reason;
  Event finished;  // set when the connection ends
  std::optional<Task<void>> heartbeat;
  // A prepared WebSocket's place among its server's connections
  // (tie_to_server), let go when the connection ends.
  std::shared_ptr<void> server_tie;
};

// Kept for the connection's life, so kept small: no frame or payload buffer
// (frames are built on the stack, the parser holds a message only while it
// arrives), and what is seldom used behind rare_.
struct WsState {
  WsState(StreamReader r, StreamWriter w, WsSetup setup);

  StreamReader reader;
  StreamWriter writer;
  WsReader parser;
  std::unique_ptr<WsDeflater> deflater;  // permessage-deflate agreed
  Lock send_lock;    // one data message's frames at a time
  double last_heard = 0;   // loop time bytes last arrived
  std::optional<int> code;
  WsRole role;
  bool reading = false;    // a receive() is running
  bool close_sent = false;
  bool done = false;       // the connection ended: closed, failed or aborted

  WsRare& rare();  // made on first use, with the default settings
  const WsSettings& settings() const noexcept;
  const std::string& protocol() const noexcept;
  const std::string& reason() const noexcept;

  // A masking key per frame for a client (none for a server).
  std::optional<std::uint32_t> next_mask();
  // Writes one frame (no suspension: frames never interleave).
  void write_frame(Opcode op, bool fin, bool rsv1, std::string_view payload);
  // The connection is over: records why (unless a reason is known),
  // closes or aborts the transport, stops the heartbeat.
  void end(int close_code, std::string why, bool abort_transport);

  // receive()'s work between two suspensions, outside its frame: parses what
  // is buffered, answers pings and closes, reads what the socket has. A
  // message goes into msg.
  WsStep step(WsMessage& msg);
  // The closing handshake's first half, once: our close frame.
  void send_close(int close_code, std::string_view reason);

 private:
  std::unique_ptr<WsRare> rare_;
};

// The sends of WebSocket and ServerWebSocket (websocket.cpp). The state
// must outlive the returned Coro: `keep` may own it (a ServerWebSocket's
// send keeps its connection so, with no frame of its own).
Coro<void> send_message(WsState& s, const WsMessage& msg, std::shared_ptr<void> keep = {});
Coro<void> send_control(WsState& s, Opcode op, std::string_view payload);
// close()'s checks (ValueError).
void check_close(int code, std::string_view reason);
// drain(), false for a connection that failed.
Coro<bool> drained(WsState& s);

}  // namespace corio::http::detail
