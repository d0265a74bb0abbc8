// CONNECT tunnels (see proxy_tunnel.hpp).
#include "http/proxy_tunnel.hpp"

#include <netdb.h>

#include <corio/dns.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/http/parser.hpp>

namespace corio::http::detail {

namespace {

// A CONNECT answer is a head only; a proxy's is small.
constexpr std::size_t kRecvPiece = 4096;

Coro<Socket> connect_to(const Url& proxy) {
  const std::vector<AddrInfo> infos = co_await getaddrinfo(proxy.host, proxy.port, AF_UNSPEC, SOCK_STREAM);
  if (infos.empty()) {
    throw std::system_error(EAI_NONAME, gai_category(), "getaddrinfo '" + proxy.host + "'");
  }
  std::vector<SocketAddress> addresses;
  for (const AddrInfo& ai : infos) addresses.push_back(ai.address);
  co_return co_await corio::detail::connect_staggered(std::move(addresses), ConnectOptions{});
}

}  // namespace

std::string connect_request(const Url& target, const Headers& proxy_headers) {
  // The authority always with its port (RFC 9112 section 3.2.3).
  std::string authority = target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host;
  authority += ":" + std::to_string(target.port);
  std::string out = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  for (const Header& f : proxy_headers) out += f.name + ": " + f.value + "\r\n";
  return out + "\r\n";
}

Coro<std::pair<StreamReader, StreamWriter>> open_tunnel(Url proxy, Url target, Headers proxy_headers,
                                                        ConnectOptions tls) {
  if (proxy.is_https()) throw ValueError("a CONNECT tunnel through an https proxy is not supported");
  EventLoop& loop = get_running_loop();
  Socket sock = co_await connect_to(proxy);
  co_await loop.sock_sendall(sock, connect_request(target, proxy_headers));
  ResponseParser parser;
  ResponseHead head;
  std::string received;
  std::size_t used = 0;
  while ((used = parser.parse(received, head)) == 0) {
    const std::string piece = co_await loop.sock_recv(sock, kRecvPiece);
    if (piece.empty()) throw ClientConnectionError("the proxy " + proxy.origin() + " closed before answering CONNECT");
    received += piece;
  }
  if (head.status < 200 || head.status > 299) {
    throw ClientConnectionError("the proxy " + proxy.origin() + " answered CONNECT with " +
                                std::to_string(head.status) + " " + head.reason);
  }
  if (used != received.size()) {
    throw ClientConnectionError("the proxy " + proxy.origin() + " sent bytes before the TLS handshake");
  }
  tls.server_hostname = target.host;
  co_return co_await open_connection(std::move(sock), std::move(tls));
}

}  // namespace corio::http::detail
