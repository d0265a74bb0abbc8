// The client's retry policy against a corio server on loopback (statuses,
// Retry-After, idempotent methods only, connection errors, timeouts), its
// backoff arithmetic, and the per-session defaults (base_url, headers,
// raise_for_status) with their per-request overrides.
#include <corio/http/client.hpp>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientResponseError;
using corio::http::ClientSession;
using corio::http::RequestOptions;
using corio::http::RetryPolicy;
using std::chrono::milliseconds;

TEST(RetryPolicy, BackoffDoublesUpToTheCapWithJitterBelowIt) {
  RetryPolicy p;
  p.backoff = milliseconds(100);
  p.max_backoff = milliseconds(1000);
  p.jitter = 0.5;
  EXPECT_EQ(p.delay(1, 0.0), milliseconds(100));
  EXPECT_EQ(p.delay(2, 0.0), milliseconds(200));
  EXPECT_EQ(p.delay(3, 0.0), milliseconds(400));
  EXPECT_EQ(p.delay(5, 0.0), milliseconds(1000)) << "capped";
  EXPECT_EQ(p.delay(200, 0.0), milliseconds(1000)) << "no overflow";
  EXPECT_EQ(p.delay(2, 0.999), milliseconds(100)) << "jitter takes off at most half";
  p.jitter = 0;
  EXPECT_EQ(p.delay(2, 0.999), milliseconds(200));
  EXPECT_TRUE(p.retries_method("GET"));
  EXPECT_TRUE(p.retries_method("PUT"));
  EXPECT_FALSE(p.retries_method("POST"));
  EXPECT_FALSE(p.retries_method("PATCH"));
  EXPECT_TRUE(p.retries_status(503));
  EXPECT_FALSE(p.retries_status(501));
}

TEST(RetryPolicy, RetryAfterInSecondsOrAsAnHttpDate) {
  using corio::http::parse_retry_after;
  const double now = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse_retry_after("120", now), milliseconds(120'000));
  EXPECT_EQ(parse_retry_after("0", now), milliseconds(0));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), milliseconds(10'000));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now), milliseconds(0)) << "past";
  EXPECT_EQ(parse_retry_after("-1", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
}

// The origin: /flaky fails `failures` times with `status`, then answers.
struct Origin {
  Origin(int failures = 0, int status = 503, std::string retry_after = {})
      : failures(failures), status(status), retry_after(std::move(retry_after)) {}
  int failures;
  int status;
  std::string retry_after;
  int calls = 0;
};

Coro<Response> flaky(Request& req, Origin* o) {
  ++o->calls;
  if (o->calls <= o->failures) {
    Response r = Response::text("try later", o->status);
    if (!o->retry_after.empty()) r.headers.set("Retry-After", o->retry_after);
    co_return r;
  }
  co_return Response::text(req.method() + " ok after " + std::to_string(o->calls));
}

Coro<Response> slow_first(Request&, Origin* o) {
  if (++o->calls == 1) co_await corio::sleep(5s);
  co_return Response::text("fast now");
}

RetryPolicy quick(std::size_t attempts) {
  RetryPolicy p;
  p.attempts = attempts;
  p.backoff = milliseconds(1);
  return p;
}

Coro<void> statuses_body() {
  Origin o;
  Server server(quiet());
  server.route("GET", "/flaky", [&o](Request& r) { return flaky(r, &o); });
  server.route("POST", "/flaky", [&o](Request& r) { return flaky(r, &o); });
  co_await server.start("127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/flaky";
  ClientOptions co;
  co.retry = quick(3);
  ClientSession s(co);

  o = Origin(2, 503);
  ClientResponse r = co_await s.get(url);
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(co_await r.text(), "GET ok after 3");

  o = Origin(5, 502);
  r = co_await s.get(url);
  EXPECT_EQ(r.status(), 502) << "the last try's answer";
  EXPECT_EQ(o.calls, 3);

  o = Origin(1, 503);
  r = co_await s.post(url);
  EXPECT_EQ(r.status(), 503) << "POST is not idempotent: not repeated";
  EXPECT_EQ(o.calls, 1);

  o = Origin(1, 503);
  RequestOptions post_too;
  post_too.retry = quick(2);
  post_too.retry->methods.push_back("POST");
  r = co_await s.post(url, std::move(post_too));
  EXPECT_EQ(r.status(), 200) << "a request's own policy may allow it";

  o = Origin(1, 404);
  r = co_await s.get(url);
  EXPECT_EQ(r.status(), 404) << "not a status to retry";
  EXPECT_EQ(o.calls, 1);

  o = Origin(1, 429, "0");
  r = co_await s.get(url);
  EXPECT_EQ(r.status(), 200) << "Retry-After: 0 waited for, then retried";

  o = Origin(1, 429, "3600");
  r = co_await s.get(url);
  EXPECT_EQ(r.status(), 429) << "a Retry-After past max_retry_after: the answer as it is";
  EXPECT_EQ(o.calls, 1);

  o = Origin(1, 503);
  RequestOptions once;
  once.retry = RetryPolicy{};
  r = co_await s.get(url, std::move(once));
  EXPECT_EQ(r.status(), 503) << "per request: no retries";
  EXPECT_EQ(s.open_connections(), 1u) << "retried answers' connections are kept";
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(ClientRetry, RetriesStatusesForIdempotentMethods) { run_bounded(statuses_body()); }

// Closes the first `drops` connections without answering, then answers.
struct Dropper {
  explicit Dropper(int drops) : drops(drops) {}
  int drops;
  int connections = 0;
};

Coro<void> drop_or_answer(StreamReader reader, StreamWriter writer, Dropper* d) {
  if (++d->connections > d->drops) {
    co_await reader.readuntil("\r\n\r\n");
    writer.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    co_await writer.drain();
  }
  writer.close();
}

Coro<void> connection_errors_body() {
  Dropper d(2);
  corio::ClientConnected handler = [&d](StreamReader r, StreamWriter w) {
    return drop_or_answer(std::move(r), std::move(w), &d);
  };
  corio::Server peer = co_await corio::start_server(handler, "127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(peer.port()) + "/";
  ClientSession s;
  RequestOptions opts;
  opts.retry = quick(3);
  ClientResponse r = co_await s.get(url, std::move(opts));
  EXPECT_EQ(co_await r.text(), "ok");
  EXPECT_EQ(d.connections, 3);

  d = Dropper(5);
  bool failed = false;
  RequestOptions two;
  two.retry = quick(2);
  try {
    co_await s.get(url, std::move(two));
  } catch (const corio::http::ClientConnectionError&) {
    failed = true;
  }
  EXPECT_TRUE(failed) << "the last try's error";
  EXPECT_EQ(d.connections, 2);
  peer.close();
}

TEST(ClientRetry, RetriesConnectionErrors) { run_bounded(connection_errors_body()); }

Coro<void> timeouts_body() {
  Origin o;
  Server server(quiet());
  server.route("GET", "/slow", [&o](Request& r) { return slow_first(r, &o); });
  co_await server.start("127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/slow";
  ClientOptions co;
  co.timeout.sock_read = milliseconds(200);
  co.retry = quick(2);
  ClientSession s(co);
  ClientResponse r = co_await s.get(url);
  EXPECT_EQ(co_await r.text(), "fast now");
  EXPECT_EQ(o.calls, 2);

  o = Origin();
  RequestOptions no_timeouts;
  no_timeouts.retry = quick(2);
  no_timeouts.retry->timeouts = false;
  bool timed_out = false;
  try {
    co_await s.get(url, std::move(no_timeouts));
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(o.calls, 1);
  co_await s.close();
  server.close();
}

TEST(ClientRetry, RetriesTimeoutsEachTryWithItsOwnClock) { run_bounded(timeouts_body()); }

Coro<Response> show(Request& req) {
  co_return Response::text(req.target() + " " + std::string(req.headers().get_or("X-Client", "-")) +
                           " " + std::string(req.headers().get_or("X-Extra", "-")));
}

// raise_for_status judges the answer kept: a retried one raises nothing.
Coro<void> raise_after_retries_body() {
  Origin o;
  Server server(quiet());
  server.route("GET", "/flaky", [&o](Request& r) { return flaky(r, &o); });
  co_await server.start("127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/flaky";
  ClientOptions co;
  co.retry = quick(3);
  co.raise_for_status = true;
  ClientSession s(co);
  o = Origin(2, 503);
  ClientResponse r = co_await s.get(url);
  EXPECT_EQ(r.status(), 200) << "two retried 503s raised nothing";
  o = Origin(5, 503);
  int raised = 0;
  try {
    co_await s.get(url);
  } catch (const ClientResponseError& e) {
    raised = e.status();
  }
  EXPECT_EQ(raised, 503) << "the last try's answer raises";
  EXPECT_EQ(o.calls, 3);
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(ClientRetry, RaiseForStatusJudgesOnlyTheAnswerKept) { run_bounded(raise_after_retries_body()); }

Coro<Response> missing(Request&) { co_return Response::text("gone", 410); }

Coro<void> defaults_body() {
  Server server(quiet());
  server.get("/api/v1/{name}", show);
  server.get("/api/gone", missing);
  co_await server.start("127.0.0.1", 0);
  ClientOptions co;
  co.base_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/api/v1/";
  co.headers.add("X-Client", "session");
  co.raise_for_status = true;
  ClientSession s(co);
  ClientResponse r = co_await s.get("users?page=2");
  EXPECT_EQ(co_await r.text(), "/api/v1/users?page=2 session -");
  RequestOptions own;
  own.headers.add("X-Client", "request");
  own.headers.add("X-Extra", "1");
  r = co_await s.get("/api/v1/items", std::move(own));
  EXPECT_EQ(co_await r.text(), "/api/v1/items request 1") << "the request's headers win";
  r = co_await s.get("http://127.0.0.1:" + std::to_string(server.port()) + "/api/v1/abs");
  EXPECT_EQ(co_await r.text(), "/api/v1/abs session -") << "an absolute URL ignores base_url";

  bool raised = false;
  try {
    co_await s.get("../gone");
  } catch (const ClientResponseError& e) {
    raised = e.status() == 410;
  }
  EXPECT_TRUE(raised) << "the session's raise_for_status";
  RequestOptions lenient;
  lenient.raise_for_status = false;
  r = co_await s.get("../gone", std::move(lenient));
  EXPECT_EQ(r.status(), 410);
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(ClientDefaults, BaseUrlHeadersAndRaiseForStatusPerSessionAndRequest) {
  run_bounded(defaults_body());
}

}  // namespace
}  // namespace corio_http_test
