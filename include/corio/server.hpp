/// \file
/// corio::Server: asyncio.Server, what start_server() and start_unix_server()
/// return (streams.hpp).
///
/// One accept-loop task per listening socket; each accepted connection runs
/// the handler as a task of its own. A handler's exception is reported
/// through the loop's exception handler ("Unhandled exception in
/// client_connected_cb") and ends only that connection; one that says the
/// peer went away (ECONNRESET, EPIPE, ECONNABORTED) is an ordinary end of a
/// connection, reported in debug mode only.
///
/// Move-only; destroying the handle closes the server (the `async with
/// server:` of asyncio), which stops accepting but leaves the connections
/// running. The handler object lives as long as any of its connections,
/// so even a lambda coroutine with captures is safe as a handler.
///
/// Running out of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM on accept)
/// does not stop the server: the error is reported once, accepting pauses
/// for 100 ms and resumes; existing connections are served meanwhile, and
/// new ones are accepted as soon as descriptors free up. (asyncio pauses 1 s;
/// 100 ms recovers sooner, and ten failed accept() calls a second cost
/// nothing.) Further failures are not reported until an accept succeeds.
///
/// Suspends: wait_closed() until close() and every handler task has ended
/// (asyncio 3.12); serve_forever() until close().
/// Resumed by: close() and the end of the last handler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <corio/coro.hpp>
#include <corio/detail/intrusive.hpp>
#include <corio/socket.hpp>
#include <corio/ssl.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio {

/// What start_server() calls for each connection.
using ClientConnected = std::function<Coro<void>(StreamReader, StreamWriter)>;

/// How start_server() and start_unix_server() serve.
struct ServerOptions {
  std::size_t limit = kDefaultStreamLimit;  ///< each connection's StreamReader limit
  int backlog = 100;                        ///< asyncio's default
  bool reuse_address = true;                ///< SO_REUSEADDR (TCP only)
  bool reuse_port = false;                  ///< SO_REUSEPORT: one listener per loop/thread
  /// Connections open at once (0: no cap): at the cap accepting pauses (the
  /// backlog queues the rest) until one ends.
  std::size_t max_connections = 0;

  /// TLS (ssl.hpp): a server context; each connection's handshake runs
  /// before the handler, within ssl_handshake_timeout. A failed one closes
  /// that connection only, reported in debug mode alone (asyncio).
  std::optional<SslContext> ssl;
  std::chrono::milliseconds ssl_handshake_timeout{60'000};  ///< asyncio's 60 s
  std::chrono::milliseconds ssl_shutdown_timeout{30'000};   ///< asyncio's 30 s
};

namespace detail {
class ServerState;
void add_ref(ServerState* s) noexcept;
void release(ServerState* s) noexcept;

// One connection's share of max_connections, from its accept until this is
// destroyed; it holds the connection's reference to its server too.
class ServerSlot {
 public:
  explicit ServerSlot(Ref<ServerState> s) noexcept;
  ServerSlot(ServerSlot&& o) noexcept = default;
  ServerSlot(const ServerSlot&) = delete;
  ServerSlot& operator=(const ServerSlot&) = delete;
  ~ServerSlot();
  ServerState& server() const noexcept { return *s_; }

 private:
  Ref<ServerState> s_;
};

}  // namespace detail

/// What start_server() returns: asyncio.Server (details at the top of server.hpp).
class Server {
 public:
  Server() noexcept = default;  ///< an empty handle
  /// A handle to a server start_server() made.
  explicit Server(detail::Ref<detail::ServerState> s) noexcept : s_(std::move(s)) {}
  /// Takes over the server; the other handle becomes empty.
  Server(Server&&) noexcept = default;
  /// Closes its own server, takes over o's.
  Server& operator=(Server&& o) noexcept;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  /// The addresses listened on (asyncio's sockets); empty once closed.
  std::vector<SocketAddress> sockets() const;
  /// The port of the first listening socket (0 for a Unix server): the one
  /// to connect to after binding port 0.
  std::uint16_t port() const noexcept;
  /// Whether it accepts connections (until close()).
  bool is_serving() const noexcept;

  /// Stops accepting and closes the listening sockets (a Unix server removes
  /// its socket file). Connections keep running. Idempotent.
  void close();
  /// close() on each connection's writer (flush, then close) / abort() on it;
  /// a connection still in its TLS handshake is closed at once either way.
  void close_clients();
  /// abort() on each connection's writer: closed at once, buffers dropped.
  void abort_clients();
  /// Until closed and every handler task has ended.
  Coro<void> wait_closed();
  /// Until close(). Cancelled, it closes the server and rethrows (unlike
  /// asyncio it does not wait for the handlers: call wait_closed() for that).
  Coro<void> serve_forever();

 private:
  detail::Ref<detail::ServerState> s_;
};

namespace detail {
// For corio's own servers (HTTP), which run their connections as they like:
// each accepted connection (after its TLS handshake) is handed over with its
// slot, from the accept loop or the handshake's task, and is the taker's from
// then on: no task of the server's runs it, and close_clients(),
// abort_clients() and wait_closed() do not see it. An exception from the
// taker is reported as a handler's is.
using ClientAdopted = std::function<void(StreamReader, StreamWriter, ServerSlot)>;
Coro<Server> start_adopting_server(ClientAdopted adopt, std::string host, std::uint16_t port,
                                   ServerOptions opts);
}  // namespace detail

}  // namespace corio
