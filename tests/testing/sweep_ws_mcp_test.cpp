// The cancellation sweep over WebSocket (connect, receive, send, close, each
// on its own) and MCP over Streamable HTTP (a tool call, a notification, the
// session's close): after each cancel the next operation on the same
// connection or session gets its own answer, nothing sent is lost or
// doubled, and no host keeps what the uncancelled run did not.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <corio/http.hpp>
#include <corio/mcp.hpp>
#include <corio/sleep.hpp>
#include <corio/testing/fault_plan.hpp>
#include <corio/timeout.hpp>

#include "testing/sim_mcp_support.hpp"
#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepReport;
using corio::testing::SweepRun;
using corio::testing::cancellation_sweep;
using sim_support::expect_clean;

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// ---- WebSocket ------------------------------------------------------------------------------

// A WebSocket's connect, send and receive cancelled anywhere; the next
// connection to the same server echoes.
Coro<void> ws_round_trip(std::shared_ptr<corio::http::ClientSession> session, std::string text) {
  corio::http::WebSocket ws = co_await session->ws_connect("http://10.0.0.1:8080/ws");
  co_await ws.send_str(text);
  std::optional<corio::http::WsMessage> reply = co_await ws.receive();
  if (!reply || reply->data != text) throw std::runtime_error("no echo of '" + text + "'");
  co_await ws.close();
}

TEST(SweepWebSocket, ConnectSendReceiveClose) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(sim_support::ws_service());
    auto session = std::make_shared<corio::http::ClientSession>();
    auto after = [session]() -> Coro<void> {
      co_await ws_round_trip(session, "second");
      co_await session->close();
    };
    return SweepRun{&sim.host("client"), [session] { return ws_round_trip(session, "first"); }, after};
  });
  expect_clean(report, 3);
}

// One client connection, opened before the operation starts.
struct WsSide {
  std::shared_ptr<corio::http::ClientSession> session = std::make_shared<corio::http::ClientSession>();
  std::optional<corio::http::WebSocket> ws;
  std::string got;  // what the operation received
};

Coro<void> ws_open(std::shared_ptr<WsSide> side) {
  side->ws.emplace(co_await side->session->ws_connect("http://10.0.0.1:8080/ws"));
}

// Receives until `last` comes; what came before it, joined by '|'.
Coro<std::string> receive_until(corio::http::WebSocket& ws, std::string last) {
  std::string before;
  for (;;) {
    std::optional<corio::http::WsMessage> msg = co_await ws.receive();
    require(msg.has_value(), "the connection closed after '" + before + "'");
    if (msg->data == last) co_return before;
    before += (before.empty() ? "" : "|") + msg->data.substr(0, 16);
  }
}

// `op` on an open connection; then `after` on the same one, and the session closes.
void ws_sweep(std::function<Coro<void>(std::shared_ptr<WsSide>)> op,
              std::function<Coro<void>(std::shared_ptr<WsSide>)> after, int min_points,
              corio::testing::SimulationOptions options = {}) {
  expect_clean(cancellation_sweep([&](Simulation& sim) {
    sim.host("server").spawn(sim_support::ws_service());
    auto side = std::make_shared<WsSide>();
    auto& client = sim.host("client");
    client.spawn(ws_open(side));
    return SweepRun{&client, [op, side] { return op(side); }, [after, side]() -> Coro<void> {
                      co_await after(side);
                      co_await side->session->close();
                    }};
  }, options), min_points);
}

// A receive() cancelled loses no message: the next one gets it, once.
TEST(SweepWebSocket, Receive) {
  ws_sweep([](std::shared_ptr<WsSide> side) -> Coro<void> {
    co_await side->ws->send_str("first");
    side->got = (co_await side->ws->receive()).value().data;
  }, [](std::shared_ptr<WsSide> side) -> Coro<void> {
    co_await side->ws->send_str("second");
    const std::string before = co_await receive_until(*side->ws, "second");
    require(before == (side->got.empty() ? "first" : ""), "before the second echo: '" + before + "'");
    co_await side->ws->close();
  }, 1);
}

// Bytes that permessage-deflate cannot shrink below the window (a
// xorshift's), the same in every run.
std::string noise(std::size_t n) {
  std::string out(n, '\0');
  std::uint32_t x = 2463534242u;
  for (char& c : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return out;
}

// A send() larger than the window, cancelled while it drains: the message
// goes whole or not at all, and the next one follows it.
TEST(SweepWebSocket, Send) {
  ws_sweep([](std::shared_ptr<WsSide> side) -> Coro<void> {
    co_await side->ws->send_bytes(noise(256 * 1024));
  }, [](std::shared_ptr<WsSide> side) -> Coro<void> {
    co_await side->ws->send_str("second");
    const std::string before = co_await receive_until(*side->ws, "second");
    require(before.empty() || before == noise(16), "before the second echo: another message");
    co_await side->ws->close();
  }, 1, {.window = 8 * 1024});
}

// close() cancelled during the closing handshake: the connection counts as
// closed, its socket is not left open, and a new connection works.
TEST(SweepWebSocket, Close) {
  ws_sweep([](std::shared_ptr<WsSide> side) -> Coro<void> { co_await side->ws->close(); },
           [](std::shared_ptr<WsSide> side) -> Coro<void> {
             require(side->ws->closed(), "a cancelled close() left the connection open");
             co_await ws_round_trip(side->session, "again");
           }, 1);
}

// The same echo under random fault plans: each message's echo comes back
// within a second, or the client sees a clear failure (a timeout, an error,
// the end of the connection), drops the connection and makes a new one.
// Never a wrong echo, never a hang.
Coro<std::string> ws_client_under_faults() {
  auto session = std::make_shared<corio::http::ClientSession>();
  std::optional<corio::http::WebSocket> ws;
  std::string wrong;
  for (int i = 0; i < 20 && wrong.empty(); ++i) {
    const std::string text = "message " + std::to_string(i);
    try {
      if (!ws) ws.emplace(co_await corio::wait_for(session->ws_connect("http://10.0.0.1:8080/ws"), 1s));
      co_await ws->send_str(text);
      std::optional<corio::http::WsMessage> echo = co_await corio::wait_for(ws->receive(), 1s);
      if (!echo) throw std::runtime_error("closed");
      if (echo->data != text) wrong = "sent '" + text + "', got '" + echo->data + "'";
    } catch (const corio::TimeoutError&) {
      ws.reset();  // its destructor closes the transport: no late echo can come
    } catch (const std::exception&) {
      ws.reset();
    }
    co_await corio::sleep(500ms);
  }
  if (ws) ws->abort();
  co_await session->close();
  co_return wrong;
}

TEST(SweepWebSocket, EchoesUnderRandomFaultPlans) {
  using corio::testing::FaultPlan;
  auto scenario = [](Simulation& sim) {
    sim.host("server").spawn(sim_support::ws_service());
    return sim.run_until_complete(sim.host("client"), ws_client_under_faults(), 120);
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const corio::testing::FaultReport report =
        run_with_faults(scenario, FaultPlan::random(seed, 2, {.faults = 8, .max_duration = 5}), {.seed = seed});
    EXPECT_FALSE(report.failed) << "plan " << seed << ": " << report.failure
                                << "\nsmallest plan: " << report.plan.str() << "\nreplay: " << report.replay();
  }
}

// ---- MCP over Streamable HTTP -------------------------------------------------------------------

using corio::mcp::json;

// pings: how many notifications/ping the server got.
Coro<void> tool_server(std::shared_ptr<int> pings) {
  corio::mcp::Server server("calculator", "1.0.0");
  server.add_notification("notifications/ping", [pings](const json&) { ++*pings; });
  server.add_tool("add", "Adds two integers", json{{"type", "object"}},
                  [](const json& args, corio::mcp::Context&) -> Coro<corio::mcp::ToolResult> {
                    co_await corio::sleep(5ms);
                    co_return corio::mcp::ToolResult::text(
                        std::to_string(args["a"].get<int>() + args["b"].get<int>()));
                  });
  co_await sim_support::serve_mcp(server, 9000);
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
TEST(SweepMcp, CallToolOverStreamableHttp) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("tools").spawn(tool_server(std::make_shared<int>(0)));
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


// A notification cancelled while it is posted: the server has it at most
// once, and once for sure if notify() returned; the session goes on.
TEST(SweepMcp, Notification) {
  expect_clean(cancellation_sweep([](Simulation& sim) {
    auto pings = std::make_shared<int>(0);
    auto sent = std::make_shared<bool>(false);
    sim.host("tools").spawn(tool_server(pings));
    auto mcp = std::make_shared<McpClient>();
    auto& host = sim.host("client");
    host.spawn([](std::shared_ptr<McpClient> m) -> Coro<void> { co_await m->client.initialize(); }(mcp));
    auto op = [mcp, sent]() -> Coro<void> {
      co_await mcp->client.session().notify("notifications/ping");
      *sent = true;
    };
    auto after = [mcp, pings, sent]() -> Coro<void> {
      require(co_await add(mcp->client, 20, 22) == "42", "the next call's answer is wrong");
      require(*pings <= 1 && (*pings == 1 || !*sent), std::to_string(*pings) + " pings arrived");
      co_await mcp->client.close();
      co_await mcp->transport.close();
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// The session's close cancelled: a new session with the same server works,
// and no host keeps more than the uncancelled close left.
TEST(SweepMcp, SessionClose) {
  expect_clean(cancellation_sweep([](Simulation& sim) {
    sim.host("tools").spawn(tool_server(std::make_shared<int>(0)));
    auto mcp = std::make_shared<McpClient>();
    auto& host = sim.host("client");
    host.spawn([](std::shared_ptr<McpClient> m) -> Coro<void> { co_await m->client.initialize(); }(mcp));
    auto op = [mcp]() -> Coro<void> {
      co_await mcp->client.close();
      co_await mcp->transport.close();
    };
    auto after = []() -> Coro<void> {
      McpClient fresh;
      co_await fresh.client.initialize();
      require(co_await add(fresh.client, 1, 2) == "3", "a new session's answer is wrong");
      co_await fresh.client.close();
      co_await fresh.transport.close();
    };
    return SweepRun{&host, op, after};
  }), 1);
}

}  // namespace
