// Typed tools (typed_tool.hpp): the inputSchema generated from a struct's
// field list (nested structs, arrays, maps, optional fields, descriptions),
// arguments decoded into the struct, and a mismatch reported per field as
// a tool error before the handler runs.
#include <corio/mcp/schema.hpp>
#include <corio/mcp/typed_tool.hpp>

#include "mcp/mcp_support.hpp"

namespace typed_test {

struct Place {
  std::string city;
  std::optional<std::string> country;
};

struct Forecast {
  Place place;
  int days = 0;
  double threshold = 0;
  bool metric = false;
  std::vector<std::string> fields;
  std::map<std::string, int> weights;
  std::optional<int> limit;
  corio::mcp::json extra;
};

// Listed the http layer's way (json_fields.hpp): a typed tool takes it too.
struct Point {
  int x = 0;
};

// Constraints in the list: the inputSchema says them, the call is held to them.
struct Search {
  std::string query;
  int limit = 5;
  std::string order = "relevance";
};

}  // namespace typed_test

template <>
struct corio::mcp::Fields<typed_test::Search> {
  using S = typed_test::Search;
  static constexpr auto list = std::tuple{field("query", &S::query).min_length(1).max_length(40),
                                          field("limit", &S::limit).ge(1).le(20).optional(),
                                          field("order", &S::order).one_of("relevance", "date").optional()};
};

template <>
struct corio::http::Fields<typed_test::Point> {
  static constexpr auto list = std::tuple{field("x", &typed_test::Point::x)};
};

template <>
struct corio::mcp::Fields<typed_test::Place> {
  static constexpr auto list = std::tuple{field("city", &typed_test::Place::city, "The city"),
                                          field("country", &typed_test::Place::country)};
};

template <>
struct corio::mcp::Fields<typed_test::Forecast> {
  using F = typed_test::Forecast;
  static constexpr auto list =
      std::tuple{field("place", &F::place),          field("days", &F::days, "How many days"),
                 field("threshold", &F::threshold), field("metric", &F::metric),
                 field("fields", &F::fields),       field("weights", &F::weights),
                 field("limit", &F::limit),         field("extra", &F::extra)};
};

namespace corio_mcp_test {
namespace {

using corio::mcp::Context;
using corio::mcp::Server;
using corio::mcp::ToolResult;
using typed_test::Forecast;

TEST(McpTypedTool, TheSchemaComesFromTheFieldList) {
  const json schema = corio::mcp::input_schema_of<Forecast>();
  EXPECT_EQ(schema, json::parse(R"({"type": "object",
      "properties": {
        "place": {"type": "object",
                  "properties": {"city": {"type": "string", "description": "The city"},
                                 "country": {"type": "string"}},
                  "required": ["city"]},
        "days": {"type": "integer", "description": "How many days"},
        "threshold": {"type": "number"},
        "metric": {"type": "boolean"},
        "fields": {"type": "array", "items": {"type": "string"}},
        "weights": {"type": "object", "additionalProperties": {"type": "integer"}},
        "limit": {"type": "integer"},
        "extra": {}},
      "required": ["place", "days", "threshold", "metric", "fields", "weights", "extra"]})"));
}

Coro<ToolResult> describe(const Forecast& f, Context&) {
  co_await corio::sleep(std::chrono::milliseconds(1));  // the arguments outlive a suspension
  std::string text = f.place.city + "/" + f.place.country.value_or("-") + " " + std::to_string(f.days) + " " +
                     std::to_string(f.threshold).substr(0, 3) + " " + (f.metric ? "metric" : "imperial") + " ";
  for (const auto& s : f.fields) text += s + ",";
  for (const auto& [k, v] : f.weights) text += k + "=" + std::to_string(v) + ",";
  text += " " + (f.limit ? std::to_string(*f.limit) : std::string("nolimit")) + " " + f.extra.dump();
  co_return ToolResult::text(text);
}

Coro<void> typed_calls_body() {
  Harness h;
  Server server("s");
  corio::mcp::add_tool<Forecast>(server, "forecast", "The weather", describe);
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  ScriptedClient c{h};
  co_await c.initialize();
  const json listed = (co_await c.call("tools/list"))["result"]["tools"][0];
  EXPECT_EQ(listed["inputSchema"], corio::mcp::input_schema_of<Forecast>());
  json r = co_await c.call("tools/call", R"({"name": "forecast", "arguments": {
      "place": {"city": "Oslo", "country": "NO"}, "days": 3, "threshold": 1.5, "metric": true,
      "fields": ["rain", "wind"], "weights": {"a": 1}, "extra": [1]}})");
  EXPECT_EQ(r["result"]["content"][0]["text"], "Oslo/NO 3 1.5 metric rain,wind,a=1, nolimit [1]");
  r = co_await c.call("tools/call", R"({"name": "forecast", "arguments": {
      "place": {"city": "Rome"}, "days": 1, "threshold": 0, "metric": false, "fields": [], "weights": {},
      "limit": 7, "extra": null}})");
  EXPECT_EQ(r["result"]["content"][0]["text"], "Rome/- 1 0.0 imperial  7 null");
  r = co_await c.call("tools/call", R"({"name": "forecast", "arguments": {
      "place": {}, "days": "three", "threshold": 0, "metric": false, "fields": [], "weights": {}, "extra": 1}})");
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  const std::string text = r["result"]["content"][0]["text"];
  EXPECT_NE(text.find("/days"), std::string::npos) << text;
  EXPECT_NE(text.find("/place"), std::string::npos) << "the nested struct's missing field too: " << text;
  h.to_server.close();
  co_await serving;
}

TEST(McpTypedTool, ArgumentsAreDecodedIntoTheStructAndCheckedPerField) { run_test(typed_calls_body()); }

TEST(McpTypedTool, AnHttpFieldListServesAndValidateKeepsItsMcpName) {
  const json schema = corio::mcp::input_schema_of<typed_test::Point>();
  EXPECT_EQ(schema, json::parse(R"({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})"));
  EXPECT_EQ(corio::mcp::validate(schema, json{{"x", "1"}}),
            std::vector<std::string>{"/x: must be of type integer, not string"});
}

Coro<ToolResult> search(const typed_test::Search& args, Context&) {
  co_return ToolResult::text(args.query + " " + std::to_string(args.limit) + " " + args.order);
}

Coro<void> constrained_body() {
  Harness h;
  Server server("s");
  corio::mcp::add_tool<typed_test::Search>(server, "search", "Search the notes", search);
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  ScriptedClient c{h};
  co_await c.initialize();
  const json listed = (co_await c.call("tools/list"))["result"]["tools"][0]["inputSchema"];
  EXPECT_EQ(listed, json::parse(R"({"type": "object", "properties": {
      "query": {"type": "string", "minLength": 1, "maxLength": 40},
      "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
      "order": {"type": "string", "enum": ["relevance", "date"], "default": "relevance"}},
      "required": ["query"]})"));
  json r = co_await c.call("tools/call", R"({"name": "search", "arguments": {"query": "tea"}})");
  EXPECT_EQ(r["result"]["content"][0]["text"], "tea 5 relevance") << "left out: the struct's defaults";
  r = co_await c.call("tools/call", R"({"name": "search", "arguments": {"query": "", "limit": 50, "order": "x"}})");
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  const std::string text = r["result"]["content"][0]["text"];
  for (const char* what : {"/query", "/limit", "/order"}) EXPECT_NE(text.find(what), std::string::npos) << text;
  h.to_server.close();
  co_await serving;
}

TEST(McpTypedTool, ConstraintsReachTheInputSchemaAndHoldTheCall) { run_test(constrained_body()); }

}  // namespace
}  // namespace corio_mcp_test
