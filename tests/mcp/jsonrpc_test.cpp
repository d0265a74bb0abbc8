// JSON-RPC 2.0 message validation: every shape of bad input the MCP issue
// lists gets the error code and id the spec asks for; good messages of
// each kind parse to what they say; the builders make what the parser takes.
#include <gtest/gtest.h>

#include <corio/mcp/jsonrpc.hpp>

namespace corio_mcp_test {
namespace {

using corio::mcp::InvalidMessage;
using corio::mcp::json;
using corio::mcp::Message;
using corio::mcp::parse_json;
using corio::mcp::parse_message;
using corio::mcp::RpcError;
namespace code = corio::mcp::error_code;

// The error (code, id) a line of input earns, or nullopt if it is valid.
std::optional<std::pair<int, json>> rejection(std::string_view line) {
  try {
    parse_message(parse_json(line));
    return std::nullopt;
  } catch (const InvalidMessage& e) {
    return std::pair<int, json>(e.code(), e.id());
  } catch (const RpcError& e) {
    return std::pair<int, json>(e.code(), nullptr);
  }
}

TEST(JsonRpc, NotJsonIsAParseError) {
  // 1e9999 is valid JSON syntax that nlohmann refuses as out_of_range, not
  // parse_error: it must still be a parse error, not an escaped exception.
  for (const char* line : {"", "{", "not json", "{\"jsonrpc\": \"2.0\",}", "[1, 2",
                           "{\"jsonrpc\": \"2.0\", \"id\": 1e9999, \"method\": \"ping\"}"}) {
    auto r = rejection(line);
    ASSERT_TRUE(r) << line;
    EXPECT_EQ(r->first, code::parse_error) << line;
    EXPECT_TRUE(r->second.is_null());
  }
}

TEST(JsonRpc, JsonThatIsNotAMessageIsAnInvalidRequest) {
  struct Case {
    const char* line;
    json id;  // what the error answer carries
  };
  const Case cases[] = {
      {"42", nullptr},
      {"\"ping\"", nullptr},
      {"null", nullptr},
      {R"({"id": 1, "method": "ping"})", 1},                       // no jsonrpc
      {R"({"jsonrpc": "1.0", "id": 1, "method": "ping"})", 1},     // wrong version
      {R"({"jsonrpc": 2.0, "id": "a", "method": "ping"})", "a"},   // version not a string
      {R"({"jsonrpc": "2.0", "id": 1, "method": 5})", 1},          // method not a string
      {R"({"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3})", 1},
      {R"({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "s"})", 1},
      {R"({"jsonrpc": "2.0", "id": null, "method": "ping"})", nullptr},  // MCP: never null
      {R"({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})", nullptr},   // MCP: integers
      {R"({"jsonrpc": "2.0", "id": [1], "method": "ping"})", nullptr},
      {R"({"jsonrpc": "2.0", "id": 7, "method": "notifications/initialized"})", 7},
      {R"({"jsonrpc": "2.0", "id": 1})", 1},                        // neither call nor answer
      {R"({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}})", 1},
      {R"({"jsonrpc": "2.0", "result": {}})", nullptr},            // answer without id
      {R"({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}})", 1},
      {R"({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}})", 1},
  };
  for (const Case& c : cases) {
    auto r = rejection(c.line);
    ASSERT_TRUE(r) << c.line;
    EXPECT_EQ(r->first, code::invalid_request) << c.line;
    EXPECT_EQ(r->second, c.id) << c.line;
  }
}

TEST(JsonRpc, RequestsNotificationsAndAnswersParse) {
  Message req = parse_message(parse_json(
      R"({"jsonrpc": "2.0", "id": "abc", "method": "tools/call", "params": {"name": "x"}, "extra": 1})"));
  EXPECT_TRUE(req.is_request());
  EXPECT_EQ(req.id, "abc");
  EXPECT_EQ(req.method, "tools/call");
  EXPECT_EQ(req.params["name"], "x");

  Message numbered = parse_message(parse_json(R"({"jsonrpc": "2.0", "id": 0, "method": "ping"})"));
  EXPECT_TRUE(numbered.is_request());
  EXPECT_EQ(numbered.id, 0);
  EXPECT_TRUE(numbered.params.is_null());

  Message note = parse_message(
      parse_json(R"({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})"));
  EXPECT_TRUE(note.is_notification());
  EXPECT_TRUE(note.id.is_null());

  Message ok = parse_message(parse_json(R"({"jsonrpc": "2.0", "id": 9, "result": {}})"));
  EXPECT_EQ(ok.kind, Message::Kind::response);
  EXPECT_TRUE(ok.is_response());

  Message err = parse_message(
      parse_json(R"({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})"));
  EXPECT_EQ(err.kind, Message::Kind::error);
  EXPECT_EQ(err.error["code"], -32700);
}

TEST(JsonRpc, BuildersMakeWhatTheParserTakes) {
  using namespace corio::mcp;
  EXPECT_TRUE(parse_message(make_request(1, "ping")).is_request());
  EXPECT_FALSE(make_request(1, "ping").contains("params")) << "absent, not null";
  EXPECT_TRUE(parse_message(make_notification("notifications/initialized")).is_notification());
  EXPECT_EQ(parse_message(make_response("r", json::object())).kind, Message::Kind::response);

  const json e = make_error(4, RpcError(error_code::invalid_params, "bad", {{"field", "x"}}));
  EXPECT_EQ(e["error"]["code"], -32602);
  EXPECT_EQ(e["error"]["message"], "bad");
  EXPECT_EQ(e["error"]["data"]["field"], "x");
  EXPECT_EQ(parse_message(e).kind, Message::Kind::error);
  EXPECT_FALSE(make_error(nullptr, -32700, "Parse error")["error"].contains("data"));
}

}  // namespace
}  // namespace corio_mcp_test
