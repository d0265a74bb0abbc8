// ClientSession::upgrade and ws_connect (see client.hpp, websocket.hpp):
// an Upgrade on a connection of its own, never a pooled one (it will not
// come back), and on it the client's side of the WebSocket opening
// handshake (RFC 6455 section 4.1).
#include <algorithm>

#include <corio/detail/transport.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/http/client.hpp>
#include <corio/http/websocket.hpp>
#include <corio/timeout.hpp>

#include "http/client/client_body.hpp"
#include "http/client/client_request.hpp"
#include "http/client/connection_pool.hpp"
#include "http/client/h2_client.hpp"
#include "http/client/head_exchange.hpp"
#include "http/client/proxy.hpp"
#include "http/ws/ws_handshake.hpp"
#include "http/ws/ws_session.hpp"

namespace corio::http {

namespace {

// ws:// and wss:// are http:// and https:// for the handshake.
std::string http_url(std::string url) {
  const auto starts = [&](std::string_view p) {
    return url.size() >= p.size() && iequals(std::string_view(url).substr(0, p.size()), p);
  };
  if (starts("ws://")) return "http://" + url.substr(5);
  if (starts("wss://")) return "https://" + url.substr(6);
  return url;
}

[[noreturn]] void refuse(int status, const std::string& why) {
  throw WSServerHandshakeError(status, "WebSocket handshake: " + why);
}

// The subprotocol and extensions the server chose, among those offered;
// fills setup. status: the answer's, for the error.
void check_agreed(const ResponseHead& head, const WsOptions& opts, detail::WsSetup& setup) {
  const Headers& h = head.headers;
  setup.protocol = std::string(h.get_or("sec-websocket-protocol", ""));
  if (!setup.protocol.empty() &&
      std::find(opts.protocols.begin(), opts.protocols.end(), setup.protocol) == opts.protocols.end()) {
    refuse(head.status, "the server chose the subprotocol " + setup.protocol + ", not offered");
  }
  const std::string extensions = detail::joined(h, "sec-websocket-extensions");
  if (extensions.empty()) return;
  if (!opts.deflate.enabled) refuse(head.status, "the server chose extensions, none offered: " + extensions);
  try {
    setup.deflate = detail::parse_deflate_answer(extensions, opts.deflate);
  } catch (const std::invalid_argument& e) {
    refuse(head.status, e.what());
  }
}

// RFC 6455 section 4.1's checks of the server's answer; fills setup.
void check_answer(const ResponseHead& head, const std::string& key, const WsOptions& opts,
                  detail::WsSetup& setup) {
  const Headers& h = head.headers;
  if (head.status != 101) refuse(head.status, "the server answered " + std::to_string(head.status));
  if (!h.has_token("upgrade", "websocket")) refuse(101, "no \"Upgrade: websocket\" in the answer");
  if (!h.has_token("connection", "upgrade")) refuse(101, "no \"Connection: Upgrade\" in the answer");
  if (h.get_or("sec-websocket-accept", "") != detail::ws_accept(key)) {
    refuse(101, "a wrong Sec-WebSocket-Accept");
  }
  check_agreed(head, opts, setup);
}

// How long a WebSocket's write over h2 waits for a shut window before its
// stream is reset: the server's send_timeout default (nginx's too).
constexpr std::chrono::milliseconds kTunnelStall{60'000};

// The stream's answer head, within the deadline; a refused stream is the
// connection's error as ws_connect reports it.
Coro<ResponseHead> answer_of(detail::H2ClientStream& stream, const detail::Deadline& deadline) {
  try {
    co_return co_await stream.head(deadline);
  } catch (const detail::H2Refused&) {
  }
  throw ClientConnectionError("the server refused the HTTP/2 stream");
}

// The handshake's fields either version sends (RFC 8441 section 5 keeps
// these; HTTP/1.1 adds Upgrade, Connection and the key).
RequestOptions offer(const WsOptions& opts) {
  RequestOptions ro;
  ro.headers = opts.headers;
  ro.headers.set("Sec-WebSocket-Version", "13");
  if (!opts.protocols.empty()) {
    std::string offered;
    for (const std::string& p : opts.protocols) offered += (offered.empty() ? "" : ", ") + p;
    ro.headers.set("Sec-WebSocket-Protocol", offered);
  }
  if (opts.deflate.enabled) ro.headers.set("Sec-WebSocket-Extensions", detail::offer_deflate(opts.deflate));
  ro.proxy = opts.proxy;
  return ro;
}

// An Upgrade goes to the origin itself, in a CONNECT tunnel when a proxy
// applies, for ws:// too: a proxy that forwards absolute-form requests
// would not pass the Upgrade on (browsers tunnel ws:// as well).
detail::Route upgrade_route(Url u, const detail::ProxyConfig* proxies,
                            const std::optional<std::string>& proxy, const Headers& proxy_headers) {
  std::optional<Url> via = detail::choose_proxy(proxies, proxy, u);
  Headers headers = via ? proxy_headers : Headers();
  return detail::Route{std::move(u), std::move(via), std::move(headers), false};
}

// The Upgrade's request on a connection of its own, and the answer's head.
Coro<detail::HeadExchange> upgrade_exchange(detail::ConnectionPool& pool, detail::Route route,
                                            std::string request, Limits limits) {
  Coro<std::pair<StreamReader, StreamWriter>> opening = pool.open_own(route);
  std::pair<StreamReader, StreamWriter> streams = co_await std::move(opening);
  Coro<detail::HeadExchange> exchange =
      detail::exchange_head(std::move(streams), std::move(request), limits, route.peer.origin());
  co_return co_await std::move(exchange);
}

}  // namespace

Coro<UpgradedConnection> ClientSession::upgrade(std::string url, RequestOptions opts) {
  detail::Route route =
      upgrade_route(Url::parse(http_url(std::move(url))), proxies_.get(), opts.proxy, opts_.proxy_headers);
  Coro<UpgradedConnection> upgrading = upgrade_to(std::move(route), std::move(opts));
  co_return co_await std::move(upgrading);
}

Coro<UpgradedConnection> ClientSession::upgrade_to(detail::Route route, RequestOptions opts) {
  if (closed()) throw ClientConnectionError("the session is closed");
  const Url& u = route.peer;
  detail::PreparedRequest req = detail::prepare_request("GET", u, opts_, opts);
  req.auto_decompress = false;
  std::string request = detail::serialize_request(req, jar_.filter_cookies(u));
  Coro<detail::HeadExchange> exchange = upgrade_exchange(*pool_, route, std::move(request), opts_.limits);
  // The handshake within the total timeout; the new protocol's life has none.
  const std::optional<std::chrono::milliseconds> total = opts.timeout.value_or(opts_.timeout).total;
  detail::HeadExchange hs;
  if (total) {
    hs = co_await wait_for(std::move(exchange), *total);
  } else {
    hs = co_await std::move(exchange);
  }
  jar_.update_cookies(hs.head.headers.get_all("Set-Cookie"), u);
  if (hs.head.status != 101) {
    hs.writer.close();
    throw ClientResponseError(hs.head.status, u.to_string() + " did not switch protocols: it answered " +
                                                  std::to_string(hs.head.status));
  }
  co_return UpgradedConnection{std::move(hs.head), std::move(hs.reader), std::move(hs.writer)};
}

// RFC 8441 on a stream of the pool's h2 connection to the origin (its
// stream counted there while the WebSocket lives), route being one that may
// speak h2 (ws_connect decided). nullopt: HTTP/1.1 instead, when the origin
// chose http/1.1 by ALPN, or its SETTINGS allow no extended CONNECT.
Coro<std::optional<WebSocket>> ClientSession::ws_over_h2(const detail::Route& route,
                                                         const WsOptions& opts,
                                                         RequestOptions& ro) {
  const detail::Deadline deadline = detail::start_deadline(ro.timeout.value_or(opts_.timeout));
  detail::PreparedRequest req = detail::prepare_request("CONNECT", route.peer, opts_, ro);
  req.auto_decompress = false;
  std::shared_ptr<detail::H2ClientStream> stream;
  Coro<detail::Lease> acquiring = pool_->acquire(route, false, deadline.sock_connect, &stream);
  detail::Lease lease = co_await timeout_at(deadline.for_connect(get_running_loop().time()),
                                            std::move(acquiring));
  if (!stream) {  // ALPN chose http/1.1: the new connection, unused, is pooled
    lease.release(true);
    co_return std::nullopt;
  }
  if (!co_await stream->connect_allowed(deadline)) co_return std::nullopt;
  stream->send(req, jar_.filter_cookies(req.url), "websocket");
  const ResponseHead head = co_await answer_of(*stream, deadline);
  jar_.update_cookies(head.headers.get_all("Set-Cookie"), req.url);
  if (head.status < 200 || head.status > 299) {
    refuse(head.status, "the server answered " + std::to_string(head.status));
  }
  detail::WsSetup setup;
  setup.role = detail::WsRole::client;
  check_agreed(head, opts, setup);
  setup.options = opts;
  auto [reader, writer] = corio::detail::make_streams(
      detail::H2ClientStream::tunnel(std::move(stream), kTunnelStall, opts.close_timeout),
      kDefaultStreamLimit);
  co_return WebSocket(std::move(reader), std::move(writer), std::move(setup));
}

// Over h2 or not is decided before anything is prepared for it, so that
// the common case (HTTP/1.1) prepares no CONNECT. The route is the
// origin's, in a tunnel through the proxy if one applies, on either
// version (an h2 connection through that tunnel is one of the pool's
// like any other). Unset http2 takes h2 only where the session holds an
// h2 connection to the origin: not a connection made only to find it
// speaks HTTP/1.1, since the Upgrade makes its own.
Coro<WebSocket> ClientSession::ws_connect(std::string url, WsOptions opts) {
  if (closed()) throw ClientConnectionError("the session is closed");
  RequestOptions ro = offer(opts);
  detail::Route route =
      upgrade_route(Url::parse(http_url(std::move(url))), proxies_.get(), ro.proxy, opts_.proxy_headers);
  const bool h2 = opts.http2.value_or(true) && pool_->may_h2(route) &&
                  (opts.http2.has_value() || pool_->has_h2(route));
  if (h2) {
    std::optional<WebSocket> ws = co_await ws_over_h2(route, opts, ro);
    if (ws) co_return std::move(*ws);
  }
  const std::string key = detail::make_ws_key();
  ro.headers.set("Upgrade", "websocket");
  ro.headers.set("Connection", "Upgrade");
  ro.headers.set("Sec-WebSocket-Key", key);
  UpgradedConnection up;
  try {
    Coro<UpgradedConnection> upgrading = upgrade_to(std::move(route), std::move(ro));
    up = co_await std::move(upgrading);
  } catch (const ClientResponseError& e) {
    throw WSServerHandshakeError(e.status(), std::string("WebSocket handshake: ") + e.what());
  }
  detail::WsSetup setup;
  setup.role = detail::WsRole::client;
  check_answer(up.head, key, opts, setup);
  setup.options = std::move(opts);
  co_return WebSocket(std::move(up.reader), std::move(up.writer), std::move(setup));
}

}  // namespace corio::http
