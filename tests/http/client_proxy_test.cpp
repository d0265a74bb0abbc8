// The client through proxies: a tiny forwarding proxy in this process (a
// corio stream server) takes absolute-form http requests and CONNECT
// tunnels for https; the choice of proxy from options and from the
// environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) as pure functions.
#include <corio/http/client.hpp>
#include <corio/errors.hpp>
#include <corio/http/tunnel.hpp>

#include "http/client_support.hpp"
#include "http/client/proxy.hpp"
#include "http/server_support.hpp"
#include "http/ws_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::RequestOptions;
using corio::http::Url;
using corio::http::detail::bypasses_proxy;
using corio::http::detail::ProxyConfig;

struct ProxyLog {
  std::vector<std::string> lines;     // request lines, as received
  std::vector<std::string> auth;      // their Proxy-Authorization, "-" if none
  int refuse_connect = 0;             // a status to answer CONNECT with; 0: tunnel
};

Coro<void> pipe(StreamReader from, StreamWriter to) {
  try {
    for (;;) {
      const std::string piece = co_await from.read(64 * 1024);
      if (piece.empty()) break;
      to.write(piece);
      co_await to.drain();
    }
  } catch (const std::system_error&) {
    // Either side went away: the other is closed below.
  }
  to.close();
}

std::string field(std::string_view head, std::string_view name) {
  const std::size_t at = head.find("\r\n" + std::string(name) + ": ");
  if (at == std::string_view::npos) return "-";
  const std::size_t start = at + name.size() + 4;
  return std::string(head.substr(start, head.find("\r\n", start) - start));
}

// A forwarding proxy: CONNECT host:port tunnels, anything else goes to the
// origin its absolute-form target names (the origin takes that form too).
Coro<void> proxy_connection(StreamReader reader, StreamWriter writer, ProxyLog* log) {
  const std::string head = co_await reader.readuntil("\r\n\r\n");
  const std::string line = head.substr(0, head.find("\r\n"));
  log->lines.push_back(line);
  log->auth.push_back(field(head, "Proxy-Authorization"));
  const std::string target = line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
  std::string host;
  std::uint16_t port = 0;
  const bool tunnel = line.starts_with("CONNECT ");
  if (tunnel) {
    host = target.substr(0, target.rfind(':'));
    port = static_cast<std::uint16_t>(std::stoi(target.substr(target.rfind(':') + 1)));
  } else {
    const Url u = Url::parse(target);
    host = u.host;
    port = u.port;
  }
  if (tunnel && log->refuse_connect != 0) {
    writer.write("HTTP/1.1 " + std::to_string(log->refuse_connect) + " Refused\r\nContent-Length: 0\r\n\r\n");
    co_await writer.drain();
    writer.close();
    co_return;
  }
  auto [up_reader, up_writer] = co_await corio::open_connection(host, port);
  if (tunnel) {
    writer.write("HTTP/1.1 200 Connection established\r\n\r\n");
  } else {
    up_writer.write(head);
  }
  corio::Task<void> upstream = corio::create_task(pipe(reader, up_writer));
  co_await pipe(up_reader, writer);
  co_await upstream;
}

// The proxy itself over TLS when ssl is a server context (an https proxy).
Coro<corio::Server> start_proxy(ProxyLog* log, std::optional<corio::SslContext> ssl = std::nullopt) {
  corio::ClientConnected handler = [log](StreamReader r, StreamWriter w) {
    return proxy_connection(std::move(r), std::move(w), log);
  };
  corio::ServerOptions so;
  so.ssl = std::move(ssl);
  co_return co_await corio::start_server(handler, "127.0.0.1", 0, std::move(so));
}

Coro<Response> whoami(Request& req) {
  co_return Response::text(req.target() + " host=" + std::string(req.headers().get_or("Host", "")) +
                           " proxy-auth=" + std::string(req.headers().get_or("Proxy-Authorization", "-")));
}

std::string at(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// server answering /who, started on 127.0.0.1.
Coro<void> start_who(Server& server) {
  server.get("/who", whoami);
  co_await server.start("127.0.0.1", 0);
}

// The origin (serving /who) started, and a proxy logging into log.
Coro<corio::Server> start_origin_and_proxy(Server& origin, ProxyLog* log) {
  co_await start_who(origin);
  co_return co_await start_proxy(log);
}

Coro<void> http_proxy_body() {
  Server origin(quiet());
  ProxyLog log;
  corio::Server proxy = co_await start_origin_and_proxy(origin, &log);
  ClientOptions co;
  co.proxy = "http://" + at(proxy.port());
  co.proxy_headers.add("Proxy-Authorization", "Basic dTpw");
  ClientSession s(co);
  const std::string url = "http://" + at(origin.port()) + "/who?x=1";
  ClientResponse r = co_await s.get(url);
  EXPECT_EQ(co_await r.text(), "/who?x=1 host=" + at(origin.port()) + " proxy-auth=Basic dTpw");
  CO_ASSERT(log.lines.size() == 1u);
  EXPECT_EQ(log.lines[0], "GET " + url + " HTTP/1.1") << "absolute form to the proxy";

  RequestOptions direct;
  direct.proxy = "";
  r = co_await s.get(url, std::move(direct));
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(log.lines.size(), 1u) << "proxy \"\": straight to the origin";
  co_await s.close();
  proxy.close();
  co_await origin.shutdown(1s);
}

TEST(ClientProxy, PlainHttpGoesInAbsoluteFormWithProxyHeaders) { run_bounded(http_proxy_body()); }

// The test certificate (make_certificates) in dir, for a server.
corio::SslContext server_context(const fs::path& dir) {
  return corio::SslContext::server((dir / "server.pem").string(), (dir / "server.key").string());
}

ServerOptions quiet_tls(const fs::path& dir) {
  ServerOptions so = quiet();
  so.ssl = server_context(dir);
  return so;
}

// A session's options: trusting the test CA in dir, through proxy.
ClientOptions trusting(const fs::path& dir, const std::string& proxy) {
  ClientOptions co;
  co.ssl = corio::SslContext::client();
  co.ssl->load_verify_locations((dir / "ca.pem").string());
  co.proxy = proxy;
  return co;
}

// The session and the proxy closed, then both origins shut down.
Coro<void> close_all(ClientSession& s, corio::Server& proxy, Server& one, Server& two) {
  co_await s.close();
  proxy.close();
  co_await one.shutdown(1s);
  co_await two.shutdown(1s);
}

// Runs body with the test certificates in a directory of its own.
void with_certificates(Coro<void> (*body)(const TempDir*)) {
  TempDir certs;
  if (!make_certificates(certs.path())) GTEST_SKIP() << "openssl unavailable";
  run_bounded(body(&certs), 30s);
}

Coro<void> tunnel_body(const TempDir* certs) {
  const fs::path dir = certs->path();
  Server origin(quiet_tls(dir));
  ProxyLog log;
  corio::Server proxy = co_await start_origin_and_proxy(origin, &log);
  ClientOptions co = trusting(dir, "http://" + at(proxy.port()));
  co.proxy_headers.add("Proxy-Authorization", "Basic dTpw");
  ClientSession s(co);
  const std::string url = "https://" + at(origin.port()) + "/who";
  for (int i = 0; i < 2; ++i) {
    ClientResponse r = co_await s.get(url);
    EXPECT_EQ(co_await r.text(), "/who host=" + at(origin.port()) + " proxy-auth=-")
        << "the proxy's headers stay with the CONNECT, out of the tunnel";
    EXPECT_EQ(r.version().major, 2) << "h2 by ALPN inside the tunnel";
  }
  CO_ASSERT(log.lines.size() == 1u);  // the tunnel is pooled and reused
  EXPECT_EQ(log.lines[0], "CONNECT " + at(origin.port()) + " HTTP/1.1");
  EXPECT_EQ(log.auth[0], "Basic dTpw");

  log.refuse_connect = 407;
  ClientSession other(co);
  int status = 0;
  try {
    co_await other.get(url);
  } catch (const corio::http::ClientHttpProxyError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 407) << "the proxy's refusal, with its status";
  co_await s.close();
  co_await other.close();
  proxy.close();
  co_await origin.shutdown(1s);
}

TEST(ClientProxy, HttpsGoesThroughAConnectTunnel) { with_certificates(tunnel_body); }

// An https proxy: the CONNECT itself over TLS, then TLS with the origin
// inside that; plain http requests go to it in absolute form over TLS.
Coro<void> https_proxy_body(const TempDir* certs) {
  const fs::path dir = certs->path();
  Server origin(quiet_tls(dir));
  co_await start_who(origin);
  Server plain(quiet());
  co_await start_who(plain);
  ProxyLog log;
  corio::Server proxy = co_await start_proxy(&log, server_context(dir));
  ClientOptions co = trusting(dir, "https://" + at(proxy.port()));
  ClientSession s(co);
  ClientResponse r = co_await s.get("https://" + at(origin.port()) + "/who");
  EXPECT_EQ(co_await r.text(), "/who host=" + at(origin.port()) + " proxy-auth=-");
  const std::string url = "http://" + at(plain.port()) + "/who";
  r = co_await s.get(url);
  EXPECT_EQ(co_await r.text(), "/who host=" + at(plain.port()) + " proxy-auth=-");
  CO_ASSERT(log.lines.size() == 2u);
  EXPECT_EQ(log.lines[0], "CONNECT " + at(origin.port()) + " HTTP/1.1");
  EXPECT_EQ(log.lines[1], "GET " + url + " HTTP/1.1");
  co_await close_all(s, proxy, origin, plain);
}

TEST(ClientProxy, AnHttpsProxyCarriesTunnelsAndPlainRequests) {
  with_certificates(https_proxy_body);
}

// A redirect answering /go with a 302 to its "to" parameter.
Coro<Response> go(Request& req) {
  Response r(302);
  r.headers.set("Location", std::string(req.query().get("to", "/who")));
  co_return r;
}

// The caller's Proxy-Authorization across a redirect to another origin:
// kept when the next hop goes to the proxy in absolute form (the proxy reads
// it; this test proxy passes it on, so the origin shows it), dropped when it
// goes into a tunnel, where only the origin would read it.
Coro<void> redirect_through_proxy_body(const TempDir* certs) {
  const fs::path dir = certs->path();
  Server tls_origin(quiet_tls(dir));
  co_await start_who(tls_origin);
  Server origin(quiet());
  origin.get("/go", go);
  ProxyLog log;
  corio::Server proxy = co_await start_origin_and_proxy(origin, &log);
  ClientSession s(trusting(dir, "http://" + at(proxy.port())));
  const std::string plain = "localhost:" + std::to_string(origin.port());
  const std::string tls = at(tls_origin.port());
  const std::pair<std::string, std::string> hops[] = {
      {"http://" + plain + "/who", "/who host=" + plain + " proxy-auth=Basic cHg="},
      {"https://" + tls + "/who", "/who host=" + tls + " proxy-auth=-"}};
  for (const auto& [to, seen] : hops) {
    RequestOptions o;
    o.headers.add("Proxy-Authorization", "Basic cHg=");
    ClientResponse r = co_await s.get(
        "http://" + at(origin.port()) + "/go?to=" + corio::http::percent_encode(to), std::move(o));
    EXPECT_EQ(co_await r.text(), seen);
  }
  co_await close_all(s, proxy, origin, tls_origin);
}

TEST(ClientProxy, ARedirectKeepsProxyAuthorizationForTheProxyOnly) {
  with_certificates(redirect_through_proxy_body);
}

// The CONNECTs a session with three tries (407 among its statuses) sends before giving up on a
// proxy refusing with status, and the status it threw.
Coro<void> refused_tries(int status, std::size_t* tries, int* thrown) {
  ProxyLog log;
  log.refuse_connect = status;
  corio::Server proxy = co_await start_proxy(&log);
  ClientOptions co;
  co.proxy = "http://" + at(proxy.port());
  co.retry.attempts = 3;
  co.retry.backoff = 1ms;
  co.retry.statuses.push_back(407);  // listed or not, a 407 is not retried
  ClientSession s(co);
  try {
    // Never reached: the proxy refuses before connecting anywhere.
    co_await s.get("https://127.0.0.1:9/");
  } catch (const corio::http::ClientHttpProxyError& e) {
    *thrown = e.status();
  }
  *tries = log.lines.size();
  co_await s.close();
  proxy.close();
}

TEST(ClientProxy, RetriesAProxy503ButNeverA407) {
  std::size_t tries = 0;
  int thrown = 0;
  run_bounded(refused_tries(503, &tries, &thrown));
  EXPECT_EQ(thrown, 503);
  EXPECT_EQ(tries, 3u) << "a 503 from the proxy is retried as a 503 answer is";
  run_bounded(refused_tries(407, &tries, &thrown));
  EXPECT_EQ(thrown, 407);
  EXPECT_EQ(tries, 1u) << "the same credentials would be refused again";
}

// A WebSocket through the proxy: the Upgrade in a CONNECT tunnel, ws://
// too (a proxy forwarding absolute-form requests would not pass it on),
// the session's proxy headers on the CONNECT only; WsOptions::proxy ""
// goes direct.
Coro<void> ws_tunnel_body(ProxyLog* log, std::string* echoed, std::string* direct) {
  corio_ws_test::EchoServer origin{corio::http::WsOptions{}};
  co_await origin.server.start("127.0.0.1", 0);
  corio::Server proxy = co_await start_proxy(log);
  ClientOptions co;
  co.proxy = "http://" + at(proxy.port());
  co.proxy_headers.add("Proxy-Authorization", "Basic dTpw");
  ClientSession s(co);
  const std::string url = corio_ws_test::ws_url(origin.server.port());
  corio::http::WebSocket ws = co_await s.ws_connect(url);
  co_await ws.send_str("through");
  std::optional<corio::http::WsMessage> back = co_await ws.receive();
  *echoed = back ? back->data : "none";
  co_await ws.close();
  corio::http::WsOptions none;
  none.proxy = "";
  corio::http::WebSocket other = co_await s.ws_connect(url, none);
  co_await other.send_str("direct");
  back = co_await other.receive();
  *direct = back ? back->data : "none";
  co_await other.close();
  co_await s.close();
  proxy.close();
  co_await origin.server.shutdown(1s);
}

TEST(ClientProxy, AWebSocketGoesThroughAConnectTunnel) {
  ProxyLog log;
  std::string echoed, direct;
  run_bounded(ws_tunnel_body(&log, &echoed, &direct));
  EXPECT_EQ(echoed, "through");
  EXPECT_EQ(direct, "direct");
  ASSERT_EQ(log.lines.size(), 1u) << "the second WebSocket went direct";
  EXPECT_TRUE(log.lines[0].starts_with("CONNECT 127.0.0.1:")) << log.lines[0];
  EXPECT_EQ(log.auth[0], "Basic dTpw");
}

// wss:// through the tunnel, over HTTP/1.1 and over h2 (ALPN inside the
// tunnel). The tunnel's h2 connection is pooled as a request's is: a
// second WebSocket over h2 is a stream of it, not another CONNECT.
struct VersionedEcho {
  std::vector<int> majors;  // each WebSocket request's HTTP version
  corio_ws_test::Seen seen;
};

Coro<Response> versioned_echo(Request& req, VersionedEcho& v) {
  v.majors.push_back(req.version().major);
  return corio_ws_test::echo(req, corio::http::WsOptions{}, v.seen);
}

Coro<std::string> echo_once(ClientSession& s, const std::string& url, std::optional<bool> http2) {
  corio::http::WsOptions wo;
  wo.http2 = http2;
  corio::http::WebSocket ws = co_await s.ws_connect(url, wo);
  co_await ws.send_str("through");
  const std::optional<corio::http::WsMessage> back = co_await ws.receive();
  co_await ws.close();
  co_return back ? back->data : "none";
}

Coro<void> wss_tunnel_body(const TempDir* certs) {
  const fs::path dir = certs->path();
  VersionedEcho v;
  Server origin(quiet_tls(dir));
  origin.get("/ws", [&v](Request& r) { return versioned_echo(r, v); });
  co_await origin.start("127.0.0.1", 0);
  ProxyLog log;
  corio::Server proxy = co_await start_proxy(&log);
  ClientSession s(trusting(dir, "http://" + at(proxy.port())));
  const std::string url = "wss://" + at(origin.port()) + "/ws";
  EXPECT_EQ(co_await echo_once(s, url, false), "through");
  EXPECT_EQ(co_await echo_once(s, url, true), "through");
  EXPECT_EQ(co_await echo_once(s, url, true), "through");
  EXPECT_EQ(v.majors, (std::vector<int>{1, 2, 2}));
  EXPECT_EQ(log.lines.size(), 2u) << "one tunnel for the Upgrade, one for the pooled h2 connection";
  for (const std::string& line : log.lines) EXPECT_EQ(line, "CONNECT " + at(origin.port()) + " HTTP/1.1");
  co_await s.close();
  proxy.close();
  co_await origin.shutdown(1s);
}

TEST(ClientProxy, AWssWebSocketGoesThroughTheTunnelOverHttp11AndH2) {
  with_certificates(wss_tunnel_body);
}

std::function<const char*(const char*)> env(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(ProxyConfig, FromOptionsAndTheEnvironment) {
  const auto vars = env({{"HTTP_PROXY", "proxy:3128"},
                         {"https_proxy", "http://secure:8080"},
                         {"NO_PROXY", "localhost, .internal.example,10.0.0.1,api.example:8443"}});
  ClientOptions opts;
  EXPECT_TRUE(ProxyConfig::from(opts, vars).empty()) << "the environment only with trust_env";
  opts.trust_env = true;
  const ProxyConfig c = ProxyConfig::from(opts, vars);
  ASSERT_TRUE(c.http && c.https);
  EXPECT_EQ(c.http->to_string(), "http://proxy:3128/") << "a bare host:port is http";
  EXPECT_EQ(c.https->to_string(), "http://secure:8080/");
  EXPECT_EQ(c.for_url(Url::parse("http://example.org/"))->host, "proxy");
  EXPECT_EQ(c.for_url(Url::parse("https://example.org/"))->host, "secure");
  EXPECT_FALSE(c.for_url(Url::parse("http://localhost:8000/")));
  EXPECT_FALSE(c.for_url(Url::parse("http://db.internal.example/")));
  EXPECT_FALSE(c.for_url(Url::parse("http://internal.example/")));
  EXPECT_TRUE(c.for_url(Url::parse("http://notinternal.example/")));
  EXPECT_FALSE(c.for_url(Url::parse("http://10.0.0.1/")));
  EXPECT_FALSE(c.for_url(Url::parse("https://api.example:8443/")));
  EXPECT_TRUE(c.for_url(Url::parse("https://api.example/"))) << "another port";

  opts.proxy = "http://explicit:1";
  const ProxyConfig e = ProxyConfig::from(opts, vars);
  EXPECT_EQ(e.for_url(Url::parse("https://localhost/"))->host, "explicit")
      << "an explicit proxy wins over the environment, NO_PROXY included";
  opts.proxy = "http://user:pw@explicit:1";
  EXPECT_THROW(ProxyConfig::from(opts, vars), corio::ValueError) << "credentials go in proxy_headers";
}

TEST(ProxyConfig, NoProxyRules) {
  EXPECT_TRUE(bypasses_proxy({"*"}, Url::parse("http://any.example/")));
  EXPECT_TRUE(bypasses_proxy({"EXAMPLE.org"}, Url::parse("http://www.example.org/")));
  EXPECT_FALSE(bypasses_proxy({"example.org"}, Url::parse("http://badexample.org/")));
  EXPECT_TRUE(bypasses_proxy({"[::1]"}, Url::parse("http://[::1]:80/")));
  EXPECT_TRUE(bypasses_proxy({"::1"}, Url::parse("http://[::1]/")));
  EXPECT_FALSE(bypasses_proxy({}, Url::parse("http://example.org/")));
}

Coro<void> trust_env_body() {
  Server origin(quiet());
  ProxyLog log;
  corio::Server proxy = co_await start_origin_and_proxy(origin, &log);
  ::setenv("HTTP_PROXY", ("http://" + at(proxy.port())).c_str(), 1);
  ::setenv("NO_PROXY", "localhost", 1);
  ClientOptions co;
  co.trust_env = true;
  ClientSession s(co);
  ::unsetenv("HTTP_PROXY");
  ::unsetenv("NO_PROXY");
  ClientResponse r = co_await s.get("http://" + at(origin.port()) + "/who");
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(log.lines.size(), 1u) << "through the proxy HTTP_PROXY named";
  r = co_await s.get("http://localhost:" + std::to_string(origin.port()) + "/who");
  EXPECT_EQ(log.lines.size(), 1u) << "NO_PROXY: localhost direct";
  co_await s.close();
  proxy.close();
  co_await origin.shutdown(1s);
}

TEST(ClientProxy, TrustEnvReadsTheProxyVariables) { run_bounded(trust_env_body()); }

}  // namespace
}  // namespace corio_http_test
