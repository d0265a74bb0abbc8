/// \file
/// corio::http::ClientSession: an HTTP/1.1 and HTTP/2 client with a connection pool,
/// cookies, redirects and timeouts (aiohttp's ClientSession).
///
/// <!-- doc: body -->
///     corio::http::ClientSession session;
///     corio::http::ClientResponse r = co_await session.get("https://example.org/");
///     std::string page = co_await r.text();
///
///     corio::http::RequestOptions opts;
///     opts.json = nlohmann::json{{"name", "corio"}};
///     auto created = co_await session.post("http://localhost:8080/items", std::move(opts));
///
/// Make one session and share it: its pool keeps connections alive per
/// origin (aiohttp's advice too). Requests may run concurrently from many
/// tasks; ClientOptions::limit and limit_per_host bound the connections, a
/// request past them waits (fairly) for one to be free. The session must
/// outlive the requests running on it (not their responses: a response that
/// outlives it closes its connection instead of pooling it).
///
/// HTTPS goes through corio's TLS with verification on (the system's CAs, or
/// ClientOptions::ssl). Each request: the URL (ValueError if it is not an
/// absolute http(s) URL) plus params; the body from data, form or json; the
/// session's headers, then the request's (which win); the jar's cookies;
/// "Accept-Encoding: gzip, deflate" when auto_decompress. The request head
/// goes out in one write (with a small body, in the same one).
///
/// Redirects (allow_redirects): 301/302 turn a POST into a GET and 303 any
/// method but HEAD, dropping the body; 307/308 keep method and body. A
/// redirect to another origin (scheme, host or port) drops the caller's
/// secrets: Authorization, Cookie (the jar still gives the new origin its
/// own cookies), the sensitive_headers, and Proxy-Authorization unless the
/// next hop goes in plain http to a proxy (which reads it there): curl's
/// CVE-2022-27776. Beyond max_redirects: TooManyRedirects.
///
/// Defaults per session (ClientOptions: headers, timeout, base_url,
/// raise_for_status, retry, proxy), each overridden per request
/// (RequestOptions), as aiohttp's ClientSession.
///
/// Timeouts (ClientTimeout) raise corio::TimeoutError; errors are in
/// client_errors.hpp. A request on a pooled connection the server closed
/// meanwhile is retried once on a new connection when its method is
/// idempotent (as aiohttp and urllib3 do).
///
/// Suspends: a request until the response's head has arrived (waiting for a
/// connection permit, connecting, writing, reading); close() until the idle
/// connections are closed. Resumed by: the loop, or a release of a permit.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <corio/coro.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/http/client_response.hpp>
#include <corio/http/cookie_jar.hpp>
#include <corio/http/form_data.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/retry.hpp>
#include <corio/http/url.hpp>
#include <corio/http/websocket.hpp>
#include <corio/ssl.hpp>

namespace corio::http {

namespace detail {
class ConnectionPool;
struct Deadline;
struct Exchange;
struct PreparedRequest;
struct ProxyConfig;
struct Route;
struct TryOptions;
}

/// aiohttp's ClientTimeout; an empty field is no limit.
struct ClientTimeout {
  /// The whole request: connecting, sending, and reading the body to its end.
  std::optional<std::chrono::milliseconds> total = std::chrono::minutes(5);
  /// Getting a connection: waiting for a free one under the limits, then connecting.
  std::optional<std::chrono::milliseconds> connect;
  /// Connecting to the server, TLS handshake included.
  std::optional<std::chrono::milliseconds> sock_connect;
  /// Each read from the socket: how long the server may stay silent.
  std::optional<std::chrono::milliseconds> sock_read;
};

/// A session's defaults and limits.
struct ClientOptions {
  std::size_t limit = 100;         ///< connections in all (aiohttp's default); 0: no limit
  std::size_t limit_per_host = 0;  ///< per origin; 0: no limit

  /// An idle pooled connection is closed after this long (aiohttp's 15 s),
  /// by the pool's timer: the server sees the close on time even when no
  /// further request comes.
  std::chrono::milliseconds keepalive_timeout{15'000};
  ClientTimeout timeout;  ///< each request's, unless it gives its own
  Headers headers;  ///< sent with every request

  /// The TLS client context for https; by default SslContext::client()
  /// (the system's CAs, verification and host name check on).
  std::optional<SslContext> ssl;
  /// Ask for gzip and deflate (Accept-Encoding, unless given) and decode them.
  bool auto_decompress = true;
  /// raise_for_status() on every response, unless a request says otherwise.
  bool raise_for_status = false;
  Limits limits;  ///< the response head's (Limits::max_body is read()'s concern)

  /// HTTP/2 on https where the server offers it by ALPN (httpx's http2
  /// option, on here by default); false keeps every request on HTTP/1.1.
  /// Requests to one origin then share one connection, a stream each
  /// (ClientResponse::version() says {2, 0}); see "HTTP/2" in
  /// docs/http-client.md for what stays on HTTP/1.1.
  bool http2 = true;
  /// HTTP/2 on plain http from the first byte, without asking (h2c with
  /// prior knowledge, curl's --http2-prior-knowledge): only for servers
  /// known to speak it.
  bool http2_prior_knowledge = false;

  /// A relative URL given to a request is resolved against this one
  /// (aiohttp's base_url): base_url "http://api/v1/" and "users" is
  /// "http://api/v1/users". Absolute URLs are used as they are.
  std::optional<std::string> base_url;
  RetryPolicy retry;  ///< by default none (attempts = 1); see retry.hpp

  /// Every request through this proxy ("http://proxy:3128"): http URLs in
  /// absolute form, https ones through a CONNECT tunnel. Without it and with
  /// trust_env, HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case
  /// forms) say, read when the session is made (aiohttp's trust_env).
  std::optional<std::string> proxy;
  bool trust_env = false;  ///< whether the proxy environment variables are read
  Headers proxy_headers;   ///< sent to the proxy (Proxy-Authorization, say)
  /// Names of headers (of `headers`, or any request's) that a redirect to
  /// another origin drops, as it drops Cookie and Authorization: an API key
  /// in "X-Api-Key", say. Case does not matter.
  std::vector<std::string> sensitive_headers;
};

/// A JSON request body, serialised when assigned (so this header needs only
/// json_fwd): `opts.json = nlohmann::json{...};`
struct JsonBody {
  /// value serialized.
  JsonBody(const nlohmann::json& value);  // NOLINT(google-explicit-constructor): reads as assignment
  std::string text;  ///< the JSON text sent
};

/// What ClientSession::upgrade hands over after a 101: the answer's head
/// and the connection, the bytes after the head already in the reader.
struct UpgradedConnection {
  ResponseHead head;   ///< the 101's status line and headers
  StreamReader reader;  ///< the connection's reading side
  StreamWriter writer;  ///< the connection's writing side
};

/// One request's headers, query, body, and overrides of the session's defaults.
struct RequestOptions {
  Headers headers;  ///< added to the session's (replacing those of the same name)
  QueryParams params;                 ///< appended to the URL's query

  /// The body, one of: bytes (Content-Type application/octet-stream unless
  /// given), a form (application/x-www-form-urlencoded), JSON (application/json).
  std::optional<std::string> data;
  std::optional<QueryParams> form;  ///< a form body, urlencoded
  std::optional<JsonBody> json;     ///< a JSON body

  std::optional<FormData> multipart;  ///< multipart/form-data, files streamed (form_data.hpp)
  std::optional<ClientTimeout> timeout;  ///< instead of the session's
  std::optional<RetryPolicy> retry;      ///< instead of the session's

  /// Instead of the session's proxy (and the environment's); "" for none.
  std::optional<std::string> proxy;
  bool allow_redirects = true;     ///< whether redirects are followed
  std::size_t max_redirects = 10;  ///< followed at most; beyond: TooManyRedirects
  std::optional<bool> raise_for_status;  ///< instead of the session's
  /// Added to the session's sensitive_headers for this request.
  std::vector<std::string> sensitive_headers;
};

/// An HTTP client with a connection pool, cookies and defaults (aiohttp's ClientSession).
class ClientSession {
 public:
  explicit ClientSession(ClientOptions opts = {});  ///< no connection yet
  /// Not movable: running requests refer to it.
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;
  /// Closes the idle connections (without waiting for them).
  ~ClientSession();

  /// A method request to url (resolved against base_url); its response once its head came.
  Coro<ClientResponse> request(std::string method, std::string url, RequestOptions opts = {});
  Coro<ClientResponse> get(std::string url, RequestOptions opts = {});    ///< GET
  Coro<ClientResponse> post(std::string url, RequestOptions opts = {});   ///< POST
  Coro<ClientResponse> put(std::string url, RequestOptions opts = {});    ///< PUT
  Coro<ClientResponse> patch(std::string url, RequestOptions opts = {});  ///< PATCH
  Coro<ClientResponse> del(std::string url, RequestOptions opts = {});  ///< DELETE
  Coro<ClientResponse> head(std::string url, RequestOptions opts = {});     ///< HEAD
  Coro<ClientResponse> options(std::string url, RequestOptions opts = {});  ///< OPTIONS


  /// A WebSocket to url (ws://, wss://, or http(s)://): over HTTP/1.1 on a
  /// connection of its own, outside the pool and its limits, or as a stream
  /// of a pooled h2 connection (RFC 8441; WsOptions::http2 says when), in a
  /// CONNECT tunnel when the session's proxy (or WsOptions::proxy) applies,
  /// for ws:// too; either way the session's headers, cookies, TLS context
  /// and head limits; the handshake within the session's total timeout. WSServerHandshakeError
  /// unless the server switches as RFC 6455 says (websocket.hpp).
  Coro<WebSocket> ws_connect(std::string url, WsOptions opts = {});
  /// The same handshake for any protocol: a GET with opts's headers (which
  /// say "Connection: Upgrade" and "Upgrade: <protocol>") on a connection of
  /// its own (through a proxy as ws_connect goes); on a 101 the connection is the caller's, any other answer is
  /// ClientResponseError with its status (and the connection is closed).
  Coro<UpgradedConnection> upgrade(std::string url, RequestOptions opts = {});

  /// Closes the pooled connections and waits until they are closed; later
  /// requests throw ClientConnectionError. Idempotent.
  Coro<void> close();
  bool closed() const noexcept;  ///< whether close() was called

  CookieJar& cookie_jar() noexcept { return jar_; }  ///< the session's cookies
  const ClientOptions& client_options() const noexcept { return opts_; }  ///< as given

  /// Connections open (idle and in use), and of them idle, for monitoring.
  std::size_t open_connections() const noexcept;
  std::size_t idle_connections() const noexcept;  ///< pooled connections not in use

 private:
  Coro<ClientResponse> follow(detail::PreparedRequest req, detail::TryOptions opts);
  Coro<ClientResponse> with_retries(detail::PreparedRequest req, detail::TryOptions opts,
                                    RetryPolicy retry);
  Url resolve_url(std::string_view url) const;
  Coro<detail::Exchange> exchange(const detail::PreparedRequest& req,
                                  const detail::Deadline& deadline);
  Coro<detail::Exchange> exchange_once(const detail::PreparedRequest& req,
                                       const detail::Deadline& deadline, bool fresh);
  Coro<void> discard_body(ClientResponse& hop);
  // ws_connect over an h2 stream (ws_client.cpp); nullopt: go by HTTP/1.1.
  Coro<std::optional<WebSocket>> ws_over_h2(const detail::Route& route, const WsOptions& opts,
                                            RequestOptions& ro);
  Coro<UpgradedConnection> upgrade_to(detail::Route route, RequestOptions opts);  // upgrade(), routed
  ClientResponse respond(detail::Exchange ex, const detail::PreparedRequest& req,
                         const detail::Deadline& deadline, std::vector<Redirect> history);

  ClientOptions opts_;
  CookieJar jar_;
  std::shared_ptr<detail::ConnectionPool> pool_;
  std::shared_ptr<const detail::ProxyConfig> proxies_;  ///< the session's; null: none
};

}  // namespace corio::http
