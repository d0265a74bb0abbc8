// The cancellation sweep over corio's own operations: each one cancelled at
// every one of its suspension points, then the next operation on the same
// objects checked, and nothing leaked (testing/cancellation_sweep.hpp).
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <corio/http.hpp>
#include <corio/lock.hpp>
#include <corio/mcp.hpp>
#include <corio/queue.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>
#include <corio/testing/cancellation_sweep.hpp>

#include "net/tls_support.hpp"
#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepReport;
using corio::testing::SweepRun;
using corio::testing::cancellation_sweep;

namespace {

// ---- a sweep that finds a planted bug ------------------------------------------------

// A resource whose busy flag is cleared after the await, not by a guard:
// cancelled at that await, it stays busy forever (asyncpg's "another
// operation is in progress").
struct Fragile {
  bool busy = false;
  Coro<void> use() {
    if (busy) throw std::runtime_error("another operation is in progress");
    busy = true;
    co_await corio::sleep(10ms);
    busy = false;
  }
};

TEST(CancellationSweep, FindsAnOperationThatACancelLeavesOutOfStep) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto fragile = std::make_shared<Fragile>();
    return SweepRun{&sim.host("solo"), [fragile] { return fragile->use(); },
                    [fragile] { return fragile->use(); }};
  });
  EXPECT_EQ(report.points, 1);
  ASSERT_EQ(report.violations.size(), 1u) << report.describe();
  EXPECT_NE(report.violations[0].find("another operation is in progress"), std::string::npos)
      << report.describe();
}

// ---- streams ------------------------------------------------------------------------------

using sim_support::echo_server;
using sim_support::expect_clean;

struct Line {
  std::optional<corio::StreamReader> r;
  std::optional<corio::StreamWriter> w;
};

// Connect, send a line, read it back; then, on the same streams, a second
// line: what comes back is the first line at most once (if the cancel came
// before it was read), then the second. No byte lost, none doubled.
TEST(CancellationSweep, StreamsConnectWriteDrainReadline) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(echo_server(7000));
    auto line = std::make_shared<Line>();
    auto op = [line]() -> Coro<void> {
      auto [r, w] = co_await corio::open_connection("10.0.0.1", 7000);
      line->r.emplace(std::move(r));
      line->w.emplace(std::move(w));
      line->w->write("first\n");
      co_await line->w->drain();
      if (co_await line->r->readline() != "first\n") throw std::runtime_error("not the first line");
    };
    auto after = [line]() -> Coro<void> {
      if (!line->w) co_return;  // cancelled before it connected: nothing to be in step with
      line->w->write("second\n");
      co_await line->w->drain();
      std::string got = co_await line->r->readline();
      if (got == "first\n") got = co_await line->r->readline();
      if (got != "second\n") throw std::runtime_error("out of step: read '" + got + "'");
      line->w->close();
    };
    return SweepRun{&sim.host("client"), op, after};
  });
  expect_clean(report, 2);
}

// A TLS connection (handshake, a line there and back) cancelled anywhere:
// the server, whose handshake or read the cancel cut short, serves the next
// connection. The certificate names "localhost": the client says so.
Coro<void> tls_echo_server() {
  corio::Server server = co_await corio::start_server(sim_support::echo_lines, "0.0.0.0", 7443,
                                                      corio_net_test::tls_server_options());
  co_await server.serve_forever();
}

Coro<void> tls_line(std::string text) {
  corio::ConnectOptions opts = corio_net_test::tls_options();
  opts.server_hostname = "localhost";
  auto [r, w] = co_await corio::open_connection("10.0.0.1", 7443, opts);
  w.write(text);
  co_await w.drain();
  if (co_await r.readline() != text) throw std::runtime_error("TLS echo out of step");
  w.close();
  co_await w.wait_closed();
}

TEST(CancellationSweep, TlsHandshakeAndALine) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(tls_echo_server());
    return SweepRun{&sim.host("client"), [] { return tls_line("first\n"); },
                    [] { return tls_line("second\n"); }};
  });
  expect_clean(report, 3);
}

// ---- the HTTP client and server --------------------------------------------------------------

Coro<void> http_service() {
  corio::http::ServerOptions quiet;
  quiet.access_log = nullptr;
  corio::http::Server server(quiet);
  server.get("/n/{n}", [](corio::http::Request& req) -> Coro<corio::http::Response> {
    co_await corio::sleep(5ms);  // the handler suspends too
    co_return corio::http::Response::text(std::string(req.param("n")));
  });
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

// A GET and its body read, cancelled anywhere; the next GET on the same
// session (its pool) must get its own answer, not the cancelled one's.
TEST(CancellationSweep, HttpClientGetAndBodyOnAPooledSession) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(http_service());
    auto session = std::make_shared<corio::http::ClientSession>();
    auto op = [session]() -> Coro<void> {
      corio::http::ClientResponse r = co_await session->get("http://10.0.0.1:8080/n/1");
      if (co_await r.text() != "1") throw std::runtime_error("wrong answer to the first GET");
    };
    auto after = [session]() -> Coro<void> {
      corio::http::ClientResponse r = co_await session->get("http://10.0.0.1:8080/n/2");
      const std::string body = co_await r.text();
      if (body != "2") throw std::runtime_error("the second GET got '" + body + "'");
      co_await session->close();
    };
    return SweepRun{&sim.host("client"), op, after};
  });
  expect_clean(report, 2);
}

// A WebSocket's connect, send and receive cancelled anywhere; the next
// connection to the same server echoes.
Coro<corio::http::Response> ws_echo(corio::http::Request& req) {
  corio::http::WebSocket ws = co_await corio::http::WebSocketResponse::prepare(req);
  while (std::optional<corio::http::WsMessage> msg = co_await ws.receive()) co_await ws.send(*msg);
  co_return corio::http::Response{};
}

Coro<void> ws_service() {
  corio::http::ServerOptions quiet;
  quiet.access_log = nullptr;
  corio::http::Server server(quiet);
  server.get("/ws", ws_echo);
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

Coro<void> ws_round_trip(std::shared_ptr<corio::http::ClientSession> session, std::string text) {
  corio::http::WebSocket ws = co_await session->ws_connect("http://10.0.0.1:8080/ws");
  co_await ws.send_str(text);
  std::optional<corio::http::WsMessage> reply = co_await ws.receive();
  if (!reply || reply->data != text) throw std::runtime_error("no echo of '" + text + "'");
  co_await ws.close();
}

TEST(CancellationSweep, WebSocketConnectSendReceiveClose) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(ws_service());
    auto session = std::make_shared<corio::http::ClientSession>();
    auto after = [session]() -> Coro<void> {
      co_await ws_round_trip(session, "second");
      co_await session->close();
    };
    return SweepRun{&sim.host("client"), [session] { return ws_round_trip(session, "first"); }, after};
  });
  expect_clean(report, 3);
}

// ---- MCP over Streamable HTTP -------------------------------------------------------------------

using corio::mcp::json;

Coro<void> tool_server() {
  corio::mcp::Server server("calculator", "1.0.0");
  server.add_tool("add", "Adds two integers", json{{"type", "object"}},
                  [](const json& args, corio::mcp::Context&) -> Coro<corio::mcp::ToolResult> {
                    co_await corio::sleep(5ms);
                    co_return corio::mcp::ToolResult::text(
                        std::to_string(args["a"].get<int>() + args["b"].get<int>()));
                  });
  corio::http::ServerOptions quiet;
  quiet.access_log = nullptr;
  corio::http::Server http(quiet);
  corio::mcp::StreamableHttpOptions options;
  options.allowed_hosts = {"10.0.0.1:9000"};
  corio::mcp::StreamableHttp endpoint(server, options);
  endpoint.mount(http);
  co_await http.start("0.0.0.0", 9000);
  co_await http.serve_forever();
}

struct McpClient {
  corio::mcp::StreamableHttpClient transport{"http://10.0.0.1:9000/mcp"};
  corio::mcp::Client client{transport};
};

Coro<std::string> add(corio::mcp::Client& c, int a, int b) {
  json args = {{"a", a}, {"b", b}};
  json result = co_await c.call_tool("add", args);
  co_return result["content"][0]["text"].get<std::string>();
}

// A tool call cancelled anywhere; the next call in the same session gets
// its own result.
TEST(CancellationSweep, McpCallToolOverStreamableHttp) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("tools").spawn(tool_server());
    auto mcp = std::make_shared<McpClient>();
    auto& host = sim.host("client");
    host.spawn([](std::shared_ptr<McpClient> m) -> Coro<void> {
      co_await m->client.initialize();
    }(mcp));
    auto op = [mcp]() -> Coro<void> {
      if (co_await add(mcp->client, 2, 3) != "5") throw std::runtime_error("2 + 3 is not 5");
    };
    auto after = [mcp]() -> Coro<void> {
      const std::string sum = co_await add(mcp->client, 20, 22);
      if (sum != "42") throw std::runtime_error("the next call got " + sum);
      co_await mcp->client.close();
      co_await mcp->transport.close();
    };
    return SweepRun{&host, op, after};
  });
  expect_clean(report, 2);
}

// ---- sync primitives and queues -------------------------------------------------------------------

// A waiter for a held lock, cancelled; the lock still passes on.
TEST(CancellationSweep, LockAcquireUnderContention) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto lock = std::make_shared<corio::Lock>();
    auto& host = sim.host("solo");
    auto op = [lock]() -> Coro<void> {
      corio::Lock::Guard held = co_await lock->scoped_lock();
      co_await corio::sleep(5ms);
    };
    // A parameter, not a capture: the lambda is gone when the task runs.
    auto holder = [](std::shared_ptr<corio::Lock> l) -> Coro<void> {
      corio::Lock::Guard held = co_await l->scoped_lock();
      co_await corio::sleep(20ms);
    };
    auto after = [lock]() -> Coro<void> {
      co_await lock->acquire();
      lock->release();
    };
    host.spawn(holder(lock));
    return SweepRun{&host, op, after};
  }, {}, 0.001);
  expect_clean(report, 2);
}

// A get() cancelled as the item arrives loses no item: the next get has it.
TEST(CancellationSweep, QueueGetLosesNoItem) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto queue = std::make_shared<corio::Queue<int>>();
    auto got = std::make_shared<int>(0);
    auto& host = sim.host("solo");
    auto producer = [](std::shared_ptr<corio::Queue<int>> q) -> Coro<void> {
      co_await corio::sleep(10ms);
      co_await q->put(7);
    };
    auto op = [queue, got]() -> Coro<void> { *got = co_await queue->get(); };
    auto after = [queue, got]() -> Coro<void> {
      if (*got == 0) *got = co_await queue->get();
      if (*got != 7 || !queue->empty()) throw std::runtime_error("the item was lost or doubled");
    };
    host.spawn(producer(queue));
    return SweepRun{&host, op, after};
  }, {}, 0.001);
  expect_clean(report, 1);
}

}  // namespace
