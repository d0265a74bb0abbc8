// Streamable HTTP's resumability (SEP-1699) and Host validation, and a
// server-to-client request over it: event ids and the priming event, a
// call whose stream the tool closes and the client resumes (the answer
// still to come, or already stored), a client that missed events and
// resumes after the last one it got, Last-Event-ID that names nothing,
// DNS rebinding through Host, sampling answered by a POST, and the
// server's own notifications on the GET stream.
#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::ClientResponse;
using corio::http::Headers;
using corio::mcp::Context;
using corio::mcp::StreamableHttpOptions;
using corio::mcp::ToolResult;

json initialize(std::string version, std::string capabilities = "{}") {
  return {{"jsonrpc", "2.0"},
          {"id", 1},
          {"method", "initialize"},
          {"params",
           {{"protocolVersion", std::move(version)},
            {"capabilities", json::parse(capabilities)},
            {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}};
}

// meta: the _meta as JSON text (g++ 12 cannot take a braced json inside a
// co_await expression).
json call_tool(int id, std::string name, std::string meta = "{}") {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", std::move(name)}, {"arguments", json::object()}, {"_meta", json::parse(meta)}}}};
}

// One SSE event: its id ("" none) and its data ("" none).
struct Sse {
  std::string id, data;
};

std::vector<Sse> parse_sse(std::string_view body) {
  std::vector<Sse> out;
  for (std::size_t at = 0; at < body.size();) {
    std::size_t end = body.find("\n\n", at);
    if (end == std::string_view::npos) end = body.size();
    Sse e;
    for (std::string_view block = body.substr(at, end - at); !block.empty();) {
      const std::size_t nl = std::min(block.find('\n'), block.size());
      const std::string_view line = block.substr(0, nl);
      if (line.starts_with("id: ")) e.id = line.substr(4);
      if (line.starts_with("data: ")) e.data = line.substr(6);
      block.remove_prefix(std::min(nl + 1, block.size()));
    }
    if (!e.id.empty() || !e.data.empty()) out.push_back(std::move(e));
    at = end + 2;
  }
  return out;
}

struct Fixture : HttpFixture {
  corio::Event release;   // the "parked" tool answers once this is set
  bool answered = false;  // the parked tool has returned

  explicit Fixture(StreamableHttpOptions opts = {}) : HttpFixture(std::move(opts)) {
    mcp.add_tool("parked", "closes its stream, answers when released", json{{"type", "object"}},
                 [this](const json&, Context& ctx) { return parked(ctx); });
    mcp.add_tool("three", "three progress notifications", json{{"type", "object"}},
                 [](const json&, Context& ctx) { return three(ctx); });
    mcp.add_tool("ask", "samples", json{{"type", "object"}},
                 [](const json&, Context& ctx) { return ask(ctx); });
  }
  Coro<ToolResult> parked(Context& ctx) {
    co_await ctx.report_progress(1, 2);
    ctx.close_sse_stream();
    co_await ctx.report_progress(2, 2);  // while no writer is there: stored
    co_await release.wait();
    answered = true;
    co_return ToolResult::text("released");
  }
  static Coro<ToolResult> three(Context& ctx) {
    for (int i = 1; i <= 3; ++i) co_await ctx.report_progress(i, 3);
    co_return ToolResult::text("three");
  }
  static Coro<ToolResult> ask(Context& ctx) {
    const corio::mcp::SamplingResult r = co_await ctx.sample("say hi", 10);
    co_return ToolResult::text("llm: " + r.text());
  }
  Coro<std::string> open_session(std::string version = "2025-11-25", std::string capabilities = "{}") {
    return HttpFixture::open_session(initialize(std::move(version), std::move(capabilities)));
  }
  // The POST's SSE events, its stream read to its end.
  Coro<std::vector<Sse>> post_events(const json& body, const std::string& session) {
    ClientResponse r = co_await post(body, session);
    co_return parse_sse(co_await r.read());
  }
};

Coro<void> ids_and_priming_body() {
  Fixture f;
  co_await f.start();
  const std::string session = co_await f.open_session();
  ClientResponse r = co_await f.post(call_tool(2, "three", R"({"progressToken": "t"})"), session);
  const std::string body = co_await r.read();
  const std::vector<Sse> got = parse_sse(body);
  CO_ASSERT(got.size() == 5u);
  EXPECT_TRUE(body.starts_with("id: " + got[0].id + "\nretry: 1000\ndata: \n\n")) << body;
  const std::string stream = got[0].id.substr(0, got[0].id.find('-'));
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, stream + "-" + std::to_string(i)) << "numbered in order on their stream";
  }
  EXPECT_EQ(json::parse(got[4].data)["result"]["content"][0]["text"], "three");
  // A client of an older revision gets no priming event (its empty data
  // would read as a message there).
  const std::string old = co_await f.open_session("2025-06-18");
  ClientResponse r2 = co_await f.post(call_tool(2, "three", R"({"progressToken": "t"})"), old);
  const std::vector<Sse> old_events = parse_sse(co_await r2.read());
  CO_ASSERT(old_events.size() == 4u);
  EXPECT_FALSE(old_events[0].data.empty());
  co_await f.stop();
}

TEST(StreamableHttpResume, EventsHaveIdsAndAStreamOpensWithAPrimingEvent) { run_test(ids_and_priming_body()); }

// The tool closes its stream: the POST's body ends without the answer,
// which the client gets by resuming, whether it comes later or came before.
Coro<void> closed_mid_call_body(bool answer_before_resuming) {
  Fixture f;
  co_await f.start();
  const std::string session = co_await f.open_session();
  const std::vector<Sse> first = co_await f.post_events(call_tool(2, "parked", R"({"progressToken": "t"})"), session);
  CO_ASSERT(first.size() == 2u);
  EXPECT_EQ(json::parse(first[1].data)["method"], "notifications/progress");
  EXPECT_FALSE(f.answered) << "the stream ended, the call runs on";
  if (answer_before_resuming) {
    f.release.set();
    const bool done = co_await eventually([&f] { return f.answered; });
    CO_ASSERT(done);
  }
  ClientResponse resumed = co_await f.open_stream(session, first[1].id);
  EXPECT_EQ(resumed.status(), 200);
  f.release.set();
  const std::vector<Sse> rest = parse_sse(co_await resumed.read());
  CO_ASSERT(rest.size() == 2u);  // only what came after the last event seen
  EXPECT_EQ(json::parse(rest[0].data)["params"]["progress"], 2);
  const json answer = json::parse(rest[1].data);
  EXPECT_EQ(answer["id"], 2);
  EXPECT_EQ(answer["result"]["content"][0]["text"], "released");
  const std::string stream = first[0].id.substr(0, first[0].id.find('-'));
  EXPECT_EQ(rest[1].id, stream + "-3") << "the same stream, numbered on";
  co_await f.stop();
}

TEST(StreamableHttpResume, AStreamClosedMidCallIsResumedForItsAnswer) { run_test(closed_mid_call_body(false)); }
TEST(StreamableHttpResume, AnAnswerThatCameMeanwhileIsReplayed) { run_test(closed_mid_call_body(true)); }

Coro<int> resume_status(Fixture& f, const std::string& session, const std::string& last) {
  ClientResponse r = co_await f.open_stream(session, last);
  co_await r.read();
  co_return r.status();
}

// A client that missed events resumes from the last one it got: what it
// missed is replayed, written or not, and nothing twice.
Coro<void> replay_body() {
  Fixture f;
  co_await f.start();
  const std::string session = co_await f.open_session();
  const std::vector<Sse> first = co_await f.post_events(call_tool(5, "parked", R"({"progressToken": "t"})"), session);
  CO_ASSERT(first.size() == 2u);
  // As if the first progress notification had been lost on the way.
  ClientResponse again = co_await f.open_stream(session, first[0].id);
  EXPECT_EQ(again.status(), 200);
  f.release.set();
  const std::vector<Sse> replayed = parse_sse(co_await again.read());
  CO_ASSERT(replayed.size() == 3u);
  EXPECT_EQ(replayed[0].id, first[1].id) << "written before, replayed";
  EXPECT_EQ(json::parse(replayed[1].data)["params"]["progress"], 2);
  EXPECT_EQ(json::parse(replayed[2].data)["id"], 5);
  // The stream is over and delivered: a client cannot resume it again past its end.
  EXPECT_EQ(co_await resume_status(f, session, replayed[2].id), 400);
  co_await f.stop();
}

TEST(StreamableHttpResume, AResumptionReplaysWhatCameAfterTheLastEventSeen) { run_test(replay_body()); }

Coro<void> unknown_ids_body() {
  Fixture f;
  co_await f.start();
  const std::string session = co_await f.open_session();
  const std::vector<std::string> bad = {"999-0", "x-1", "1", "1-", "-1", "1-2-3", "1-99999"};
  for (const std::string& last : bad) {
    EXPECT_EQ(co_await resume_status(f, session, last), 400) << last;
  }
  co_await f.stop();
}

TEST(StreamableHttpResume, ALastEventIdOfNoStreamIsRefused) { run_test(unknown_ids_body()); }

// A request answered at once, its answer its only message, gets it as a
// JSON body: no stream, so nothing kept for a resumption either.
Coro<void> quick_answer_body() {
  Fixture f;
  co_await f.start();
  const std::string session = co_await f.open_session();  // initialize: stream 1
  ClientResponse r = co_await f.post(call_tool(2, "three"), session);  // stream 2
  EXPECT_EQ(r.content_type(), "application/json");
  const json answer = co_await r.json();
  EXPECT_EQ(answer["result"]["content"][0]["text"], "three");
  EXPECT_EQ(co_await resume_status(f, session, "2-0"), 400) << "a stream kept would replay its answer";
  co_await f.stop();
}

TEST(StreamableHttpResume, AQuickAnswerAloneIsAJsonBodyAndNothingIsKept) { run_test(quick_answer_body()); }

Coro<int> initialize_status(Fixture& f, Headers headers) {
  ClientResponse r = co_await f.post(initialize("2025-11-25"), {}, std::move(headers));
  co_await r.read();
  co_return r.status();
}

Headers host(std::string value) {
  Headers h;
  h.set("Host", std::move(value));
  return h;
}

Coro<void> host_body() {
  StreamableHttpOptions opts;
  opts.allowed_hosts = {"mcp.example.com"};
  Fixture f(opts);
  co_await f.start();
  const std::string port = std::to_string(f.http.port());
  EXPECT_EQ(co_await initialize_status(f, host("evil.example.com")), 403) << "DNS rebinding, without an Origin";
  EXPECT_EQ(co_await initialize_status(f, host("evil.example.com:" + port)), 403);
  EXPECT_EQ(co_await initialize_status(f, host("127.0.0.1.evil.example.com")), 403);
  EXPECT_EQ(co_await initialize_status(f, host("localhost:" + port)), 200);
  EXPECT_EQ(co_await initialize_status(f, host("[::1]:" + port)), 200);
  EXPECT_EQ(co_await initialize_status(f, host("mcp.example.com")), 200) << "allowed_hosts";
  Headers both = host("127.0.0.1:" + port);
  both.set("Origin", "http://evil.example.com");
  EXPECT_EQ(co_await initialize_status(f, both), 403) << "Origin is checked as before";
  co_await f.stop();
}

TEST(StreamableHttpResume, HostIsValidatedAgainstDnsRebinding) { run_test(host_body()); }

// Sampling during a call: the request goes out on the call's stream, the
// client POSTs its answer (202), and the call's answer follows.
Coro<void> sampling_body() {
  Fixture f;
  co_await f.start();
  const std::string session = co_await f.open_session("2025-11-25", R"({"sampling": {}})");
  ClientResponse stream = co_await f.post(call_tool(3, "ask"), session);
  std::string body;
  while (parse_sse(body).size() < 2) body += co_await stream.read_chunk();
  const json asked = json::parse(parse_sse(body)[1].data);
  EXPECT_EQ(asked["method"], "sampling/createMessage");
  const json reply = {{"jsonrpc", "2.0"},
                      {"id", asked["id"]},
                      {"result", {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "hi"}}}, {"model", "m"}}}};
  ClientResponse ack = co_await f.post(reply, session);
  EXPECT_EQ(ack.status(), 202);
  co_await ack.read();
  body += co_await stream.read();
  const std::vector<Sse> got = parse_sse(body);
  CO_ASSERT(got.size() == 3u);
  EXPECT_EQ(json::parse(got[2].data)["result"]["content"][0]["text"], "llm: hi");
  co_await f.stop();
}

TEST(StreamableHttpResume, SamplingRidesOnTheCallsStream) { run_test(sampling_body()); }

// What the server says on its own (a list changed, a resource updated)
// goes to the client's GET stream, numbered there too, and a client that
// reconnects with the last id it got misses nothing sent meanwhile.
Coro<void> server_notifications_body() {
  Fixture f;
  f.mcp.add_resource({.uri = "a://x", .name = "x"}, [](const std::string& uri)
                         -> Coro<std::vector<corio::mcp::ResourceContents>> {
    co_return std::vector<corio::mcp::ResourceContents>{{.uri = uri, .data = "x"}};
  });
  co_await f.start();
  const std::string session = co_await f.open_session();
  const json subscribe = {{"jsonrpc", "2.0"}, {"id", 9}, {"method", "resources/subscribe"},
                          {"params", {{"uri", "a://x"}}}};
  ClientResponse subscribed = co_await f.post(subscribe, session);
  EXPECT_EQ((co_await subscribed.json())["id"], 9) << "a quick answer alone: a JSON body";
  ClientResponse stream = co_await f.open_stream(session);
  std::string body;
  while (parse_sse(body).empty()) body += co_await stream.read_chunk();  // the priming event
  f.mcp.notify_resource_updated("a://x");
  while (parse_sse(body).size() < 2) body += co_await stream.read_chunk();
  const std::vector<Sse> got = parse_sse(body);
  EXPECT_EQ(json::parse(got[1].data)["method"], "notifications/resources/updated");
  stream.release();  // the client goes away; the server goes on saying things
  f.mcp.add_tool("late", "", json{{"type", "object"}}, [](const json&, Context&) -> Coro<ToolResult> {
    co_return ToolResult::text("late");
  });
  // The resumption takes the stream over from the writer still there (it
  // has yet to notice its client gone) and replays from the last id seen.
  ClientResponse again = co_await f.open_stream(session, got[1].id);
  EXPECT_EQ(again.status(), 200);
  std::string more;
  while (parse_sse(more).empty()) more += co_await again.read_chunk();
  const std::vector<Sse> resumed = parse_sse(more);
  again.release();
  EXPECT_EQ(json::parse(resumed[0].data)["method"], "notifications/tools/list_changed");
  co_await f.stop();
}

TEST(StreamableHttpResume, ServerNotificationsGoToTheGetStreamAndResume) {
  run_test(server_notifications_body());
}

}  // namespace
}  // namespace corio_mcp_test
