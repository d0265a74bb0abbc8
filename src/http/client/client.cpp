// ClientSession (see client.hpp): a request's life from URL to response
// head, hop by hop through redirects; the body is client_body.cpp's.
#include <corio/http/client.hpp>

#include <coroutine>
#include <cstdlib>
#include <exception>

#include <corio/event_loop.hpp>
#include <corio/timeout.hpp>

#include "http/client/client_body.hpp"
#include "http/client/client_request.hpp"
#include "http/client/connection_pool.hpp"
#include "http/client/h2_client.hpp"
#include "http/client/proxy.hpp"

namespace corio::http {

namespace {

using detail::Deadline;
using detail::start_deadline;
using detail::Exchange;
using detail::PreparedRequest;

// A pooled connection the server had closed: the request may go again on a
// new one (client.hpp says when).
struct StaleConnection {};

// A redirect's own body is read (and the connection kept) when small.
constexpr std::size_t kRedirectBodyMax = 64 * 1024;

// A request that could not be prepared: its error, when it is awaited.
Coro<ClientResponse> rethrown(std::exception_ptr error) {
  co_await std::suspend_never{};  // a coroutine: nothing runs before the co_await
  std::rethrow_exception(error);
}

// A multipart body after its head; the writer's failures are the connection's.
Coro<void> write_form(StreamWriter& writer, const FormData& form, std::optional<double> deadline) {
  try {
    if (deadline) {
      co_await timeout_at(*deadline, form.write_to(writer));
    } else {
      co_await form.write_to(writer);
    }
  } catch (const std::system_error& e) {
    throw ClientConnectionError(std::string("cannot send the request: ") + e.what(), e.code());
  }
}

Coro<void> drain_within(StreamWriter& writer, std::optional<double> deadline) {
  try {
    if (deadline) {
      co_await timeout_at(*deadline, writer.drain());
    } else {
      co_await writer.drain();
    }
  } catch (const std::system_error& e) {
    throw ClientConnectionError(std::string("cannot send the request: ") + e.what(), e.code());
  }
}

// The final response head: 1xx interim responses (100 Continue, 103 Early
// Hints) are skipped; 101 is final.
Coro<ResponseHead> read_head(StreamReader& reader, const Limits& limits, const Deadline& d) {
  ResponseParser parser(limits);
  ResponseHead head;
  for (;;) {
    const std::size_t n = parser.parse(reader.buffered(), head);
    if (n > 0) {
      reader.consume(n);
      if (head.status >= 200 || head.status == 101) co_return head;
      parser.reset();
      head = ResponseHead{};
      continue;
    }
    if (co_await detail::fill_buffer(reader, d.for_read(get_running_loop().time())) == 0) {
      throw ClientConnectionError(reader.buffered().empty()
                                      ? "server disconnected without a response"
                                      : "server disconnected in the middle of the response head");
    }
  }
}

// The Content-Encoding's decoder, when the response has a body to decode.
std::optional<detail::Inflater> inflater_for(const ResponseHead& head, const PreparedRequest& req,
                                             bool has_body) {
  const std::optional<std::string_view> encoding = head.headers.get("Content-Encoding");
  if (!req.auto_decompress || !has_body || !encoding || !detail::Inflater::handles(*encoding)) {
    return std::nullopt;
  }
  return detail::Inflater::for_encoding(*encoding);
}

// The request on an HTTP/2 stream until its head, and the body made: the
// stream rides to respond() inside it. Lost with its connection before the
// head, on a connection that had served before: stale, as on HTTP/1.1.
// References, and the cookies taken here: exchange_once's frame, which
// HTTP/1.1 requests pay for, holds no temporaries of this call.
Coro<Exchange> exchange_h2(std::shared_ptr<detail::H2ClientStream>& s, const PreparedRequest& req,
                           CookieJar& jar, const Deadline& deadline) {
  s->send(req, jar.filter_cookies(req.url));
  try {
    ResponseHead head = co_await s->head(deadline);
    const bool has_body = req.method != "HEAD" && head.status != 204 && head.status != 304;
    std::optional<detail::Inflater> inflater = inflater_for(head, req, has_body);
    std::unique_ptr<detail::ResponseBody> body = detail::h2_body(std::move(s), std::move(inflater), deadline);
    co_return Exchange{detail::Lease(), std::move(head), std::move(body)};
  } catch (const ClientConnectionError&) {
    if (!s || !s->reused() || !detail::idempotent(req.method)) throw;
  }
  throw StaleConnection{};
}

// The hop after a redirect: req rewritten for next and its proxy. Not in
// follow(): a temporary proxy Url there would grow its coroutine frame.
void redirect(PreparedRequest& req, int status, Url next, const detail::ProxyConfig* proxies,
              const std::optional<std::string>& proxy) {
  std::optional<Url> via = detail::choose_proxy(proxies, proxy, next);
  detail::follow_redirect(req, status, std::move(next), std::move(via));
}

}  // namespace

ClientSession::ClientSession(ClientOptions opts) : opts_(std::move(opts)) {
  detail::PoolOptions p;
  p.limit = opts_.limit;
  p.limit_per_host = opts_.limit_per_host;
  p.keepalive_timeout = opts_.keepalive_timeout;
  p.ssl = opts_.ssl;
  p.http2 = opts_.http2;
  p.http2_prior_knowledge = opts_.http2_prior_knowledge;
  pool_ = std::make_shared<detail::ConnectionPool>(std::move(p));
  detail::ProxyConfig proxies = detail::ProxyConfig::from(opts_, [](const char* name) { return std::getenv(name); });
  if (!proxies.empty()) proxies_ = std::make_shared<const detail::ProxyConfig>(std::move(proxies));
}

ClientSession::~ClientSession() { pool_->close(); }

bool ClientSession::closed() const noexcept { return pool_->closed(); }
std::size_t ClientSession::open_connections() const noexcept { return pool_->open_connections(); }
std::size_t ClientSession::idle_connections() const noexcept { return pool_->idle_connections(); }

Coro<void> ClientSession::close() {
  std::vector<StreamWriter> closing = pool_->close();
  for (StreamWriter& w : closing) {
    try {
      co_await w.wait_closed();
    } catch (const std::exception&) {
      // The connection failed as it closed: closed all the same.
    }
  }
}

// Not a coroutine: a request without retries runs in one frame, follow's (the
// frames of both would be two allocations past the frame pool's largest class).
// Preparing is pure, and its errors are thrown where the request is awaited,
// as they would be in a coroutine.
Coro<ClientResponse> ClientSession::request(std::string method, std::string url,
                                            RequestOptions opts) {
  try {
    PreparedRequest req = detail::prepare_request(std::move(method), resolve_url(url), opts_, opts);
    detail::TryOptions tries = detail::try_options(opts_, opts);
    const RetryPolicy& retry = opts.retry ? *opts.retry : opts_.retry;
    if (retry.attempts > 1 && retry.retries_method(req.method)) {
      return with_retries(std::move(req), std::move(tries), retry);
    }
    return follow(std::move(req), std::move(tries));
  } catch (...) {
    return rethrown(std::current_exception());
  }
}

Url ClientSession::resolve_url(std::string_view url) const {
  if (!opts_.base_url || url.find("://") != std::string_view::npos) return Url::parse(url);
  return Url::parse(*opts_.base_url).resolve(url);
}

// One try: the request and its redirects, each hop through its proxy.
Coro<ClientResponse> ClientSession::follow(PreparedRequest req, detail::TryOptions opts) {
  if (pool_->closed()) throw ClientConnectionError("the session is closed");
  const Deadline deadline = start_deadline(opts.timeout);
  std::vector<Redirect> history;
  req.proxy = detail::choose_proxy(proxies_.get(), opts.proxy, req.url);
  for (;;) {
    if (req.proxy) req.proxy_headers = opts_.proxy_headers;
    Exchange ex = co_await exchange(req, deadline);
    jar_.update_cookies(ex.head.headers.get_all("Set-Cookie"), req.url);
    const int status = ex.head.status;
    const std::optional<std::string_view> location = ex.head.headers.get("Location");
    if (!opts.allow_redirects || !detail::is_redirect(status) || !location) {
      ClientResponse r = respond(std::move(ex), req, deadline, std::move(history));
      if (opts.raise_for_status) r.raise_for_status();
      co_return r;
    }
    history.push_back(Redirect{status, req.url, std::string(*location)});
    Url next = req.url.resolve(history.back().location);
    {
      ClientResponse hop = respond(std::move(ex), req, deadline, {});
      if (history.size() > opts.max_redirects) {
        throw TooManyRedirects("more than " + std::to_string(opts.max_redirects) +
                               " redirects, the last to " + next.to_string());
      }
      co_await discard_body(hop);
    }
    redirect(req, status, std::move(next), proxies_.get(), opts.proxy);
  }
}

Coro<void> ClientSession::discard_body(ClientResponse& hop) {
  try {
    co_await hop.read(kRedirectBodyMax);
  } catch (const ClientError&) {
    // Too long or broken: the connection is closed, the redirect followed anyway.
  } catch (const ParseError&) {
  }
}

// A stream the server refused unprocessed (h2_client.hpp's H2Refused) is
// sent again whatever its method, on any connection that may take it (a
// GOAWAY's connection takes none); a stale connection's request only when
// idempotent (exchange_once decides), on a fresh one.
Coro<Exchange> ClientSession::exchange(const PreparedRequest& req, const Deadline& deadline) {
  bool fresh = true;
  try {
    co_return co_await exchange_once(req, deadline, false);
  } catch (const StaleConnection&) {
    // Retried below (no co_await in a handler).
  } catch (const detail::H2Refused&) {
    fresh = false;
  }
  try {
    co_return co_await exchange_once(req, deadline, fresh);
  } catch (const detail::H2Refused&) {
  }
  throw ClientConnectionError("the server refused the HTTP/2 stream on a new connection too");
}

Coro<Exchange> ClientSession::exchange_once(const PreparedRequest& req, const Deadline& deadline,
                                            bool fresh) {
  detail::Lease lease;
  const std::optional<double> connect_by = deadline.for_connect(get_running_loop().time());
  // Named, and once: a Route temporary in each co_await below would keep two Routes
  // in this frame, past the frame pool's largest class (a malloc per request).
  std::shared_ptr<detail::H2ClientStream> stream;  // set when the request goes on HTTP/2
  Coro<detail::Lease> acquiring =
      pool_->acquire(detail::route_for(req), fresh, deadline.sock_connect, &stream);
  if (connect_by) {
    lease = co_await timeout_at(*connect_by, std::move(acquiring));
  } else {
    lease = co_await std::move(acquiring);
  }
  if (stream) co_return co_await exchange_h2(stream, req, jar_, deadline);
  try {
    lease.writer.write(detail::serialize_request(req, jar_.filter_cookies(req.url)));
    if (req.body && req.body->size() > detail::kInlineBodyMax) lease.writer.write(*req.body);
    if (req.form) co_await write_form(lease.writer, *req.form, deadline.total_at);
    co_await drain_within(lease.writer, deadline.total_at);
    ResponseHead head = co_await read_head(lease.reader, opts_.limits, deadline);
    co_return Exchange{std::move(lease), std::move(head), nullptr};
  } catch (const ClientConnectionError&) {
    if (!lease.reused || !lease.reader.buffered().empty() || !detail::idempotent(req.method)) throw;
  }
  throw StaleConnection{};
}

ClientResponse ClientSession::respond(Exchange ex, const PreparedRequest& req,
                                      const Deadline& deadline, std::vector<Redirect> history) {
  if (ex.h2_body) {
    return ClientResponse(std::move(ex.head), req.method, req.url, std::move(history), std::move(ex.h2_body));
  }
  const BodyFraming framing = response_framing(ex.head, req.method);
  const bool reuse =
      keep_alive(ex.head.version_minor, ex.head.headers) && framing.kind != BodyFraming::Kind::until_close;
  std::optional<detail::Inflater> inflater =
      inflater_for(ex.head, req, framing.kind != BodyFraming::Kind::none);
  auto body = std::make_unique<detail::Http1Body>(std::move(ex.lease), framing, opts_.limits,
                                                     reuse, std::move(inflater), deadline);
  return ClientResponse(std::move(ex.head), req.method, req.url, std::move(history),
                        std::move(body));
}

Coro<ClientResponse> ClientSession::get(std::string url, RequestOptions opts) {
  return request("GET", std::move(url), std::move(opts));
}
Coro<ClientResponse> ClientSession::post(std::string url, RequestOptions opts) {
  return request("POST", std::move(url), std::move(opts));
}
Coro<ClientResponse> ClientSession::put(std::string url, RequestOptions opts) {
  return request("PUT", std::move(url), std::move(opts));
}
Coro<ClientResponse> ClientSession::patch(std::string url, RequestOptions opts) {
  return request("PATCH", std::move(url), std::move(opts));
}
Coro<ClientResponse> ClientSession::del(std::string url, RequestOptions opts) {
  return request("DELETE", std::move(url), std::move(opts));
}
Coro<ClientResponse> ClientSession::head(std::string url, RequestOptions opts) {
  return request("HEAD", std::move(url), std::move(opts));
}
Coro<ClientResponse> ClientSession::options(std::string url, RequestOptions opts) {
  return request("OPTIONS", std::move(url), std::move(opts));
}

}  // namespace corio::http
