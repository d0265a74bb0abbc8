// The cancellation sweep over the HTTP client and server: redirects,
// retries, each way of reading a body, a streamed upload and a streamed
// response, and a handler whose client goes away. After each cancel the
// session's next request gets its own answer, and neither host keeps a
// socket, task or timer the uncancelled run did not (a handler left
// waiting on the server counts).
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <corio/http.hpp>
#include <corio/sleep.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
namespace http = corio::http;

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// What the server's handlers count, shared with the test (the hosts are one process).
struct Served {
  int flaky_calls = 0;  // /flaky answers every other call with a 503
  int active = 0;       // handlers running now
};

// Counts a handler in for as long as it runs, unwinding included.
struct Active {
  explicit Active(int& n) : n_(n) { ++n_; }
  ~Active() { --n_; }
  int& n_;
};

void add_routes(http::Server& server, std::shared_ptr<Served> served) {
  server.get("/n/{n}", [](http::Request& req) -> Coro<http::Response> {
    co_await corio::sleep(5ms);
    co_return http::Response::text(std::string(req.param("n")));
  });
  server.get("/redirect/{n}", [](http::Request& req) -> Coro<http::Response> {
    http::Response r(302);
    r.headers.set("Location", "/n/" + std::string(req.param("n")));
    co_return r;
  });
  server.get("/flaky/{n}", [served](http::Request& req) -> Coro<http::Response> {
    if (served->flaky_calls++ % 2 == 0) co_return http::Response::text("busy", 503);
    co_return http::Response::text(std::string(req.param("n")));
  });
  server.get("/json/{n}", [](http::Request& req) -> Coro<http::Response> {
    co_return http::Response::json(nlohmann::json{{"n", std::stoi(std::string(req.param("n")))}});
  });
  server.get("/stream/{n}", [](http::Request& req) -> Coro<http::Response> {
    const int n = std::stoi(std::string(req.param("n")));
    co_return http::Response::stream([n](http::StreamResponseWriter& w) -> Coro<void> {
      for (int i = 0; i < n; ++i) {
        co_await w.write("chunk;");
        co_await corio::sleep(2ms);
      }
    });
  });
  server.post("/upload", [served](http::Request& req) -> Coro<http::Response> {
    Active counted(served->active);
    std::size_t size = 0;
    for (std::string piece = co_await req.read_chunk(); !piece.empty(); piece = co_await req.read_chunk()) {
      size += piece.size();
    }
    co_return http::Response::text(std::to_string(size));
  });
  server.get("/slow", [served](http::Request&) -> Coro<http::Response> {
    Active counted(served->active);
    co_await corio::sleep(50ms);
    co_return http::Response::text("slow");
  });
}

Coro<void> service(std::shared_ptr<Served> served) {
  http::ServerOptions quiet;
  quiet.access_log = nullptr;
  http::Server server(quiet);
  add_routes(server, std::move(served));
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

Coro<std::string> get_text(http::ClientSession& s, std::string path) {
  http::ClientResponse r = co_await s.get("http://10.0.0.1:8080" + path);
  co_return co_await r.text();
}

// The shape of every sweep here: a service on 10.0.0.1, a session on the
// client host; `op` runs on the session, then the session's next GET must
// get its own answer, every handler must have ended, and the session closes.
using Op = std::function<Coro<void>(std::shared_ptr<http::ClientSession>)>;

void sweep(Op op, int min_points, http::ClientOptions options = {},
           corio::testing::SimulationOptions sim_options = {}) {
  expect_clean(corio::testing::cancellation_sweep(
                   [&](Simulation& sim) {
                     auto served = std::make_shared<Served>();
                     sim.host("server").spawn(service(served));
                     auto session = std::make_shared<http::ClientSession>(options);
                     auto after = [session, served]() -> Coro<void> {
                       const std::string body = co_await get_text(*session, "/n/2");
                       require(body == "2", "the next GET got '" + body + "'");
                       co_await corio::sleep(100ms);  // a handler the cancel cut off ends
                       require(served->active == 0, "a handler is still running");
                       co_await session->close();
                     };
                     return SweepRun{&sim.host("client"), [op, session] { return op(session); }, after};
                   },
                   sim_options),
               min_points);
}

// A GET and its body read; the next GET on the same session (its pool)
// gets its own answer, not the cancelled one's.
TEST(SweepHttp, ClientGetAndBodyOnAPooledSession) {
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    require(co_await get_text(*s, "/n/1") == "1", "the first GET's answer is wrong");
  }, 2);
}

// The same over HTTP/2 (h2c with prior knowledge): a cancel resets its
// stream, and the next request goes on the same connection.
TEST(SweepHttp, ClientGetOverH2c) {
  http::ClientOptions options;
  options.http2_prior_knowledge = true;
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    http::ClientResponse r = co_await s->get("http://10.0.0.1:8080/n/1");
    require(r.version().major == 2, "not HTTP/2");
    require(co_await r.text() == "1", "the first GET's answer is wrong");
  }, 2, options);
}

TEST(SweepHttp, ClientFollowsARedirect) {
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    require(co_await get_text(*s, "/redirect/1") == "1", "the redirect's answer is wrong");
  }, 3);
}

TEST(SweepHttp, ClientRetriesA503) {
  http::ClientOptions options;
  options.retry.attempts = 3;
  options.retry.backoff = 10ms;
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    require(co_await get_text(*s, "/flaky/1") == "1", "the retried answer is wrong");
  }, 3, options);
}

TEST(SweepHttp, ClientReadsAJsonBody) {
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    http::ClientResponse r = co_await s->get("http://10.0.0.1:8080/json/7");
    require((co_await r.json())["n"] == 7, "the JSON body is wrong");
  }, 2);
}

// A streamed (chunked) response read piece by piece.
TEST(SweepHttp, ClientReadsAStreamedResponseInChunks) {
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    http::ClientResponse r = co_await s->get("http://10.0.0.1:8080/stream/4");
    std::string body;
    for (std::string piece = co_await r.read_chunk(); !piece.empty(); piece = co_await r.read_chunk()) {
      body += piece;
    }
    require(body == "chunk;chunk;chunk;chunk;", "the streamed body is wrong: " + body);
  }, 4);
}

// An upload larger than the connection's window, so the client's write
// drains while the server's handler reads it chunk by chunk: a cancel on
// either side of that leaves neither a handler nor a connection behind.
TEST(SweepHttp, AStreamedUploadReadInChunksByTheHandler) {
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    http::RequestOptions opts;
    opts.data = std::string(64 * 1024, 'u');
    http::ClientResponse r = co_await s->post("http://10.0.0.1:8080/upload", std::move(opts));
    require(co_await r.text() == "65536", "the upload's size is wrong");
  }, 2, {}, {.window = 8 * 1024, .short_io = true});
}

// The client gives up while the handler works: the handler ends (its
// answer has nowhere to go) and the server serves the next request.
TEST(SweepHttp, AHandlerWhoseClientWentAway) {
  sweep([](std::shared_ptr<http::ClientSession> s) -> Coro<void> {
    require(co_await get_text(*s, "/slow") == "slow", "the slow answer is wrong");
  }, 2);
}

// ClientSession::close() cancelled while it closes the pooled connection:
// a second close() finishes the job (no socket is left on either host),
// and a new session is served.
TEST(SweepHttp, SessionCloseWithAPooledConnection) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
                 sim.host("server").spawn(service(std::make_shared<Served>()));
                 auto session = std::make_shared<http::ClientSession>();
                 auto op = [session]() -> Coro<void> {
                   require(co_await get_text(*session, "/n/1") == "1", "the GET's answer is wrong");
                   co_await session->close();
                 };
                 auto after = [session]() -> Coro<void> {
                   co_await session->close();
                   http::ClientSession fresh;
                   require(co_await get_text(fresh, "/n/2") == "2",
                           "a new session's answer is wrong");
                   co_await fresh.close();
                 };
                 return SweepRun{&sim.host("client"), op, after};
               }),
               2);
}

// A graceful shutdown cancelled while a request is in flight: a second
// shutdown() finishes it, the request is answered or fails clearly, and no
// handler, connection or timer is left.
struct Shutting {
  std::shared_ptr<Served> served = std::make_shared<Served>();
  std::optional<http::Server> server;
};

Coro<void> start_and_serve(std::shared_ptr<Shutting> s) {
  http::ServerOptions quiet;
  quiet.access_log = nullptr;
  s->server.emplace(quiet);
  add_routes(*s->server, s->served);
  co_await s->server->start("0.0.0.0", 8080);
  co_await s->server->serve_forever();
}

// A GET of /slow sent at `at`, its handler still running at 0.5 s.
Coro<void> slow_get(double at) {
  co_await corio::sleep(std::chrono::duration<double>(at));
  http::ClientSession session;
  try {
    require(co_await get_text(session, "/slow") == "slow", "the slow answer is wrong");
  } catch (const http::ClientError&) {
    // closed by the shutdown's end: a clear failure
  }
  co_await session.close();
}

TEST(SweepHttp, ServerShutdownWithARequestInFlight) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    auto s = std::make_shared<Shutting>();
    auto& server = sim.host("server");
    server.spawn(start_and_serve(s));
    auto client = std::make_shared<corio::Task<void>>(sim.host("client").spawn(slow_get(0.48)));
    auto op = [s]() -> Coro<void> {
      require(s->served->active == 1, "no request in flight");
      co_await s->server->shutdown(1s);
    };
    auto after = [s, client]() -> Coro<void> {
      co_await s->server->shutdown(1s);
      // The client is another host's task: watched, not awaited.
      while (!client->done()) co_await corio::sleep(10ms);
      require(!client->cancelled() && !client->exception(), "the client's request did not end clearly");
      require(s->served->active == 0, "a handler is still running");
    };
    return SweepRun{&server, op, after};
  }), 1);
}

}  // namespace
