/// \file
/// MCP's Streamable HTTP transport: an mcp::Server on an http::Server's
/// endpoint, many clients at once, each in a session of its own.
///
/// <!-- doc: body -->
///     corio::mcp::Server mcp("nba-daily-brief", "1.0.0");
///     // ... add tools ...
///     co_await corio::mcp::serve_streamable_http(mcp, "127.0.0.1", 8000);  // http://127.0.0.1:8000/mcp
///
/// or, beside other routes of an HTTP service:
///
/// <!-- doc: body (corio::mcp::Server& mcp, corio::http::Server& http_server) -->
///     corio::mcp::StreamableHttp endpoint(mcp);
///     endpoint.mount(http_server);            // POST, GET and DELETE on /mcp
///
/// The protocol (revisions 2025-03-26 to 2025-11-25): the client POSTs one
/// JSON-RPC message per request. initialize opens a session, whose id the
/// answer carries in Mcp-Session-Id and every later request must send back
/// (400 without it, 404 once the session is gone: the client then starts a
/// new one). A POSTed notification or response is answered 202 at once; a
/// request with an SSE stream (text/event-stream) that carries the
/// notifications sent while serving it (progress, log messages) and ends
/// with its answer, or, with json_response, with the answer alone as
/// application/json. A request answered within a few turns of the loop,
/// with nothing sent before its answer, gets that answer as
/// application/json too (the spec lets the server choose; the client
/// accepts both): a stream would only add a priming event and an id to it,
/// and the JSON answer takes a third less server CPU per call (bench/mcp).
/// GET opens the session's stream for messages that belong to no request
/// (one at a time: 409); DELETE ends the session and cancels its requests. A client disconnecting is not a cancellation (the
/// spec's rule): its request runs on and the answer is dropped.
///
/// Resumable (SEP-1699, for clients of 2025-11-25): every SSE event has an
/// id, each stream opens with a priming event (an id and retry, no data),
/// and a GET with Last-Event-ID resumes the stream that id belongs to from
/// the next event, from a bounded per-stream store (http_session.hpp). A
/// tool may end its call's stream early (Context::close_sse_stream()); the
/// client resumes it and gets the answer there.
///
/// Guarded as the spec asks: an Origin that is neither a loopback origin nor
/// listed in allowed_origins is 403, and so is a Host that is neither a
/// loopback name nor in allowed_hosts (DNS rebinding); an MCP-Protocol-Version
/// this server does not speak is 400; a client must accept both
/// application/json and text/event-stream (406) and send JSON (415). A body
/// that is not one JSON-RPC message is 400 with the JSON-RPC error in it;
/// batches are refused (-32600) on this transport, which 2025-06-18 and
/// later never send. Sessions end after session_idle_timeout without a
/// request or an open stream; at max_sessions a new one takes the place of
/// the one unused longest (503 only when every session has a stream open).
///
/// A session is fed by its POSTs: each hands its message in, and holds no
/// task while idle. A POSTed request while Server::max_in_flight of the
/// session's run waits, unanswered, for one to end (so a client that floods
/// a busy session is pushed back on its own connections, each holding one
/// message); a POSTed notification or answer never waits (a running call may
/// be waiting for that answer: sampling, elicitation).
///
/// Threads: sessions live on the loop that serves them, so the HTTP server
/// must run one loop (ServerOptions::workers == 1; mount() checks).
///
/// Suspends: the handlers while a request is served; serve_streamable_http
/// until cancelled (SIGINT under corio::run). Resumed by: the session's
/// tasks as they answer, the loop.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/http/server.hpp>
#include <corio/mcp/server.hpp>

namespace corio::mcp {

/// How a StreamableHttp endpoint serves.
struct StreamableHttpOptions {
  std::string path = "/mcp";  ///< where the endpoint is mounted
  /// Origins ("https://app.example.com") accepted besides loopback ones.
  std::vector<std::string> allowed_origins;
  /// Host headers ("mcp.example.com" or "mcp.example.com:8443") accepted
  /// besides loopback names (localhost, 127.0.0.1, [::1], any port); "*"
  /// accepts any. Loopback only by default: right for a server bound to
  /// loopback, the DNS-rebinding target. serve_streamable_http() bound to
  /// another address accepts any unless told.
  std::vector<std::string> allowed_hosts;
  /// The SSE retry field of the priming event: how long a client waits
  /// before it resumes a stream that ended without its answer.
  std::chrono::milliseconds retry = std::chrono::seconds(1);
  /// At most this many sessions at once (the one unused longest makes room).
  std::size_t max_sessions = 1000;
  /// A session this long without a request or an open stream ends.
  std::chrono::milliseconds session_idle_timeout = std::chrono::minutes(30);
  /// Answer each request with its answer as application/json instead of an
  /// SSE stream (progress and log notifications are then not delivered).
  bool json_response = false;
  /// A request whose answer comes at once, as its only message, gets it as
  /// an application/json body: no stream, priming event or stored event (a
  /// third less server CPU per call). false streams every answer as SSE
  /// with its priming event, resumable like a slow call's.
  bool quick_answers_as_json = true;
  /// An SSE comment this often on a quiet GET stream, so that a client
  /// that went away is noticed.
  std::chrono::milliseconds keepalive_interval = std::chrono::seconds(15);
  /// A POSTed message over this is refused with 413 (-32600), as stdio
  /// refuses a longer line; the HTTP server's Limits::max_body bounds the
  /// reading itself.
  std::size_t max_message = kDefaultMaxMessage;
};

/// Streamable HTTP's server side: an mcp::Server's endpoint on an
/// http::Server, each client in a session of its own.
class StreamableHttp {
 public:
  /// server must outlive this endpoint and the sessions it started.
  explicit StreamableHttp(Server& server, StreamableHttpOptions options = {});
  StreamableHttp(const StreamableHttp&) = delete;
  StreamableHttp& operator=(const StreamableHttp&) = delete;
  /// Ends every session (close_sessions()).
  ~StreamableHttp();

  /// Routes POST, GET and DELETE at options.path on http, which must outlive
  /// this endpoint's use. ValueError if http runs several loops.
  void mount(http::Server& http);
  /// How many sessions are open.
  std::size_t session_count() const noexcept;
  /// Ends every session: their running requests are cancelled and their
  /// open streams end.
  void close_sessions() noexcept;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// An HTTP server for mcp at http://host:port/mcp until cancelled (it then
/// stops accepting, ends the sessions and lets their streams close).
/// http_options: the HTTP server's (its access log on stderr by default).
Coro<void> serve_streamable_http(Server& server, std::string host = "127.0.0.1",
                                 std::uint16_t port = 8000, StreamableHttpOptions options = {},
                                 http::ServerOptions http_options = {});

}  // namespace corio::mcp
