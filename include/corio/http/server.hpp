/// \file
/// corio::http::Server: an HTTP/1.1 and HTTP/2 server with routing and middleware
/// (aiohttp's web.Application + AppRunner in one object).
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> hello(Request&) { co_return Response::text("Hello, World!"); }
///
///     Coro<> serve() {
///       Server server;
///       server.get("/hello", hello);
///       co_await server.start("127.0.0.1", 8080);
///       co_await server.serve_forever();          // or: co_await run_until_signal(server)
///     }
///
/// Per connection: keep-alive and pipelining (responses strictly in request
/// order, pipelined ones written together; past 64 KiB of answers waiting
/// for a client that does not read, the next request waits until they went
/// out, so memory stays bounded), HTTP/1.0 keep-alive rules,
/// chunked request bodies, "Expect: 100-continue", a header-read timeout
/// (a client trickling its head is closed: slowloris) and an idle keep-alive
/// timeout. A request that cannot be parsed gets the ParseError's status and
/// "Connection: close"; a handler's exception a 500 (logged through the
/// loop's exception handler), the connection staying usable. Every error
/// answer goes through one hook (on_error) that may reshape it (JSON, say). A connection
/// closed after an error closes in stages (our EOF first, then the peer's
/// late bytes dropped for a bounded time), so the peer reads the answer
/// rather than a reset.
///
/// Request targets (RFC 9112 section 3.2): origin-form; absolute-form
/// ("http://host/p"), routed by its path, its authority replacing Host;
/// "*" for OPTIONS only; CONNECT's "host:port", routed as the path
/// "/host:port" and answered 501 when no route takes it (the connection
/// closes after any CONNECT, unless its handler took the connection over
/// with Request::take_connection, as a WebSocket's handshake does).
///
/// workers > 1: that many loops, each in a thread of its own (the first is
/// the caller's), each with a reuse_port listener on the same port; the
/// kernel spreads connections between them. Handlers then run on several
/// threads at once: what they share must be thread-safe.
///
/// Suspends: start() to resolve and bind; serve_forever() until close() or
/// shutdown(); shutdown() until the connections are done or the deadline.
/// Resumed by: the loop (accepts, socket readiness, the timeout sweeper).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/router.hpp>
#include <corio/ssl.hpp>

namespace corio::http {

/// One request's line in the access log.
struct AccessLogEntry {
  std::string_view remote;  ///< "127.0.0.1:50312"
  std::string_view method;  ///< as sent
  std::string_view target;  ///< as sent
  int status = 0;           ///< the answer's
  std::uint64_t bytes = 0;  ///< body bytes sent
  std::chrono::microseconds duration{0};  ///< from the head read to the answer sent
};
/// Where the access log goes: called once per request, on its connection's loop.
using AccessLog = std::function<void(const AccessLogEntry&)>;
/// The default sink: one line per request on stderr.
void log_to_stderr(const AccessLogEntry& entry);

/// How a Server reads, times and limits its connections.
struct ServerOptions {
  Limits limits;  ///< of each request's head and body

  /// From a head's first byte to its blank line; then the connection is closed.
  std::chrono::milliseconds header_timeout{10'000};
  /// Between requests on a kept-alive connection.
  std::chrono::milliseconds idle_timeout{75'000};  ///< aiohttp's keepalive_timeout

  /// Between two reads of a request body: a body that stops coming closes
  /// the connection (nginx's client_body_timeout is 60 s).
  std::chrono::milliseconds body_timeout{30'000};
  /// For each wait for the peer to take what we sent (nginx's send_timeout):
  /// a client that reads too slowly is closed, with a reset, so that the
  /// kernel drops what it still holds for it (nginx's
  /// reset_timedout_connection).
  std::chrono::milliseconds send_timeout{60'000};
  /// The slowest a client may take a response, in bytes per second (Apache
  /// mod_reqtimeout's MinRate, for sending); 0: no floor. send_timeout is
  /// per wait, and each wait ends as soon as the socket has room again: a
  /// client reading 256 B/s holds a large response open for ever. Measured
  /// over min_send_rate_window of waiting for the client (the sweeper also
  /// checks it during a wait, back-pressure included; time the handler takes
  /// to produce is not counted), from when the server first had to wait;
  /// below it the connection is closed as at send_timeout. What the kernel
  /// took at once is not counted against the client, and once the whole
  /// answer is in the kernel only idle_timeout applies.
  std::uint64_t min_send_rate = 0;
  std::chrono::milliseconds min_send_rate_window{10'000};  ///< see min_send_rate
  /// After an error answer that closes the connection (a 413, a 400) while
  /// the client may still be sending, the server keeps reading and dropping
  /// what comes, so that the kernel does not answer those bytes with a
  /// reset that loses the answer: for lingering_time at most in all, and
  /// lingering_timeout at most between two reads (nginx's lingering_time
  /// and lingering_timeout, same defaults). Bounded by time, not bytes: a
  /// client uploading 20 MiB over a fast link still reads its 413.
  std::chrono::milliseconds lingering_time{30'000};
  std::chrono::milliseconds lingering_timeout{5'000};  ///< see lingering_time
  /// An HTTPS connection's TLS handshake; then it is closed.
  std::chrono::milliseconds tls_handshake_timeout{60'000};
  /// Connections open at once on each loop (each worker); at the cap the
  /// server stops accepting (the kernel's backlog queues the rest) until one
  /// ends. 0: no cap.
  std::size_t max_connections = 0;
  /// Unread request body the server reads and drops, before it answers, to
  /// keep a connection; with more left (or a broken one) the answer says
  /// "Connection: close" and the connection closes in stages.
  std::uint64_t max_drain = 256 * 1024;
  int workers = 1;  ///< loops, each in a thread of its own (see the file's comment)
  bool reuse_port = false;  ///< forced on when workers > 1
  int backlog = 1024;  ///< the listen(2) backlog
  std::optional<SslContext> ssl;  ///< HTTPS

  /// HTTP/2 (docs/http-server.md, "HTTP/2"): h2c with prior knowledge on
  /// plain TCP (a connection that opens with the client preface), h2 over
  /// TLS chosen by ALPN (the context then offers "h2" and "http/1.1"). The
  /// same routes, middleware and handlers serve both versions. Off: HTTP/1.1
  /// only, as before.
  bool http2 = true;
  /// Streams a client may have open at once on one connection (nginx's and
  /// Go's default); past it nghttp2 refuses new ones (REFUSED_STREAM). The
  /// head of each request is held to limits.max_head_bytes (advertised as
  /// SETTINGS_MAX_HEADER_LIST_SIZE) and limits.max_headers; its body to
  /// limits.max_body.
  std::uint32_t max_concurrent_streams = 100;
  /// Request body bytes a client may send on a stream ahead of the
  /// handler's reads (its flow-control window; RFC 9113's default). The
  /// connection's window is 16 of those (1 MiB by default).
  std::uint32_t initial_window_size = 65'535;
  /// On shutdown() (a Ctrl-C under run_until_signal), how long a WebSocket
  /// (a handler set's, ws_handlers.hpp, or one a handler owns,
  /// WebSocketResponse::prepare) waits for the peer's answer to
  /// the close frame the server sends (1001, going away) before it drops the
  /// connection: the shorter of this and the route's close_timeout, so that
  /// a stalled peer does not hold the shutdown for the whole close_timeout
  /// (10 s). A live peer answers within a round trip.
  std::chrono::milliseconds ws_shutdown_timeout{1'000};
  std::string server_name = "corio";  ///< the Server header; "" sends none
  AccessLog access_log = log_to_stderr;  ///< empty: no access log
};

/// The rest of a middleware chain: the next middleware, or the handler.
class Next;
/// Runs around a handler: calls (or not) next(req) and may change its answer.
using Middleware = std::function<Coro<Response>(Request&, Next)>;

/// Shapes every error answer the server gives (Server::on_error): an
/// HTTPException a handler threw, the 404 and 405 of unmatched routes, a
/// request the server could not read (400, 413, 431, ...), a 500 for a
/// handler's other exceptions. What it returns is sent, plus any header of
/// the error it did not set (Allow, WWW-Authenticate). A hook that throws
/// is reported through the loop's exception handler and the error's own
/// answer (Response::from) goes out. Called on the loop of the connection.
using ErrorHandler = std::function<Response(const Request&, const HTTPException&)>;

namespace detail {
struct ServerShared;
class LoopServer;
class Workers;
}  // namespace detail

/// The rest of a middleware chain: the next middleware, or the handler.
class Next {
 public:
  /// Made by the server: middleware index of shared's chain, then handler.
  Next(const detail::ServerShared& shared, std::size_t index, const Handler& handler) noexcept
      : shared_(&shared), index_(index), handler_(&handler) {}
  /// Runs the rest of the chain on req and returns its answer.
  Coro<Response> operator()(Request& req) const;

 private:
  const detail::ServerShared* shared_;
  std::size_t index_;
  const Handler* handler_;
};

/// An HTTP/1.1 and HTTP/2 server: routes, middleware, and its connections.
class Server {
 public:
  explicit Server(ServerOptions options = {});  ///< not yet listening: see start()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  /// Routes and middleware: add them before start().
  void route(std::string method, std::string_view pattern, Handler handler);
  void get(std::string_view pattern, Handler h) { route("GET", pattern, std::move(h)); }  ///< route("GET", ...)
  void post(std::string_view pattern, Handler h) { route("POST", pattern, std::move(h)); }  ///< route("POST", ...)
  void put(std::string_view pattern, Handler h) { route("PUT", pattern, std::move(h)); }  ///< route("PUT", ...)
  void patch(std::string_view pattern, Handler h) { route("PATCH", pattern, std::move(h)); }  ///< route("PATCH", ...)
  void del(std::string_view pattern, Handler h) { route("DELETE", pattern, std::move(h)); }  ///< route("DELETE", ...)
  /// A WebSocket route served by a handler set (ws_handlers.hpp), as Router::ws.
  template <class Data = std::monostate>
  void ws(std::string_view pattern, WsHandlers<Data> handlers) {
    route("GET", pattern, ws_handler(std::move(handlers)));
  }

  /// Files under root at prefix + path: no escape from root by ".." or a
  /// symlink (403), a directory serves its index.html.
  void add_static(std::string_view prefix, std::string root);
  /// Runs around every request's handler, first added outermost, the 404
  /// and 405 answers of unmatched routes included. An HTTPException from the
  /// handler (or the 404/405) reaches the middleware as its Response, already
  /// shaped by the error hook, so a middleware can add headers to every
  /// answer; one a middleware throws is shaped the same way.
  void use(Middleware middleware);
  /// The error hook (ErrorHandler above); one per server, a later call replaces it.
  void on_error(ErrorHandler handler);

  const ServerOptions& options() const noexcept;  ///< as given to the constructor

  /// Binds and starts accepting (port 0: any free one, see port()).
  Coro<void> start(std::string host, std::uint16_t port);
  std::uint16_t port() const noexcept;  ///< the bound port once start() returned; 0 before

  /// Until close() or shutdown() (cancelled: closes, then rethrows).
  Coro<void> serve_forever();
  /// Stops accepting and closes every connection at once.
  void close();
  /// Graceful: stops accepting, closes idle connections, lets in-flight
  /// requests finish (their connections then close) within deadline; after
  /// it, cancels what is left.
  Coro<void> shutdown(std::chrono::milliseconds deadline = std::chrono::seconds(10));

 private:
  std::shared_ptr<detail::ServerShared> shared_;
  std::shared_ptr<detail::LoopServer> main_;  ///< this loop's; set by start()
  std::unique_ptr<detail::Workers> workers_;
};

/// Serves until SIGINT or SIGTERM, then shuts down gracefully within
/// deadline (the signal handlers are removed again).
Coro<void> run_until_signal(Server& server,
                            std::chrono::milliseconds deadline = std::chrono::seconds(10));

}  // namespace corio::http
