// StreamableHttpClient against a scripted server (a corio http::Server
// playing an MCP server's part event by event): events without data are
// not messages, the GET stream opened after initialize carries the
// server's requests (answered with POSTs), and a stream that ends before
// its answer is resumed on a GET with Last-Event-ID after the retry delay.
#include <optional>

#include <corio/http/server.hpp>
#include <corio/mcp/streamable_http_client.hpp>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::Request;
using corio::http::Response;
using corio::http::StreamResponseWriter;
using corio::mcp::Client;
using corio::mcp::StreamableHttpClient;

std::string event(const json& message) { return "event: message\ndata: " + message.dump() + "\n\n"; }

Coro<void> write_then_hold(StreamResponseWriter& w, std::string text, corio::Event* hold) {
  co_await w.write(text);
  if (hold) co_await hold->wait();
}

Response sse(std::string text, corio::Event* hold = nullptr) {
  return Response::stream([text = std::move(text), hold](StreamResponseWriter& w) {
    return write_then_hold(w, text, hold);
  }, 200, "text/event-stream");
}

// What the scripted server says. %ID% in call_stream and resume_stream
// stands for the id of the tools/call request.
struct Script {
  std::string call_stream = {};    // the tools/call POST's SSE body, then it ends
  std::string get_stream = {};     // the standalone GET's first events; it stays open
  std::string resume_stream = {};  // a GET with Last-Event-ID; then it ends
};

struct ScriptedServer {
  Script script;
  corio::http::Server http{[] {
    corio::http::ServerOptions o;
    o.access_log = {};
    return o;
  }()};
  std::vector<json> posted;
  std::vector<std::string> last_event_ids;  // of the GETs that had one
  int gets = 0;
  double call_ended = 0, resumed = 0;  // loop times
  json call_id;
  corio::Event hold_get;  // set at the end: the standalone GET ends
  corio::Event got_answer;  // a POST carried an answer to the server's request

  explicit ScriptedServer(Script s) : script(std::move(s)) {
    http.post("/mcp", [this](Request& r) { return on_post(r); });
    http.get("/mcp", [this](Request& r) { return on_get(r); });
    http.del("/mcp", [](Request&) -> Coro<Response> { co_return Response(200); });
  }
  std::string with_call_id(std::string text) const {
    for (std::size_t at; (at = text.find("%ID%")) != std::string::npos;) text.replace(at, 4, call_id.dump());
    return text;
  }
  Coro<Response> on_post(Request& r) {
    json body = co_await r.json();
    posted.push_back(body);
    const std::string method = body.value("method", "");
    if (method == "initialize") {
      Response res = Response::json(corio::mcp::make_response(
          body["id"], {{"protocolVersion", "2025-11-25"},
                       {"capabilities", {{"tools", json::object()}}},
                       {"serverInfo", {{"name", "scripted"}, {"version", "1"}}}}));
      res.headers.set("Mcp-Session-Id", "s-1");
      co_return res;
    }
    if (method == "tools/call") {
      call_id = body["id"];
      call_ended = corio::get_running_loop().time();  // the stream is short: it ends now
      co_return sse(with_call_id(script.call_stream));
    }
    if (!body.contains("method")) got_answer.set();
    co_return Response(202);
  }
  Coro<Response> on_get(Request& r) {
    ++gets;
    if (const auto last = r.headers().get("Last-Event-ID")) {
      last_event_ids.emplace_back(*last);
      resumed = corio::get_running_loop().time();
      co_return sse(with_call_id(script.resume_stream));
    }
    co_return sse(script.get_stream, &hold_get);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http.port()) + "/mcp"; }

  // The client side, once the server runs (its port is known then).
  std::optional<StreamableHttpClient> transport;
  std::optional<Client> client;
  Coro<void> start() {
    co_await http.start("127.0.0.1", 0);
    transport.emplace(url());
    client.emplace(*transport);
  }
  Coro<void> stop() {
    hold_get.set();
    co_await client->close();
    co_await transport->close();
    http.close();
  }
};

Coro<void> events_without_data_are_skipped() {
  ScriptedServer server({.call_stream = "id: ev-1\nretry: 500\ndata: \n\n"  // the priming event
                                        ": a comment\r\n\r\n"
                                        "event: message\r\nid: ev-2\r\ndata: {\"jsonrpc\": \"2.0\",\r\n"
                                        "data:  \"id\": %ID%, \"result\": {\"content\": []}}\r\n\r\n"});
  co_await server.start();
  Client& client = *server.client;
  co_await client.initialize();
  const json result = co_await client.call_tool("t");
  EXPECT_EQ(result, json({{"content", json::array()}}));
  for (const json& m : server.posted) EXPECT_FALSE(m.contains("error")) << "answered an event: " << m.dump();
  EXPECT_EQ(server.posted.back().value("method", ""), "tools/call") << server.posted.back().dump();
  co_await server.stop();
}

TEST(StreamableHttpClient, EventsWithoutDataAreNotMessages) { run_test(events_without_data_are_skipped()); }

Coro<void> get_stream_carries_server_requests() {
  const json elicit = {{"jsonrpc", "2.0"},
                       {"id", "e1"},
                       {"method", "elicitation/create"},
                       {"params",
                        {{"message", "who?"},
                         {"requestedSchema",
                          {{"type", "object"},
                           {"properties",
                            {{"name", {{"type", "string"}, {"default", "anon"}}},
                             {"age", {{"type", "integer"}, {"default", 30}}},
                             {"email", {{"type", "string"}}}}}}}}}};
  const json log = corio::mcp::make_notification("notifications/message", {{"level", "info"}, {"data", "hi"}});
  ScriptedServer server({.get_stream = "id: g0\nretry: 100\ndata:\n\n" + event(log) + event(elicit)});
  co_await server.start();
  Client& client = *server.client;
  client.on_elicitation([](const json&, const RequestContext&) -> Coro<json> {
    co_return json{{"action", "accept"}, {"content", {{"name", "given"}}}};
  });
  std::vector<json> logged;
  client.session().on_notification("notifications/message", [&](const json& p) { logged.push_back(p); });
  co_await client.initialize();
  const json& init = server.posted.front();
  EXPECT_EQ(init["params"]["capabilities"], json({{"elicitation", {{"form", json::object()}}}}));
  co_await corio::wait_for(server.got_answer.wait(), 10s);
  const json& answer = server.posted.back();
  EXPECT_EQ(answer["id"], "e1");
  EXPECT_EQ(answer["result"], json({{"action", "accept"}, {"content", {{"name", "given"}, {"age", 30}}}}))
      << "the defaults fill what the handler left out (SEP-1034), and only those";
  EXPECT_EQ(logged, std::vector<json>{log["params"]});
  EXPECT_EQ(server.gets, 1);
  co_await server.stop();
}

TEST(StreamableHttpClient, TheGetStreamCarriesTheServersRequests) {
  run_test(get_stream_carries_server_requests());
}

Coro<void> ended_stream_is_resumed() {
  ScriptedServer server({.call_stream = "id: c1\nretry: 200\ndata: \n\n",
                         .resume_stream = "id: c1\nretry: 200\ndata: \n\n" +
                                          std::string("id: c2\ndata: {\"jsonrpc\": \"2.0\", \"id\": %ID%, ") +
                                          "\"result\": {\"content\": [], \"isError\": false}}\n\n"});
  co_await server.start();
  Client& client = *server.client;
  co_await client.initialize();
  const json result = co_await client.call_tool("t");
  EXPECT_EQ(result["isError"], false);
  EXPECT_EQ(server.last_event_ids, std::vector<std::string>{"c1"});
  const double waited = server.resumed - server.call_ended;
  EXPECT_GE(waited, 0.2) << "the retry the server asked for";
  EXPECT_LT(waited, 5.0);
  EXPECT_EQ(server.gets, 2) << "the standalone stream, and the resumption";
  co_await server.stop();
}

TEST(StreamableHttpClient, AStreamEndedBeforeItsAnswerIsResumedAfterRetryWithLastEventId) {
  run_test(ended_stream_is_resumed());
}

// A POST's stream without an event id cannot be resumed: the request gets
// an error rather than waiting for ever.
Coro<void> unresumable_stream_fails_the_request() {
  ScriptedServer server({.call_stream = "data: \n\n"});
  co_await server.start();
  Client& client = *server.client;
  co_await client.initialize();
  int code = 0;
  try {
    co_await client.call_tool("t");
  } catch (const corio::mcp::RpcError& e) {
    code = e.code();
  }
  EXPECT_EQ(code, code::internal_error);
  EXPECT_EQ(server.last_event_ids, std::vector<std::string>{});
  co_await server.stop();
}

TEST(StreamableHttpClient, AStreamWithoutEventIdsIsNotResumed) { run_test(unresumable_stream_fails_the_request()); }

}  // namespace
}  // namespace corio_mcp_test
