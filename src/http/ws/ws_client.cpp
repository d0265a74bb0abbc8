// ClientSession::upgrade and ws_connect (see client.hpp, websocket.hpp):
// an Upgrade on a connection of its own, never a pooled one (it will not
// come back), and on it the client's side of the WebSocket opening
// handshake (RFC 6455 section 4.1).
#include <algorithm>

#include <corio/errors.hpp>
#include <corio/http/client.hpp>
#include <corio/http/websocket.hpp>
#include <corio/timeout.hpp>

#include "http/client/client_request.hpp"
#include "http/client/head_exchange.hpp"
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
  setup.protocol = std::string(h.get_or("sec-websocket-protocol", ""));
  if (!setup.protocol.empty() &&
      std::find(opts.protocols.begin(), opts.protocols.end(), setup.protocol) == opts.protocols.end()) {
    refuse(101, "the server chose the subprotocol " + setup.protocol + ", not offered");
  }
  const std::string extensions = detail::joined(h, "sec-websocket-extensions");
  if (extensions.empty()) return;
  if (!opts.deflate.enabled) refuse(101, "the server chose extensions, none offered: " + extensions);
  try {
    setup.deflate = detail::parse_deflate_answer(extensions, opts.deflate);
  } catch (const std::invalid_argument& e) {
    refuse(101, e.what());
  }
}

}  // namespace

Coro<UpgradedConnection> ClientSession::upgrade(std::string url, RequestOptions opts) {
  if (closed()) throw ClientConnectionError("the session is closed");
  const Url u = Url::parse(http_url(std::move(url)));
  detail::PreparedRequest req = detail::prepare_request("GET", u, opts_, opts);
  req.auto_decompress = false;
  ConnectOptions copts;
  if (u.is_https()) copts.ssl = opts_.ssl ? *opts_.ssl : SslContext::client();
  Coro<detail::HeadExchange> exchange = detail::exchange_head(
      u, std::move(copts), detail::serialize_request(req, jar_.filter_cookies(u)), opts_.limits);
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

Coro<WebSocket> ClientSession::ws_connect(std::string url, WsOptions opts) {
  const std::string key = detail::make_ws_key();
  RequestOptions ro;
  ro.headers = opts.headers;
  ro.headers.set("Upgrade", "websocket");
  ro.headers.set("Connection", "Upgrade");
  ro.headers.set("Sec-WebSocket-Key", key);
  ro.headers.set("Sec-WebSocket-Version", "13");
  if (!opts.protocols.empty()) {
    std::string offered;
    for (const std::string& p : opts.protocols) offered += (offered.empty() ? "" : ", ") + p;
    ro.headers.set("Sec-WebSocket-Protocol", offered);
  }
  if (opts.deflate.enabled) ro.headers.set("Sec-WebSocket-Extensions", detail::offer_deflate(opts.deflate));
  UpgradedConnection up;
  try {
    up = co_await upgrade(std::move(url), std::move(ro));
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
