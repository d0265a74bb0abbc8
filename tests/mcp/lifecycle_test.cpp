// The MCP lifecycle and the inputs that broke it (issue 13): nothing but
// ping before initialize, one initialize with its fields typed, params an
// object, no JSON library text in an answer, a NUL or a 100,000-deep
// message a parse error, a duplicate in-flight id an error answer, a
// request cancelled in the same read as it arrived no hang at EOF, and
// initialize never cancelled.
#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Context;
using corio::mcp::Server;
using corio::mcp::ToolResult;

json request(int id, std::string method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}, {"params", std::move(params)}};
}

json init_params() {
  return {{"protocolVersion", "2025-11-25"},
          {"capabilities", json::object()},
          {"clientInfo", {{"name", "test"}, {"version", "1"}}}};
}

// A server with a tool that waits until the test opens `gate`, and one
// that notes it ran.
struct Fixture {
  Harness h;
  Server server;
  corio::Event gate;
  int marks = 0;

  Fixture() : h(1 << 20), server("lifecycle", "1") {
    server.add_tool("wait", "", json{{"type", "object"}}, [this](const json&, Context&) -> Coro<ToolResult> {
      return wait_for_gate(gate);
    });
    server.add_tool("mark", "", json{{"type", "object"}}, [this](const json&, Context&) -> Coro<ToolResult> {
      return mark(marks);
    });
  }
  static Coro<ToolResult> wait_for_gate(corio::Event& gate) {
    co_await gate.wait();
    co_return ToolResult::text("opened");
  }
  static Coro<ToolResult> mark(int& marks) {
    ++marks;
    co_return ToolResult::text("marked");
  }
  Coro<json> ask(const json& message) {
    h.send(message.dump());
    co_return co_await h.next();
  }
  Coro<void> initialize() {
    const json r = co_await ask(request(1, "initialize", init_params()));
    EXPECT_TRUE(r.contains("result")) << r.dump();
    h.send(R"({"jsonrpc": "2.0", "method": "notifications/initialized"})");
  }
};

json call(int id, std::string tool) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", json::object()}});
}

json error_of(const json& reply) { return reply.value("error", json::object()); }

void expect_error(const json& reply, int code, const json& id) {
  EXPECT_EQ(error_of(reply).value("code", 0), code) << reply.dump();
  EXPECT_EQ(reply["id"], id) << reply.dump();
  EXPECT_EQ(reply.dump().find("json.exception"), std::string::npos) << reply.dump();
}

Coro<void> lifecycle_is_enforced() {
  Fixture f;
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  expect_error(co_await f.ask(request(1, "tools/list")), code::invalid_request, 1);
  const json pong = co_await f.ask(request(2, "ping"));
  EXPECT_EQ(pong["result"], json::object());
  // (A named vector: a braced list of string literals in a coroutine trips g++ 12.)
  const std::vector<std::string> required = {"protocolVersion", "capabilities", "clientInfo"};
  for (const std::string& key : required) {
    json params = init_params();
    params.erase(key);
    expect_error(co_await f.ask(request(3, "initialize", params)), code::invalid_params, 3);
  }
  json mistyped = init_params();
  mistyped["protocolVersion"] = 5;
  expect_error(co_await f.ask(request(4, "initialize", mistyped)), code::invalid_params, 4);
  mistyped = init_params();
  mistyped["clientInfo"] = json::parse(R"({"name": 7, "version": "1"})");
  expect_error(co_await f.ask(request(5, "initialize", mistyped)), code::invalid_params, 5);
  const json an_array = json::parse("[1]");
  expect_error(co_await f.ask(request(6, "initialize", an_array)), code::invalid_params, 6);
  // The refused ones did not count: this is the first initialize.
  co_await f.initialize();
  expect_error(co_await f.ask(request(7, "initialize", init_params())), code::invalid_request, 7);
  expect_error(co_await f.ask(request(8, "ping", an_array)), code::invalid_params, 8);
  const json listed = co_await f.ask(request(9, "tools/list"));
  EXPECT_EQ(listed["result"]["tools"].size(), 2u);
  f.h.to_server.close();
  co_await running;
}

TEST(Lifecycle, PingOnlyBeforeInitializeOneInitializeTypedParams) { run_test(lifecycle_is_enforced()); }

std::string deep(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

Coro<void> bad_text_is_a_parse_error() {
  Fixture f;
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  co_await f.initialize();
  const std::string ping = request(2, "ping").dump();
  f.h.send(ping + std::string(1, '\0'));
  expect_error(co_await f.h.next(), code::parse_error, nullptr);
  f.h.send(ping + " {}");
  expect_error(co_await f.h.next(), code::parse_error, nullptr);
  f.h.send(deep(100'000));
  expect_error(co_await f.h.next(), code::parse_error, nullptr);
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += "{\"a\":";
  f.h.send(R"({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": )" + objects + "1" +
           std::string(100'000, '}') + "}");
  expect_error(co_await f.h.next(), code::parse_error, nullptr);
  const json pong = co_await f.ask(request(4, "ping"));
  EXPECT_EQ(pong["result"], json::object()) << "the session lives on";
  f.h.to_server.close();
  co_await running;
}

TEST(Lifecycle, NulGarbageAndDeepNestingAreParseErrors) { run_test(bad_text_is_a_parse_error()); }

Coro<void> depth_limit_is_the_servers() {
  Fixture f;
  f.server.json_limits.max_depth = 4;  // the message, params, and two more
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  const std::string ping = R"({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"a": )";
  f.h.send(ping + R"({"b": {}}}})");
  EXPECT_EQ((co_await f.h.next())["result"], json::object());
  f.h.send(ping + R"({"b": {"c": {}}}}})");
  expect_error(co_await f.h.next(), code::parse_error, nullptr);
  f.h.to_server.close();
  co_await running;
}

TEST(Lifecycle, TheDepthLimitIsTheServersToSet) { run_test(depth_limit_is_the_servers()); }

Coro<ToolResult> careless(const json& args) {
  co_return ToolResult::text(args.at("missing").get<std::string>());  // throws json::out_of_range
}

Coro<void> json_library_text_stays_inside() {
  Fixture f;
  f.server.add_tool("careless", "", json{{"type", "object"}},
                    [](const json& args, Context&) -> Coro<ToolResult> { return careless(args); });
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  co_await f.initialize();
  const json r = co_await f.ask(call(2, "careless"));
  EXPECT_EQ(r["result"]["isError"], true) << r.dump();
  EXPECT_EQ(r.dump().find("json.exception"), std::string::npos) << r.dump();
  f.h.to_server.close();
  co_await running;
}

TEST(Lifecycle, NoJsonLibraryTextInAnyAnswer) { run_test(json_library_text_stays_inside()); }

Coro<void> duplicate_ids_get_an_error() {
  Fixture f;
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  co_await f.initialize();
  f.h.send(call(5, "wait").dump());
  f.h.send(call(5, "mark").dump());
  const json refused = co_await f.h.next();
  expect_error(refused, code::invalid_request, 5);
  EXPECT_EQ(f.marks, 0);
  f.gate.set();
  const json answered = co_await f.h.next();
  EXPECT_EQ(answered["id"], 5);
  EXPECT_EQ(answered["result"]["content"][0]["text"], "opened");
  f.h.to_server.close();
  co_await running;
}

TEST(Lifecycle, ADuplicateInFlightIdIsAnErrorAnswer) { run_test(duplicate_ids_get_an_error()); }

json cancelled(int id) {
  return {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", id}}}};
}

// Before the fix the cancelled task never ran its body, so it stayed
// "running" and run() waited for it for ever at EOF.
Coro<void> cancel_in_the_same_read() {
  Fixture f;
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  co_await f.initialize();
  f.h.to_server.write(call(6, "wait").dump() + "\n" + cancelled(6).dump() + "\n");
  const json pong = co_await f.ask(request(7, "ping"));
  EXPECT_EQ(pong["id"], 7) << "the cancelled request gets no answer";
  f.h.to_server.close();
  bool ended = true;
  try {
    co_await corio::wait_for(running, 5s);
  } catch (const corio::TimeoutError&) {
    ended = false;
  }
  EXPECT_TRUE(ended) << "the session hung at EOF";
  f.gate.set();
}

TEST(Lifecycle, ARequestCancelledInTheSameReadDoesNotHangAtEof) { run_test(cancel_in_the_same_read()); }

Coro<void> initialize_is_never_cancelled() {
  Fixture f;
  corio::Task<void> running = corio::create_task(f.server.run(f.h.transport));
  f.h.to_server.write(request(1, "initialize", init_params()).dump() + "\n" + cancelled(1).dump() + "\n");
  const json r = co_await f.h.next();
  EXPECT_EQ(r["id"], 1);
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25") << r.dump();
  f.h.to_server.close();
  co_await running;
}

TEST(Lifecycle, InitializeIsNeverCancelled) { run_test(initialize_is_never_cancelled()); }

// 1025 spaces (over the 1 KiB limit), then a call, and EOF with no
// newline: the whole line is over the limit, so it is refused, never run.
Coro<void> over_limit_without_newline() {
  Harness h(1024);
  Server server("limit", "1");
  int marks = 0;
  server.add_tool("mark", "", json{{"type", "object"}}, [&marks](const json&, Context&) -> Coro<ToolResult> {
    return Fixture::mark(marks);
  });
  corio::Task<void> running = corio::create_task(server.run(h.transport));
  h.send(request(1, "initialize", init_params()).dump());
  EXPECT_TRUE((co_await h.next()).contains("result"));
  // The call comes after the server has dropped the spaces (a pause, so
  // that it reads them first; the fix does not depend on it): then its
  // bytes are all that is left at EOF, and were once taken for a message.
  h.to_server.write(std::string(1025, ' '));  // one atomic pipe write, read at once
  co_await corio::sleep(50ms);
  h.to_server.write(call(2, "mark").dump());  // no newline
  h.to_server.close();
  const json refused = co_await h.next();
  expect_error(refused, code::invalid_request, nullptr);
  co_await running;
  EXPECT_EQ(marks, 0) << "an over-limit message ran";
}

TEST(Lifecycle, AnOverLimitLastLineWithoutNewlineIsRefused) { run_test(over_limit_without_newline()); }

}  // namespace
}  // namespace corio_mcp_test
