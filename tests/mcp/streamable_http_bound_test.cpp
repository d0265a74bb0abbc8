// Streamable HTTP's queues against a peer that floods them, both sides:
// a session too busy for more requests holds their POSTs back, a client whose
// receive() falls behind stops reading its streams, and an SSE event that
// never ends fails its stream at the message limit. Each fills its queue
// well past the bound and checks what was taken in, then that reading on
// delivers everything. Virtual time where a flood is waited out: a sleep
// returns once the loop has nothing left to do, so "the peer sent all it
// could" takes no real waiting and no guess of how long is enough.
#include <corio/http/server.hpp>
#include <corio/mcp/streamable_http_client.hpp>

#include "common/memory.hpp"
#include "common/support.hpp"
#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::ClientResponse;
using corio::http::Request;
using corio::http::Response;
using corio::http::StreamResponseWriter;
using corio::mcp::Context;
using corio::mcp::StreamableHttpClient;
using corio::mcp::ToolResult;

json notification(std::string method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"method", std::move(method)}, {"params", std::move(params)}};
}

json call(int id, std::string method, json params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}, {"params", std::move(params)}};
}

// A tool that holds its request (and, at max_in_flight 1, its session's
// reading) until the test lets it go.
struct Held {
  corio::Event started, release;
};
Coro<ToolResult> hold(Held* held) {
  held->started.set();
  co_await held->release.wait();
  co_return ToolResult::text("released");
}

// POSTs kFlood notifications of 64 KiB, one after another, counting
// those the server took (202).
constexpr int kFlood = 64;  // 4 MiB
Coro<void> flood(HttpFixture* f, std::string session, int* accepted) {
  const json n = notification("notifications/flood", {{"pad", std::string(64 * 1024, 'p')}});
  for (int i = 0; i < kFlood; ++i) {
    ClientResponse r = co_await f->post(n, session);
    EXPECT_EQ(r.status(), 202);
    co_await r.read();
    ++*accepted;
  }
}

Coro<void> post_and_read(HttpFixture* f, json message, std::string session, std::string* answer) {
  ClientResponse r = co_await f->post(message, session);
  *answer = co_await r.read();
}

// A busy session (at max_in_flight, 1 here) holds a POSTed request back,
// unanswered, until a slot frees, and takes the notifications POSTed
// meanwhile at once. Before, each POST's message went to a session inbox
// that held 1 MiB of them (16 of 64) while the session was busy; now
// nothing is queued: all 64 (4 MiB) are taken and the memory does not grow.
Coro<void> busy_session_body() {
  HttpFixture f;
  f.mcp.max_in_flight = 1;
  Held held;
  f.mcp.add_tool("hold", "", json{{"type", "object"}}, [&held](const json&, Context&) { return hold(&held); });
  co_await f.start();
  const std::string id = co_await f.open_session();
  // Named: g++ 12 rejects a braced list inside a co_await expression here.
  const json held_call = call(2, "tools/call", {{"name", "hold"}, {"arguments", json::object()}});
  ClientResponse call_r = co_await f.post(held_call, id);
  co_await held.started.wait();
  std::string ping_answer;
  corio::Task<void> ping = corio::create_task(post_and_read(&f, call(3, "ping", json::object()), id, &ping_answer));
  const corio_testing::Memory before = corio_testing::memory_now();
  int accepted = 0;
  co_await flood(&f, id, &accepted);
  co_await corio::sleep(1s);  // the ping has had every chance to be answered
  EXPECT_EQ(accepted, kFlood);
  corio_testing::expect_little_growth_since(before);
  EXPECT_FALSE(ping.done()) << "a request was served past max_in_flight: " << ping_answer;
  held.release.set();
  co_await ping;
  EXPECT_NE(ping_answer.find("\"result\""), std::string::npos) << ping_answer;
  const std::string answer = co_await call_r.read();
  EXPECT_NE(answer.find("released"), std::string::npos) << answer;
  co_await f.stop();
}

TEST(StreamableHttpBound, ABusySessionHoldsItsRequestsBackNotItsNotifications) { corio_testing::run_vt(busy_session_body()); }

// 5,000 progress notifications of 4 KiB: 20 MiB, more than the sockets hold.
constexpr int kChatter = 5000;
Coro<ToolResult> chatter(Context& ctx, bool* finished) {
  const std::string words(4096, 'w');
  for (int i = 1; i <= kChatter; ++i) co_await ctx.report_progress(i, kChatter, words);
  *finished = true;
  co_return ToolResult::text("said it all");
}

// The client transport used bare (no mcp::Client reading it): initialize,
// then a call whose stream floods, while receive() is not called.
Coro<json> receive_json(StreamableHttpClient& t) {
  const std::optional<corio::mcp::Received> got = co_await t.receive();
  co_return got ? json::parse(got->text) : json();
}

Coro<void> initialize(StreamableHttpClient& t) {
  co_await t.send(kInitialize.dump(), nullptr);
  const json answer = co_await receive_json(t);
  EXPECT_TRUE(answer.contains("result")) << answer.dump();
  co_await t.send(notification("notifications/initialized").dump(), nullptr);
}

// Before the bound the client's reader took the whole stream in (the tool
// finished, +20 MiB); now it stops at 1 MiB unread, the server's outbox
// then holds the tool back, and every message arrives as receive() goes on.
Coro<void> slow_receiver_body() {
  HttpFixture f;
  bool finished = false;
  f.mcp.add_tool("chatter", "", json{{"type", "object"}},
                 [&finished](const json&, Context& ctx) { return chatter(ctx, &finished); });
  co_await f.start();
  StreamableHttpClient transport(f.url());
  co_await initialize(transport);
  const json params = {{"name", "chatter"}, {"arguments", json::object()}, {"_meta", {{"progressToken", 1}}}};
  const corio_testing::Memory before = corio_testing::memory_now();
  co_await transport.send(call(2, "tools/call", params).dump(), nullptr);
  co_await corio::sleep(1s);  // until the stream is blocked or all read; receive() is not called
  EXPECT_FALSE(finished) << "the client took the whole stream in";
  corio_testing::expect_little_growth_since(before);
  int progress = 0;
  json last;
  while (!last.contains("result")) {
    last = co_await receive_json(transport);
    CO_ASSERT(!last.is_null());
    if (last.value("method", "") == "notifications/progress") ++progress;
  }
  EXPECT_EQ(progress, kChatter);
  EXPECT_TRUE(finished);
  co_await transport.close();
  co_await f.stop();
}

TEST(StreamableHttpBound, AClientThatFallsBehindStopsReadingItsStreams) {
  corio_testing::run_vt(slow_receiver_body());
}

// An SSE body of data lines without the empty line that would end the
// event: 64 MiB of one event, then the end of the stream.
Coro<void> endless_event(StreamResponseWriter& w) {
  const std::string line = "data: " + std::string(64 * 1024, 'd') + "\n";
  for (int i = 0; i < 1024; ++i) co_await w.write(line);
}

Coro<Response> endless_server(Request& req) {
  const json body = co_await req.json();
  if (body.value("method", "") == "initialize") {
    co_return Response::json(corio::mcp::make_response(
        body["id"], {{"protocolVersion", "2025-11-25"},
                     {"capabilities", json::object()},
                     {"serverInfo", {{"name", "endless"}, {"version", "1"}}}}));
  }
  if (!body.contains("id")) co_return Response(202);
  co_return Response::stream(endless_event, 200, "text/event-stream");
}

// Before, the data lines piled up (the limit counted only an unfinished
// line): +128 MiB, and the call failed only at the stream's end. Now the
// event fails its stream at the message limit (4 MiB).
Coro<void> endless_event_body() {
  corio::http::ServerOptions o;
  o.access_log = {};
  corio::http::Server http(o);
  http.post("/mcp", endless_server);
  co_await http.start("127.0.0.1", 0);
  StreamableHttpClient transport("http://127.0.0.1:" + std::to_string(http.port()) + "/mcp");
  co_await initialize(transport);
  const corio_testing::Memory before = corio_testing::memory_now();
  const std::string endless_call = call(2, "tools/call", {{"name", "t"}}).dump();
  co_await transport.send(endless_call, nullptr);
  const json answer = co_await receive_json(transport);
  EXPECT_EQ(answer["id"], 2);
  EXPECT_NE(answer["error"].value("message", "").find("size limit"), std::string::npos) << answer.dump();
  if (corio_testing::kMemoryIsMeasurable) {
    EXPECT_LT(corio_testing::memory_now().hwm - before.hwm, 32 * 1024) << "KiB";
  }
  co_await transport.close();
  http.close();
}

TEST(StreamableHttpBound, AnEventThatNeverEndsFailsItsStreamAtTheMessageLimit) {
  run_test(endless_event_body());
}

}  // namespace
}  // namespace corio_mcp_test
