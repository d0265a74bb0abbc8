// open_connection, open_unix_connection and the Happy Eyeballs race under
// them, and start_tls (see streams.hpp).
#include <netdb.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <system_error>

#include <corio/streams.hpp>
#include <corio/wait.hpp>

#include "net/connection.hpp"
#include "net/stream_transport.hpp"
#include "net/tls.hpp"

namespace corio {

namespace {

// The name TLS sends and checks (see ConnectOptions::server_hostname),
// ValueError for options that cannot work: before connecting.
std::string tls_hostname(const ConnectOptions& opts, const std::string& host) {
  if (!opts.ssl) {
    if (opts.server_hostname) throw ValueError("server_hostname is only meaningful with ssl");
    return {};
  }
  std::string name = opts.server_hostname.value_or(host);
  detail::check_client_tls(*opts.ssl, name);
  return name;
}

// The streams over transport, after the TLS handshake if opts.ssl.
Coro<std::pair<StreamReader, StreamWriter>> streams_over(std::unique_ptr<detail::Transport> transport,
                                                         ConnectOptions opts, std::string hostname) {
  EventLoop& loop = get_running_loop();
  if (!opts.ssl) co_return detail::make_streams(std::move(transport), opts.limit);
  detail::TlsParams params;
  params.server_side = opts.ssl->server_side();
  params.server_hostname = std::move(hostname);
  params.shutdown_timeout = opts.ssl_shutdown_timeout;
  if (opts.alpn_protocols) params.alpn = detail::alpn_wire(*opts.alpn_protocols);
  auto tls = std::make_unique<detail::TlsTransport>(loop, std::move(transport), *opts.ssl,
                                                    std::move(params));
  co_await tls->handshake(opts.ssl_handshake_timeout);
  co_return detail::make_streams(std::move(tls), opts.limit);
}

std::unique_ptr<detail::Transport> socket_transport(Socket sock) {
  return std::make_unique<detail::SocketTransport>(get_running_loop(), std::move(sock));
}

// RFC 8305 section 4: alternate the families, starting with the resolver's
// first (asyncio's _interleave_addrinfos with first_address_family_count 1).
std::vector<SocketAddress> interleave_families(const std::vector<AddrInfo>& infos) {
  std::vector<SocketAddress> first, other;
  for (const AddrInfo& ai : infos) {
    (ai.family == infos.front().family ? first : other).push_back(ai.address);
  }
  std::vector<SocketAddress> out;
  for (std::size_t i = 0; i < std::max(first.size(), other.size()); ++i) {
    if (i < first.size()) out.push_back(first[i]);
    if (i < other.size()) out.push_back(other[i]);
  }
  return out;
}

// One attempt: a socket of the address's family, bound first if asked.
Coro<Socket> connect_one(SocketAddress address, std::optional<SocketAddress> local) {
  Socket sock = Socket::create(address.family(), SOCK_STREAM);
  if (local) sock.bind(*local);
  co_await get_running_loop().sock_connect(sock, address);
  co_return sock;
}

// The attempts still running when the race ends, won, lost or cancelled,
// are cancelled: their sockets close as they unwind.
struct CancelAttempts {
  std::vector<Task<Socket>>& running;
  explicit CancelAttempts(std::vector<Task<Socket>>& r) noexcept : running(r) {}
  CancelAttempts(const CancelAttempts&) = delete;
  CancelAttempts& operator=(const CancelAttempts&) = delete;
  ~CancelAttempts() {
    for (Task<Socket>& t : running) {
      if (!t.done()) t.cancel();
    }
  }
};

// Only the local address's family can be reached from it (asyncio filters
// the same way).
std::vector<SocketAddress> reachable_from(std::vector<SocketAddress> addresses,
                                          const std::optional<SocketAddress>& local) {
  if (!local) return addresses;
  std::erase_if(addresses,
                [&local](const SocketAddress& a) { return a.family() != local->family(); });
  if (addresses.empty()) {
    throw std::system_error(EAFNOSUPPORT, std::generic_category(),
                            "no address of the local address's family (" + local->to_string() +
                                ")");
  }
  return addresses;
}

// A finished attempt: its socket, or its error filed under its start order.
std::optional<Socket> collect(Task<Socket>& t, const std::vector<Task<Socket>>& started,
                              std::vector<std::exception_ptr>& errors) {
  if (std::exception_ptr e = t.exception()) {
    const auto index = std::find(started.begin(), started.end(), t) - started.begin();
    errors[static_cast<std::size_t>(index)] = e;
    return std::nullopt;
  }
  return t.result();
}

[[noreturn]] void throw_first(const std::vector<std::exception_ptr>& errors) {
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  throw RuntimeError("no connection attempt was made");
}

}  // namespace

namespace detail {

// asyncio's staggered_race: each turn starts the next attempt, then waits
// for one to finish or for the delay (no delay once all have started).
Coro<Socket> connect_staggered(std::vector<SocketAddress> addresses, ConnectOptions opts) {
  if (addresses.empty()) throw ValueError("no address to connect to");
  addresses = reachable_from(std::move(addresses), opts.local_address);
  if (addresses.size() == 1) co_return co_await connect_one(addresses[0], opts.local_address);
  EventLoop& loop = get_running_loop();
  std::vector<Task<Socket>> started, pending;
  std::vector<std::exception_ptr> errors(addresses.size());
  CancelAttempts cancel_on_exit(pending);
  for (;;) {
    if (started.size() < addresses.size()) {
      Coro<Socket> attempt = connect_one(addresses[started.size()], opts.local_address);
      started.push_back(loop.create_task(std::move(attempt)));
      pending.push_back(started.back());
    }
    std::optional<std::chrono::duration<double>> delay;
    if (started.size() < addresses.size()) delay = opts.happy_eyeballs_delay;
    WaitResult<Socket> turn = co_await wait(pending, ReturnWhen::first_completed, delay);
    pending = std::move(turn.pending);
    std::optional<Socket> winner;
    for (Task<Socket>& t : turn.done) {
      std::optional<Socket> sock = collect(t, started, errors);
      if (sock && !winner) winner = std::move(sock);  // a second one in the same turn closes
    }
    if (winner) co_return std::move(*winner);
    if (pending.empty() && started.size() == addresses.size()) throw_first(errors);
  }
}

}  // namespace detail

Coro<std::pair<StreamReader, StreamWriter>> open_connection(std::string host, std::uint16_t port,
                                                            ConnectOptions opts) {
  std::string hostname = tls_hostname(opts, host);
  std::vector<AddrInfo> infos = co_await getaddrinfo(host, port, AF_UNSPEC, SOCK_STREAM);
  if (infos.empty()) {
    throw std::system_error(EAI_NONAME, gai_category(), "getaddrinfo '" + host + "'");
  }
  std::vector<SocketAddress> addresses = interleave_families(infos);
  Socket sock = co_await detail::connect_staggered(std::move(addresses), opts);
  std::unique_ptr<detail::Transport> transport = socket_transport(std::move(sock));
  co_return co_await streams_over(std::move(transport), std::move(opts), std::move(hostname));
}

Coro<std::pair<StreamReader, StreamWriter>> open_connection(Socket sock, ConnectOptions opts) {
  std::string hostname = tls_hostname(opts, "");
  std::unique_ptr<detail::Transport> transport = socket_transport(std::move(sock));
  co_return co_await streams_over(std::move(transport), std::move(opts), std::move(hostname));
}

Coro<std::pair<StreamReader, StreamWriter>> open_unix_connection(std::string path,
                                                                 ConnectOptions opts) {
  std::string hostname = tls_hostname(opts, "");
  const SocketAddress address = SocketAddress::unix_path(path);
  Socket sock = Socket::create(AF_UNIX, SOCK_STREAM);
  co_await get_running_loop().sock_connect(sock, address);
  std::unique_ptr<detail::Transport> transport = socket_transport(std::move(sock));
  co_return co_await streams_over(std::move(transport), std::move(opts), std::move(hostname));
}

Coro<std::pair<StreamReader, StreamWriter>> start_tls(StreamReader reader, StreamWriter writer,
                                                      std::string host, ConnectOptions opts) {
  if (!opts.ssl) throw ValueError("start_tls needs ConnectOptions::ssl");
  // A server context takes the server's side (asyncio's server_side=True):
  // no name to send or check.
  std::string hostname = opts.ssl->server_side() ? std::string() : tls_hostname(opts, host);
  auto inner = std::make_unique<detail::StreamTransport>(std::move(reader), std::move(writer));
  co_return co_await streams_over(std::move(inner), std::move(opts), std::move(hostname));
}

}  // namespace corio
