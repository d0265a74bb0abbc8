// The JSON-RPC 2.0 specification's own examples (section 7), sent to a
// Session over pipes as a stdio server gets them, and the replies compared
// with the spec's: codes, ids and results (an error's message is corio's
// own words, which the spec leaves free), a batch's replies as a set (their
// order is free). Where MCP differs the table says so: 2025-06-18 and later
// have no batches (corio answers each with one -32600, id null, like an
// empty one), and an id is a string or an integer, never null or fractional.
#include <algorithm>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

struct Case {
  std::string name;
  std::string request;  // one line on the wire
  std::string reply;    // as the spec gives it; "": none
  // MCP 2025-06-18 and later, where it differs: every batch is refused.
  std::optional<std::string> without_batches = std::nullopt;
};

const std::string kInvalidRequest =
    R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null})";
const std::string kParseError =
    R"({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null})";

const std::vector<Case> kSpecExamples = {
    {"rpc call with positional parameters",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1})",
     R"({"jsonrpc": "2.0", "result": 19, "id": 1})"},
    {"rpc call with positional parameters, swapped",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2})",
     R"({"jsonrpc": "2.0", "result": -19, "id": 2})"},
    {"rpc call with named parameters",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3})",
     R"({"jsonrpc": "2.0", "result": 19, "id": 3})"},
    {"rpc call with named parameters, reordered",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4})",
     R"({"jsonrpc": "2.0", "result": 19, "id": 4})"},
    {"a Notification", R"({"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]})", ""},
    {"a Notification without params", R"({"jsonrpc": "2.0", "method": "foobar"})", ""},
    {"rpc call of non-existent method", R"({"jsonrpc": "2.0", "method": "foobar", "id": "1"})",
     R"({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"})"},
    {"rpc call with invalid JSON",
     R"({"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz])", kParseError},
    {"rpc call with invalid Request object", R"({"jsonrpc": "2.0", "method": 1, "params": "bar"})",
     kInvalidRequest},
    {"rpc call Batch, invalid JSON",
     R"([{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method"])",
     kParseError},
    {"rpc call with an empty Array", "[]", kInvalidRequest},
    {"rpc call with an invalid Batch (but not empty)", "[1]", "[" + kInvalidRequest + "]",
     kInvalidRequest},
    {"rpc call with invalid Batch", "[1,2,3]",
     "[" + kInvalidRequest + ", " + kInvalidRequest + ", " + kInvalidRequest + "]",
     kInvalidRequest},
    {"rpc call Batch",
     R"([{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},)"
     R"( {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},)"
     R"( {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},)"
     R"( {"foo": "boo"},)"
     R"( {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},)"
     R"( {"jsonrpc": "2.0", "method": "get_data", "id": "9"}])",
     R"([{"jsonrpc": "2.0", "result": 7, "id": "1"},)"
     R"( {"jsonrpc": "2.0", "result": 19, "id": "2"},)"
     R"( {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},)"
     R"( {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},)"
     R"( {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}])",
     kInvalidRequest},
    {"rpc call Batch (all notifications)",
     R"([{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},)"
     R"( {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}])",
     "", kInvalidRequest},
};

// Invalid Request objects beyond the spec's examples (section 4 and 5.1:
// -32600, with the id when it could be read, else null).
const std::vector<Case> kInvalidObjects = {
    {"an empty object", "{}", kInvalidRequest},
    {"the version alone", R"({"jsonrpc": "2.0"})", kInvalidRequest},
    {"no jsonrpc member", R"({"method": "subtract", "params": [1, 2], "id": 1})",
     R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": 1})"},
    {"another version", R"({"jsonrpc": "1.0", "method": "subtract", "params": [1, 2], "id": 1})",
     R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": 1})"},
    {"a method that is no string", R"({"jsonrpc": "2.0", "method": ["subtract"], "id": 1})",
     R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": 1})"},
    {"a null method in a notification", R"({"jsonrpc": "2.0", "method": null})", kInvalidRequest},
    {"params neither object nor array",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": "bar", "id": 1})",
     R"({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": 1})"},
    {"a notification's params a number", R"({"jsonrpc": "2.0", "method": "update", "params": 5})",
     kInvalidRequest},
    {"an object id", R"({"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": {}})",
     kInvalidRequest},
    {"an array id", R"({"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": [1]})",
     kInvalidRequest},
    {"a boolean id", R"({"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": true})",
     kInvalidRequest},
    // JSON-RPC only discourages these two; MCP forbids them.
    {"a fractional id", R"({"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": 1.5})",
     kInvalidRequest},
    {"a null id", R"({"jsonrpc": "2.0", "method": "subtract", "params": [1, 2], "id": null})",
     kInvalidRequest},
    {"a string", R"("subtract")", kInvalidRequest},
    {"a number", "42", kInvalidRequest},
    {"null", "null", kInvalidRequest},
};

// What the spec fixes of a reply: the version, the id, and the result or
// the error's code; a batch's replies in a canonical order.
json essence(const json& reply) {
  if (reply.is_array()) {
    std::vector<json> items;
    for (const json& r : reply) items.push_back(essence(r));
    std::sort(items.begin(), items.end());
    return items;
  }
  json e = {{"jsonrpc", reply.value("jsonrpc", json())}, {"id", reply.value("id", json("(none)"))}};
  if (reply.contains("error")) {
    e["code"] = reply["error"].value("code", json());
    e["message is a string"] = reply["error"].value("message", json()).is_string();
  } else {
    e["result"] = reply.value("result", json("(none)"));
  }
  return e;
}

void add_spec_methods(Session& session) {
  session.on_request("subtract", [](const json& p, const RequestContext&) -> Coro<json> {
    if (p.is_array()) co_return p.at(0).get<int>() - p.at(1).get<int>();
    co_return p.at("minuend").get<int>() - p.at("subtrahend").get<int>();
  });
  session.on_request("sum", [](const json& p, const RequestContext&) -> Coro<json> {
    int total = 0;
    for (const json& n : p) total += n.get<int>();
    co_return total;
  });
  session.on_request("get_data", [](const json&, const RequestContext&) -> Coro<json> {
    co_return json::array({"hello", 5});
  });
  session.on_request(
      "ping", [](const json&, const RequestContext&) -> Coro<json> { co_return json::object(); });
}

// Each case, then a ping: what comes before the ping's answer is the
// case's (events, not a wait for silence; a request and the ping run as
// tasks of their own, so either answer may come first).
Coro<void> check_cases(const std::vector<Case>* cases, bool batches) {
  Harness h;
  Session session(h.transport);
  session.accept_batches(batches);
  add_spec_methods(session);
  corio::Task<void> server = corio::create_task(session.run());
  for (const Case& c : *cases) {
    const std::string& expected = !batches && c.without_batches ? *c.without_batches : c.reply;
    const json sync = "after " + c.name;
    h.send(c.request);
    h.send(json{{"jsonrpc", "2.0"}, {"id", sync}, {"method", "ping"}}.dump());
    std::vector<json> got;
    for (;;) {
      json reply = co_await h.next();
      if (reply.is_object() && reply["id"] == sync) break;
      got.push_back(essence(reply));
    }
    std::vector<json> want;
    if (!expected.empty()) want.push_back(essence(json::parse(expected)));
    EXPECT_EQ(json(got), json(want)) << c.name;
  }
  h.to_server.close();
  co_await server;
}

// JSON-RPC 2.0 as it is (MCP 2024-11-05 and 2025-03-26 have its batches).
TEST(JsonRpcSpec, Section7ExamplesWithBatches) { run_test(check_cases(&kSpecExamples, true)); }

// MCP 2025-06-18 and later, which removed batches (corio's default).
TEST(JsonRpcSpec, Section7ExamplesWithoutBatches) { run_test(check_cases(&kSpecExamples, false)); }

TEST(JsonRpcSpec, InvalidRequestObjectsAreAnswered) {
  run_test(check_cases(&kInvalidObjects, false));
}

}  // namespace
}  // namespace corio_mcp_test
