// Server, start_server and start_unix_server (see server.hpp, streams.hpp).
//
// Lifetime rules:
//   1. ServerState is counted by the Server handle, each accept-loop task
//      and each connection's task (plain integer: loop-affine). The handler
//      lives in it, so it outlives every connection it serves.
//   2. The listening sockets stay in `listeners` until the state dies;
//      close() only closes them, so an accept loop's reference to its
//      socket never dangles.
//   3. A connection's node lives in its task's frame and unlinks itself when
//      the task ends, however it ends; the last one out of a closed server
//      wakes wait_closed().
//   4. An adopting server (server.hpp) keeps a connection only until it
//      hands it over: at once, or after its TLS handshake (in a task, as
//      rule 3). Its slot goes with it, so max_connections still counts it.
#include <netdb.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <cstring>
#include <system_error>

#include <corio/sleep.hpp>
#include <corio/streams.hpp>

#include "net/connection.hpp"
#include "net/tls.hpp"

namespace corio {

namespace detail {

class ServerState {
 public:
  ServerState(EventLoop& l, ClientConnected h, ClientAdopted a, const ServerOptions& opts)
      : loop(l),
        handler(std::move(h)),
        adopt(std::move(a)),
        limit(opts.limit),
        max_connections(opts.max_connections),
        ssl(opts.ssl),
        ssl_handshake_timeout(opts.ssl_handshake_timeout),
        ssl_shutdown_timeout(opts.ssl_shutdown_timeout) {}
  ServerState(const ServerState&) = delete;
  ServerState& operator=(const ServerState&) = delete;

  void add_listener(Socket sock);
  void start_accepting();
  void start_client(Socket sock, const SocketAddress& peer, std::size_t listener);
  void close() noexcept;
  // At max_connections: below_cap is cleared for the accept loops to wait on.
  bool at_capacity() noexcept {
    if (max_connections == 0 || connections < max_connections) return false;
    below_cap.clear();
    return true;
  }
  void release_slot() noexcept {
    if (--connections < max_connections) below_cap.set();
  }
  void maybe_idle() noexcept {
    if (closed && clients.empty()) idle_event.set();
  }
  // close_clients() / abort_clients().
  void end_clients(bool abort);
  // A Unix server's socket file, removed on close if it is still ours.
  void own_socket_file(std::string path);

  std::uint32_t refs = 1;
  EventLoop& loop;
  ClientConnected handler;
  ClientAdopted adopt;  // instead of handler: an adopting server
  std::size_t limit;
  std::size_t max_connections;
  std::size_t connections = 0;  // accepted and not ended yet
  Event below_cap;
  std::optional<SslContext> ssl;
  std::chrono::milliseconds ssl_handshake_timeout;
  std::chrono::milliseconds ssl_shutdown_timeout;
  std::vector<Socket> listeners;
  std::vector<SocketAddress> addresses;
  std::vector<SocketAddress> accepted_locals;  // per listener: accepted_local()
  std::vector<Task<void>> acceptors;
  ListHead clients;
  std::string unix_path;
  struct stat unix_stat {};
  Event closed_event;  // close() was called: serve_forever() returns
  Event idle_event;    // closed and no connection left: wait_closed() returns
  bool closed = false;
  bool serving_forever = false;
};

void add_ref(ServerState* s) noexcept { ++s->refs; }
void release(ServerState* s) noexcept {
  if (--s->refs == 0) delete s;
}

ServerSlot::ServerSlot(Ref<ServerState> s) noexcept : s_(std::move(s)) { ++s_->connections; }

ServerSlot::~ServerSlot() {
  if (s_) s_->release_slot();
}

namespace {

// asyncio pauses 1 s (constants.ACCEPT_RETRY_DELAY); see server.hpp.
constexpr std::chrono::milliseconds kAcceptPause{100};

bool out_of_resources(int err) noexcept {
  return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

// From the errno alone, with no exception object made or inspected: this
// runs while the process may be out of fds, where UBSan's vptr check (which
// probes memory through a pipe) fails and reports a false "invalid vptr".
void report_accept_failure(ServerState& s, std::size_t index, int err) {
  std::string message =
      out_of_resources(err) ? "socket.accept() out of system resource" : "socket.accept() failed";
  message += " (" + std::string(std::strerror(err)) + ") on " + s.addresses[index].to_string() +
             "; accepting again in " + std::to_string(kAcceptPause.count()) + " ms";
  s.loop.call_exception_handler({std::move(message), nullptr, current_task()});
}

// One listening socket's accept loop. Errors other than close() pause it
// (see server.hpp); the first of a series is reported.
Coro<void> accept_loop(Ref<ServerState> ref, std::size_t index) {
  ServerState& s = *ref;
  bool reported = false;
  while (!s.closed) {
    if (s.at_capacity()) {
      co_await s.below_cap.wait();
      continue;
    }
    std::pair<Socket, SocketAddress> accepted;
    int err = 0;
    try {
      err = co_await s.loop.sock_accept_or_errno(s.listeners[index], &accepted);
    } catch (const std::system_error&) {  // EBADF: close() closed the socket under the wait
      if (s.closed) co_return;
      throw;
    }
    if (s.closed) co_return;
    if (err == 0) {
      s.start_client(std::move(accepted.first), accepted.second, index);
      reported = false;
      continue;
    }
    if (!reported) report_accept_failure(s, index, err);
    reported = true;
    co_await sleep(kAcceptPause);
  }
}

// A connection in its server's list, for close_clients() and wait_closed().
struct ClientNode : ListHook {
  ServerState& server;
  StreamWriter writer;               // once the streams exist
  Transport* handshaking = nullptr;  // before that, during a TLS handshake
  explicit ClientNode(ServerState& s) : server(s) { server.clients.push_back(this); }
  ClientNode(const ClientNode&) = delete;
  ClientNode& operator=(const ClientNode&) = delete;
  ~ClientNode() {
    unlink();
    server.maybe_idle();
  }
  // A handshake has nothing to flush: closing ends it as aborting does.
  void end(bool abort) {
    if (writer.valid()) {
      abort ? writer.abort() : writer.close();
    } else if (handshaking) {
      handshaking->close();
    }
  }
};

// A peer that reset the connection or went away while the handler wrote
// (ECONNRESET, EPIPE, ECONNABORTED), or a TLS peer that hung up without
// close_notify, ends a connection the ordinary way, not by a bug in the
// handler: under churn every impatient client would log a line. Like a
// failed handshake it is reported in debug mode only.
bool is_peer_gone(const std::exception_ptr& failure) noexcept {
  try {
    std::rethrow_exception(failure);
  } catch (const SslEofError&) {
    return true;
  } catch (const std::system_error& e) {
    return e.code() == std::errc::connection_reset || e.code() == std::errc::broken_pipe ||
           e.code() == std::errc::connection_aborted;
  } catch (...) {
    return false;
  }
}

void report_handler_failure(ServerState& s, std::exception_ptr failure) {
  if (!is_peer_gone(failure)) {
    s.loop.call_exception_handler(
        {"Unhandled exception in client_connected_cb", std::move(failure), current_task()});
  } else if (s.loop.get_debug()) {
    s.loop.call_exception_handler({"client_connected_cb ended: the peer closed the connection",
                                   std::move(failure), current_task()});
  }
}

// asyncio reports a failed handshake in debug mode only: a port scanner or
// a client that gave up is no error of the server's.
void report_handshake_failure(ServerState& s, const Transport& t, std::exception_ptr failure) {
  if (!s.loop.get_debug()) return;
  s.loop.call_exception_handler(
      {"SSL handshake failed on a connection from " + t.peer_address().to_string(), failure,
       current_task()});
}

// The TLS handshake of a new connection, in a frame of its own: its state
// (the parameters, the failure) is gone by the time the connection waits
// for its peer in run_client's frame. Null when it failed (reported).
Coro<std::unique_ptr<Transport>> handshake(ServerState& s, ClientNode& node,
                                           std::unique_ptr<Transport> transport) {
  TlsParams params;
  params.server_side = true;
  params.shutdown_timeout = s.ssl_shutdown_timeout;
  auto tls = std::make_unique<TlsTransport>(s.loop, std::move(transport), *s.ssl, std::move(params));
  node.handshaking = tls.get();
  std::exception_ptr failure;
  try {
    co_await tls->handshake(s.ssl_handshake_timeout);
  } catch (const CancelledError&) {
    throw;
  } catch (...) {
    failure = std::current_exception();
  }
  node.handshaking = nullptr;
  if (failure) {
    report_handshake_failure(s, *tls, failure);
    co_return nullptr;
  }
  co_return tls;
}

// The connection's streams, made from its transport and given to their
// owner: an adopting server takes them at once, with the slot (rule 4), and
// an empty Coro comes back; otherwise the handler's coroutine, for
// run_client to await (node keeps the writer, for close()). Not a coroutine
// itself: the connection's frames while it waits are the handler's and
// run_client's.
Coro<void> give_streams(ServerState& s, ServerSlot& slot, ClientNode* node,
                        std::unique_ptr<Transport> transport) {
  auto [reader, writer] = make_streams(std::move(transport), s.limit);
  if (!s.adopt) {
    node->writer = writer;
    return s.handler(std::move(reader), std::move(writer));
  }
  try {
    s.adopt(std::move(reader), std::move(writer), std::move(slot));
  } catch (...) {
    report_handler_failure(s, std::current_exception());
  }
  return {};
}

// The transport is made before the task (its frame keeps no Socket). The
// slot is a parameter: given back with the frame even if the task never ran.
Coro<void> run_client(ServerSlot slot, std::unique_ptr<Transport> transport) {
  ServerState& s = slot.server();
  ClientNode node(s);
  if (s.ssl) {
    transport = co_await handshake(s, node, std::move(transport));
    if (!transport) co_return;
  }
  try {
    Coro<void> handler = give_streams(s, slot, &node, std::move(transport));
    if (!handler.valid()) co_return;  // adopted
    co_await std::move(handler);
  } catch (const CancelledError&) {
    throw;
  } catch (...) {
    report_handler_failure(s, std::current_exception());
  }
}

}  // namespace

void ServerState::add_listener(Socket sock) {
  addresses.push_back(sock.local_address());
  accepted_locals.push_back(accepted_local(sock, addresses.back()));
  listeners.push_back(std::move(sock));
}

// After every listener is in place: the tasks index `listeners`.
void ServerState::start_accepting() {
  for (std::size_t i = 0; i < listeners.size(); ++i) {
    acceptors.push_back(loop.create_task(accept_loop(Ref<ServerState>::share(this), i)));
  }
}

void ServerState::start_client(Socket sock, const SocketAddress& peer, std::size_t listener) {
  ServerSlot slot(Ref<ServerState>::share(this));
  auto transport =
      std::make_unique<SocketTransport>(loop, std::move(sock), peer, accepted_locals[listener]);
  if (adopt && !ssl) {
    static_cast<void>(give_streams(*this, slot, nullptr, std::move(transport)));  // adopted
  } else {
    loop.create_task(run_client(std::move(slot), std::move(transport)));
  }
}

void ServerState::end_clients(bool abort) {
  clients.for_each([abort](ListHook* n) { static_cast<ClientNode*>(n)->end(abort); });
}

void ServerState::own_socket_file(std::string path) {
  if (::stat(path.c_str(), &unix_stat) == 0) unix_path = std::move(path);
}

void ServerState::close() noexcept {
  if (closed) return;
  closed = true;
  for (Task<void>& t : acceptors) {
    try {
      t.cancel();
    } catch (...) {
      // Only copying an empty message could throw; the socket closes below anyway.
    }
  }
  for (Socket& sock : listeners) sock.close();
  below_cap.set();  // an accept loop waiting at the cap sees `closed`
  struct stat now {};
  if (!unix_path.empty() && ::stat(unix_path.c_str(), &now) == 0 &&
      now.st_dev == unix_stat.st_dev && now.st_ino == unix_stat.st_ino) {
    ::unlink(unix_path.c_str());  // ours still: not a file someone put there since
  }
  closed_event.set();
  maybe_idle();
}

}  // namespace detail

using detail::Ref;
using detail::ServerState;
using detail::ClientAdopted;

// ---- Server ----------------------------------------------------------------------

namespace {

Coro<void> wait_server_closed(Ref<ServerState> ref) { co_await ref->idle_event.wait(); }

Coro<void> serve_until_closed(Ref<ServerState> ref) {
  ServerState& s = *ref;
  if (s.closed) throw RuntimeError("server is closed");
  if (s.serving_forever) throw RuntimeError("server is already being awaited on serve_forever()");
  s.serving_forever = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{s.serving_forever};
  try {
    co_await s.closed_event.wait();
  } catch (const CancelledError&) {
    s.close();
    throw;
  }
}

}  // namespace

Server& Server::operator=(Server&& o) noexcept {
  if (this != &o) {
    if (s_) s_->close();
    s_ = std::move(o.s_);
  }
  return *this;
}

Server::~Server() {
  if (s_) s_->close();
}

std::vector<SocketAddress> Server::sockets() const {
  return s_->closed ? std::vector<SocketAddress>() : s_->addresses;
}

std::uint16_t Server::port() const noexcept {
  return s_->addresses.empty() ? 0 : s_->addresses.front().port();
}

bool Server::is_serving() const noexcept { return !s_->closed; }

void Server::close() { s_->close(); }

void Server::close_clients() { s_->end_clients(false); }

void Server::abort_clients() { s_->end_clients(true); }

Coro<void> Server::wait_closed() { return wait_server_closed(s_); }

Coro<void> Server::serve_forever() { return serve_until_closed(s_); }

// ---- start_server ----------------------------------------------------------------

namespace {

SocketAddress with_port(SocketAddress a, std::uint16_t port) {
  if (a.family() == AF_INET) reinterpret_cast<sockaddr_in*>(a.data())->sin_port = htons(port);
  if (a.family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(a.data())->sin6_port = htons(port);
  return a;
}

void bind_and_listen(Socket& sock, const SocketAddress& address, int backlog) {
  try {
    sock.bind(address);
    sock.listen(backlog);
  } catch (const std::system_error& e) {
    throw std::system_error(e.code(),
                            "error while attempting to bind on address " + address.to_string());
  }
}

// A listening TCP socket, or nothing if this kind of socket cannot exist
// here (no IPv6 in the kernel): asyncio skips those addresses too.
std::optional<Socket> tcp_listener(const AddrInfo& ai, std::uint16_t port,
                                   const ServerOptions& opts) {
  std::optional<Socket> sock;
  try {
    sock = Socket::create(ai.family, SOCK_STREAM, ai.protocol);
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  if (opts.reuse_address) sock->set_option(SOL_SOCKET, SO_REUSEADDR, 1);
  if (opts.reuse_port) sock->set_option(SOL_SOCKET, SO_REUSEPORT, 1);
  // IPv6 sockets take only IPv6: "" binds 0.0.0.0 and :: side by side.
  if (ai.family == AF_INET6) sock->set_option(IPPROTO_IPV6, IPV6_V6ONLY, 1);
  bind_and_listen(*sock, with_port(ai.address, port), opts.backlog);
  return sock;
}

Ref<ServerState> new_state(ClientConnected handler, ClientAdopted adopt,
                           const ServerOptions& opts) {
  if (!handler && !adopt) throw ValueError("start_server() needs a handler");
  if (opts.limit == 0) throw ValueError("stream limit must be positive");
  if (opts.ssl && !opts.ssl->server_side()) {
    throw ValueError("a server needs a server SslContext (SslContext::server())");
  }
  return Ref<ServerState>(
      new ServerState(get_running_loop(), std::move(handler), std::move(adopt), opts));
}

Coro<Server> start_tcp_server(Ref<ServerState> state, std::string host, std::uint16_t port,
                              ServerOptions opts) {
  std::vector<AddrInfo> infos = co_await getaddrinfo(host, port, AF_UNSPEC, SOCK_STREAM, AI_PASSIVE);
  for (const AddrInfo& ai : infos) {
    std::optional<Socket> sock = tcp_listener(ai, port, opts);
    if (!sock) continue;
    state->add_listener(std::move(*sock));
    port = state->addresses.front().port();  // port 0: the others share the first one's
  }
  if (state->listeners.empty()) {
    throw std::system_error(EAFNOSUPPORT, std::generic_category(),
                            "start_server: no address of '" + host + "' can be listened on");
  }
  state->start_accepting();
  co_return Server(std::move(state));
}

}  // namespace

// Coroutines themselves, as before: a bad argument is thrown where the start is awaited.
Coro<Server> start_server(ClientConnected handler, std::string host, std::uint16_t port,
                          ServerOptions opts) {
  Ref<ServerState> state = new_state(std::move(handler), {}, opts);
  co_return co_await start_tcp_server(std::move(state), std::move(host), port, std::move(opts));
}

Coro<Server> detail::start_adopting_server(ClientAdopted adopt, std::string host,
                                           std::uint16_t port, ServerOptions opts) {
  Ref<ServerState> state = new_state({}, std::move(adopt), opts);
  co_return co_await start_tcp_server(std::move(state), std::move(host), port, std::move(opts));
}

Coro<Server> start_unix_server(ClientConnected handler, std::string path, ServerOptions opts) {
  Ref<ServerState> state = new_state(std::move(handler), {}, opts);
  const SocketAddress address = SocketAddress::unix_path(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());  // stale
  Socket sock = Socket::create(AF_UNIX, SOCK_STREAM);
  bind_and_listen(sock, address, opts.backlog);
  state->own_socket_file(std::move(path));
  state->add_listener(std::move(sock));
  state->start_accepting();
  co_return Server(std::move(state));
}

}  // namespace corio
