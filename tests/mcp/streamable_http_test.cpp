// The Streamable HTTP transport on a real loopback http::Server, driven by
// the library's own ClientSession: the session lifecycle, SSE streams with
// progress before the answer, JSON answers, every refusal the spec names,
// DELETE cancelling a running call, idle expiry, the GET stream; and
// mcp::Client over StreamableHttpClient, the library's own client side.
// (The official SDK's StreamableHTTPClientTransport drives it too: CTest
// mcp.sdk.client.http.)
#include <corio/mcp/streamable_http_client.hpp>

#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::Headers;
using corio::http::RequestOptions;
using corio::mcp::Context;
using corio::mcp::StreamableHttp;
using corio::mcp::StreamableHttpOptions;
using corio::mcp::ToolResult;

json call(int id, std::string_view method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// An mcp::Server with a slow tool (progress, cancellable), on an HTTP
// server on a free loopback port.
struct Fixture : HttpFixture {
  bool slow_unwound = false;

  explicit Fixture(StreamableHttpOptions opts = {}) : HttpFixture(std::move(opts)) {
    mcp.add_tool("slow", "counts to three", json{{"type", "object"}},
                 [this](const json& args, Context& ctx) { return slow(args, ctx); });
  }
  Coro<ToolResult> slow(const json& args, Context& ctx) {
    struct Flag {
      bool& b;
      ~Flag() { b = true; }
    } flag{slow_unwound};
    const auto pause = std::chrono::milliseconds(args.value("pause_ms", 10));
    for (int i = 1; i <= 3; ++i) {
      co_await corio::sleep(pause);
      co_await ctx.report_progress(i, 3);
    }
    co_return ToolResult::text("counted");
  }
};

// The data lines of an SSE body, as JSON (the priming event's empty data
// is no message).
std::vector<json> events(std::string_view body) {
  std::vector<json> out;
  for (std::size_t at = 0; (at = body.find("data: ", at)) != std::string_view::npos;) {
    const std::size_t end = body.find('\n', at);
    if (end > at + 6) out.push_back(json::parse(body.substr(at + 6, end - at - 6)));
    at = end;
  }
  return out;
}

Coro<void> lifecycle_body() {
  Fixture f;
  co_await f.start();
  ClientResponse init = co_await f.post(kInitialize);
  EXPECT_EQ(init.status(), 200);
  EXPECT_EQ(init.content_type(), "application/json") << "a quick answer alone: no stream";
  const std::string id(init.headers().get_or("Mcp-Session-Id", ""));
  EXPECT_EQ(id.size(), 32u) << "128 random bits, in hex";
  const json answer = co_await init.json();
  EXPECT_EQ(answer["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(f.endpoint.session_count(), 1u);

  json params = {{"name", "slow"}, {"arguments", json::object()}, {"_meta", {{"progressToken", "p"}}}};
  ClientResponse r = co_await f.post(call(2, "tools/call", params), id);
  EXPECT_EQ(r.content_type(), "text/event-stream") << "notifications before the answer: a stream";
  const std::vector<json> got = events(co_await r.read());
  CO_ASSERT(got.size() == 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i]["method"], "notifications/progress");
    EXPECT_EQ(got[i]["params"]["progress"], i + 1);
  }
  EXPECT_EQ(got[3]["id"], 2) << "the answer ends the stream";
  EXPECT_EQ(got[3]["result"]["content"][0]["text"], "counted");
  co_await f.stop();
}

TEST(StreamableHttp, InitializeOpensASessionAndACallStreamsProgressThenItsAnswer) {
  run_test(lifecycle_body());
}

Coro<int> status_of(Fixture& f, const json& body, const std::string& session, Headers extra = {}) {
  ClientResponse r = co_await f.post(body, session, std::move(extra));
  co_await r.read();
  co_return r.status();
}

Headers with(std::string_view name, std::string_view value) {
  Headers h;
  h.set(std::string(name), std::string(value));
  return h;
}

Coro<void> refusals_body() {
  StreamableHttpOptions opts;
  opts.allowed_origins = {"https://app.example"};
  Fixture f(opts);
  co_await f.start();
  const std::string id = co_await f.open_session();
  const json ping = call(5, "ping");
  EXPECT_EQ(co_await status_of(f, ping, ""), 400) << "no session id";
  ClientResponse gone = co_await f.post(ping, std::string(32, '0'));
  EXPECT_EQ(gone.status(), 404);
  EXPECT_EQ((co_await gone.json())["error"]["code"], -32001);
  EXPECT_EQ(co_await status_of(f, ping, id, with("MCP-Protocol-Version", "1999-01-01")), 400);
  EXPECT_EQ(co_await status_of(f, ping, id, with("MCP-Protocol-Version", "2025-06-18")), 200);
  EXPECT_EQ(co_await status_of(f, ping, id, with("Accept", "application/json")), 406);
  EXPECT_EQ(co_await status_of(f, ping, id, with("Content-Type", "text/plain")), 415);
  EXPECT_EQ(co_await status_of(f, ping, id, with("Origin", "http://evil.example")), 403);
  EXPECT_EQ(co_await status_of(f, ping, id, with("Origin", "https://app.example")), 200);
  EXPECT_EQ(co_await status_of(f, ping, id, with("Origin", "http://localhost:5173")), 200);
  ClientResponse bad = co_await f.post(json("{not json"), id);
  EXPECT_EQ(bad.status(), 400);
  EXPECT_EQ((co_await bad.json())["error"]["code"], -32700);
  const json batch_of_one = json::array({ping});
  ClientResponse batch = co_await f.post(batch_of_one, id);
  EXPECT_EQ(batch.status(), 400);
  EXPECT_EQ((co_await batch.json())["error"]["code"], -32600);
  EXPECT_EQ(co_await status_of(f, kInitialize, id), 400) << "initialize cannot name a session";
  ClientResponse put = co_await f.client.put(f.url());
  EXPECT_EQ(put.status(), 405);
  co_await f.stop();
}

TEST(StreamableHttp, EveryRefusalHasItsStatus) { run_test(refusals_body()); }

// The lifecycle and the parser's rules hold over HTTP as over stdio:
// initialize's fields typed (-32602, no JSON library text), params an
// object, a NUL after the message or nesting past the limit a parse error,
// a message over the size limit refused (413).
Coro<json> first_event(Fixture& f, const json& body, const std::string& session) {
  ClientResponse r = co_await f.post(body, session);
  if (r.content_type() == "application/json") co_return co_await r.json();
  const std::vector<json> got = events(co_await r.read());
  co_return got.empty() ? json() : got.front();
}

Coro<void> hostile_messages_body() {
  Fixture f;
  co_await f.start();
  json mistyped = kInitialize;
  mistyped["params"]["protocolVersion"] = 5;
  const json refused = co_await first_event(f, mistyped, "");
  EXPECT_EQ(refused["error"]["code"], code::invalid_params) << refused.dump();
  EXPECT_EQ(refused.dump().find("json.exception"), std::string::npos) << refused.dump();
  json no_info = kInitialize;
  no_info["params"].erase("clientInfo");
  EXPECT_EQ((co_await first_event(f, no_info, ""))["error"]["code"], code::invalid_params);
  const std::string id = co_await f.open_session();
  json array_params = call(3, "ping");
  array_params["params"] = json::array({1});
  EXPECT_EQ((co_await first_event(f, array_params, id))["error"]["code"], code::invalid_params);
  const std::string nul = call(4, "ping").dump() + std::string(1, '\0');
  ClientResponse bad = co_await f.post(json(nul), id);
  EXPECT_EQ(bad.status(), 400);
  EXPECT_EQ((co_await bad.json())["error"]["code"], code::parse_error);
  ClientResponse deep = co_await f.post(json(std::string(100'000, '[') + std::string(100'000, ']')), id);
  EXPECT_EQ(deep.status(), 400);
  EXPECT_EQ((co_await deep.json())["error"]["code"], code::parse_error);
  json padded = call(5, "ping");
  padded["params"]["pad"] = std::string(corio::mcp::kDefaultMaxMessage, ' ');
  ClientResponse big = co_await f.post(padded, id);
  EXPECT_EQ(big.status(), 413);
  EXPECT_EQ((co_await big.json())["error"]["code"], code::invalid_request);
  EXPECT_EQ((co_await first_event(f, call(6, "ping"), id))["result"], json::object()) << "alive";
  co_await f.stop();
}

TEST(StreamableHttp, HostileMessagesGetTheirErrors) { run_test(hostile_messages_body()); }

// A client that does not read its call's SSE stream: the call's
// notifications wait for room (the outbox is bounded) instead of piling
// up in memory; once the client reads, every one arrives, then the answer.
constexpr int kChatter = 5000;  // of 4 KiB each: 20 MiB, more than the sockets hold

Coro<ToolResult> chatter(Context& ctx, bool& finished) {
  const std::string words(4096, 'w');
  for (int i = 1; i <= kChatter; ++i) co_await ctx.report_progress(i, kChatter, words);
  finished = true;
  co_return ToolResult::text("said it all");
}

Coro<void> unread_stream_body() {
  Fixture f;
  bool finished = false;
  f.mcp.add_tool("chatter", "", json{{"type", "object"}},
                 [&finished](const json&, Context& ctx) { return chatter(ctx, finished); });
  co_await f.start();
  const std::string id = co_await f.open_session();
  const json params = {{"name", "chatter"}, {"arguments", json::object()}, {"_meta", {{"progressToken", 1}}}};
  ClientResponse r = co_await f.post(call(2, "tools/call", params), id);
  co_await corio::sleep(300ms);  // the client reads nothing meanwhile
  EXPECT_FALSE(finished) << "every notification was queued: the outbox is unbounded";
  const std::vector<json> got = events(co_await r.read(64u << 20));
  CO_ASSERT(got.size() == static_cast<std::size_t>(kChatter) + 1);
  EXPECT_EQ(got.back()["result"]["content"][0]["text"], "said it all");
  EXPECT_TRUE(finished);
  co_await f.stop();
}

TEST(StreamableHttp, AnUnreadStreamHoldsItsSendersBack) { run_test(unread_stream_body()); }

Coro<void> json_response_body() {
  StreamableHttpOptions opts;
  opts.json_response = true;
  Fixture f(opts);
  co_await f.start();
  const std::string id = co_await f.open_session();
  json params = {{"name", "slow"}, {"arguments", json::object()}, {"_meta", {{"progressToken", 1}}}};
  ClientResponse r = co_await f.post(call(7, "tools/call", params), id);
  EXPECT_EQ(r.content_type(), "application/json");
  const json answer = co_await r.json();
  EXPECT_EQ(answer["id"], 7);
  EXPECT_EQ(answer["result"]["content"][0]["text"], "counted");
  co_await f.stop();
}

TEST(StreamableHttp, JsonResponseModeAnswersWithTheAnswerAlone) { run_test(json_response_body()); }

// DELETE ends the session: the call running in it is cancelled (its
// stream ends without an answer) and the id is gone.
Coro<void> delete_body() {
  Fixture f;
  co_await f.start();
  const std::string id = co_await f.open_session();
  json params = {{"name", "slow"}, {"arguments", {{"pause_ms", 60'000}}}};
  ClientResponse running = co_await f.post(call(3, "tools/call", params), id);
  EXPECT_EQ(running.status(), 200);
  RequestOptions opts;
  opts.headers.set("Mcp-Session-Id", id);
  ClientResponse del = co_await f.client.del(f.url(), std::move(opts));
  EXPECT_EQ(del.status(), 200);
  EXPECT_TRUE(events(co_await running.read()).empty()) << "no answer for a cancelled call";
  const auto unwound = [&f] { return f.slow_unwound; };
  EXPECT_TRUE(co_await eventually(unwound));
  EXPECT_EQ(f.endpoint.session_count(), 0u);
  EXPECT_EQ(co_await status_of(f, call(4, "ping"), id), 404);
  co_await f.stop();
}

TEST(StreamableHttp, DeleteEndsTheSessionAndCancelsItsCalls) { run_test(delete_body()); }

Coro<void> idle_body() {
  StreamableHttpOptions opts;
  opts.session_idle_timeout = 100ms;
  Fixture f(opts);
  co_await f.start();
  const std::string id = co_await f.open_session();
  const auto expired = [&f] { return f.endpoint.session_count() == 0; };
  EXPECT_TRUE(co_await eventually(expired)) << "idle past the timeout";
  EXPECT_EQ(co_await status_of(f, call(2, "ping"), id), 404);
  co_await f.stop();
}

TEST(StreamableHttp, IdleSessionsEnd) { run_test(idle_body()); }

// At max_sessions a new session takes the place of an idle one; while every
// session has a stream open there is no place: 503.
Coro<void> bounded_body() {
  StreamableHttpOptions opts;
  opts.max_sessions = 1;
  opts.keepalive_interval = 20ms;
  Fixture f(opts);
  co_await f.start();
  const std::string first = co_await f.open_session();
  ClientResponse stream = co_await f.open_stream(first);
  EXPECT_EQ(stream.status(), 200);
  EXPECT_EQ(co_await status_of(f, kInitialize, ""), 503) << "the only session is in use";
  stream.release();  // the next keep-alive fails: the session is idle again
  int status = 503;
  for (auto waited = 0ms; status == 503 && waited < 2s; waited += 10ms) {
    co_await corio::sleep(10ms);
    status = co_await status_of(f, kInitialize, "");
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(f.endpoint.session_count(), 1u);
  EXPECT_EQ(co_await status_of(f, call(2, "ping"), first), 404) << "evicted for the new one";
  co_await f.stop();
}

TEST(StreamableHttp, SessionsAreBoundedByEvictingTheIdlest) { run_test(bounded_body()); }

// The GET stream: one per session (409 for a second), kept alive by
// comments while quiet; once its client goes away another may open.
Coro<void> standalone_body() {
  StreamableHttpOptions opts;
  opts.keepalive_interval = 20ms;
  Fixture f(opts);
  co_await f.start();
  const std::string id = co_await f.open_session();
  ClientResponse stream = co_await f.open_stream(id);
  EXPECT_EQ(stream.status(), 200);
  EXPECT_EQ(co_await stream.read_chunk(), "id: 2-0\nretry: 1000\ndata: \n\n") << "the priming event first";
  EXPECT_EQ(co_await stream.read_chunk(), ": keep-alive\n\n");
  ClientResponse second = co_await f.open_stream(id);
  EXPECT_EQ(second.status(), 409);
  co_await second.read();
  stream.release();  // goes away mid-stream: the next keep-alive fails and frees the slot
  int status = 409;
  for (auto waited = 0ms; status == 409 && waited < 2s; waited += 10ms) {
    co_await corio::sleep(10ms);
    ClientResponse again = co_await f.open_stream(id);
    status = again.status();
    again.release();
  }
  EXPECT_EQ(status, 200);
  co_await f.stop();
}

TEST(StreamableHttp, OneGetStreamPerSessionKeptAlive) { run_test(standalone_body()); }

// The library's client transport against its server: the session, SSE
// answers with progress on the way, the revision header, DELETE on close,
// and a session the server ended surfacing as the call's RpcError.
Coro<void> client_transport_body() {
  Fixture f;
  co_await f.start();
  corio::mcp::StreamableHttpClient transport(f.url());
  corio::mcp::Client client(transport);
  std::vector<double> progress;
  client.session().on_notification("notifications/progress", [&progress](const json& p) {
    progress.push_back(p["progress"].get<double>());
  });
  const json init = co_await client.initialize();
  EXPECT_EQ(init["serverInfo"]["name"], "http-test");
  EXPECT_EQ(transport.session_id().size(), 32u);
  EXPECT_EQ(f.endpoint.session_count(), 1u);
  const json tools = co_await client.list_tools();
  EXPECT_EQ(tools.size(), 1u);
  const json r = co_await client.call_tool("slow", json::object(), "tok");
  EXPECT_EQ(r["content"][0]["text"], "counted");
  EXPECT_EQ(progress, (std::vector<double>{1, 2, 3})) << "notifications before the answer";

  f.endpoint.close_sessions();  // the server forgets the session: 404 from now on
  int code = 0;
  try {
    co_await client.call_tool("slow");
  } catch (const corio::mcp::RpcError& e) {
    code = e.code();
  }
  EXPECT_EQ(code, -32001) << "Session not found";
  co_await client.close();
  co_await transport.close();
  co_await f.stop();
}

TEST(StreamableHttp, TheLibrarysClientTransportSpeaksIt) { run_test(client_transport_body()); }

Coro<void> client_close_deletes_body() {
  Fixture f;
  co_await f.start();
  corio::mcp::StreamableHttpClient transport(f.url());
  corio::mcp::Client client(transport);
  co_await client.initialize();
  EXPECT_EQ(f.endpoint.session_count(), 1u);
  co_await client.close();
  co_await transport.close();
  EXPECT_EQ(f.endpoint.session_count(), 0u) << "close() sent DELETE";
  co_await f.stop();
}

TEST(StreamableHttp, ClientTransportCloseEndsTheSession) { run_test(client_close_deletes_body()); }

}  // namespace
}  // namespace corio_mcp_test
