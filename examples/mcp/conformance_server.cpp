// The server the official MCP conformance suite (@modelcontextprotocol/
// conformance, `conformance server --suite all`) expects: the tools,
// resources, prompts and completions its scenarios call, by the names they
// call them, each answering what the scenario checks. Written on corio's
// public MCP API only; tests/mcp/conformance/run_suite.py runs the suite
// against it (CTest mcp.conformance.server).
//
// Usage: example_mcp_conformance_server [--port N] [--always-stream]
//   --port: 0, the default, is a free port; --always-stream: every answer on
//   an SSE stream (StreamableHttpOptions::quick_answers_as_json = false), for
//   the scenarios that judge POST streams
// Prints its URL (http://127.0.0.1:N/mcp) as the first line on stdout, then
// serves Streamable HTTP until Ctrl-C.
#include <cstdio>
#include <string>

#include <corio/corio.hpp>
#include <corio/http/server.hpp>
#include <corio/mcp/content.hpp>
#include <corio/mcp/server.hpp>
#include <corio/mcp/streamable_http.hpp>

using corio::Coro;
using corio::mcp::Context;
using corio::mcp::json;
using corio::mcp::PromptMessage;
using corio::mcp::ResourceContents;
using corio::mcp::Server;
using corio::mcp::ToolResult;
namespace content = corio::mcp::content;
using namespace std::chrono_literals;

namespace {

// A 1x1 red PNG and a WAV of silence: the smallest valid media there are.
constexpr const char* kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
constexpr const char* kWav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

std::string png() { return *corio::mcp::base64_decode(kPng); }
std::string wav() { return *corio::mcp::base64_decode(kWav); }

ResourceContents text_contents(std::string uri, std::string mime_type, std::string text) {
  return {.uri = std::move(uri), .mime_type = std::move(mime_type), .data = std::move(text)};
}

corio::mcp::PromptMessage user_text(std::string text) { return {.role = "user", .text = std::move(text)}; }

ToolResult blocks(json content) {
  ToolResult r;
  r.content = std::move(content);
  return r;
}

json no_arguments() { return json::parse(R"({"type": "object", "properties": {}})"); }

json one_string(const char* name, const char* description) {
  json schema = {{"type", "object"}, {"required", {name}}};
  schema["properties"][name] = {{"type", "string"}, {"description", description}};
  return schema;
}

// Tools that only return content.
void add_content_tools(Server& s) {
  s.add_tool("test_simple_text", "Returns simple text", no_arguments(),
             [](const json&, Context&) -> Coro<ToolResult> {
               co_return ToolResult::text("This is a simple text response for testing.");
             });
  s.add_tool("test_image_content", "Returns an image", no_arguments(),
             [](const json&, Context&) -> Coro<ToolResult> {
               co_return blocks({content::image(png(), "image/png")});
             });
  s.add_tool("test_audio_content", "Returns audio", no_arguments(),
             [](const json&, Context&) -> Coro<ToolResult> {
               co_return blocks({content::audio(wav(), "audio/wav")});
             });
  s.add_tool("test_embedded_resource", "Returns an embedded resource", no_arguments(),
             [](const json&, Context&) -> Coro<ToolResult> {
               const ResourceContents r =
                   text_contents("test://embedded-resource", "text/plain", "This is an embedded resource content.");
               co_return blocks({content::resource(r)});
             });
  s.add_tool("test_multiple_content_types", "Returns text, an image and a resource", no_arguments(),
             [](const json&, Context&) -> Coro<ToolResult> {
               const ResourceContents r =
                   text_contents("test://mixed-content-resource", "application/json", R"({"test":"data","value":123})");
               co_return blocks({content::text("Multiple content types test:"),
                                 content::image(png(), "image/png"), content::resource(r)});
             });
  s.add_tool("test_error_handling", "Always fails", no_arguments(),
             [](const json&, Context&) -> Coro<ToolResult> {
               co_return ToolResult::error("This tool intentionally returns an error for testing");
             });
  s.add_tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json::parse(R"({
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object",
      "$defs": {"address": {"type": "object",
                            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
      "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
      "additionalProperties": false})"),
             [](const json& args, Context&) -> Coro<ToolResult> { co_return ToolResult::text(args.dump()); });
}

Coro<ToolResult> with_logging(const json&, Context& ctx) {
  co_await ctx.info("Tool execution started");
  co_await corio::sleep(50ms);
  co_await ctx.info("Tool processing data");
  co_await corio::sleep(50ms);
  co_await ctx.info("Tool execution completed");
  co_return ToolResult::text("Logging test completed");
}

Coro<ToolResult> with_progress(const json&, Context& ctx) {
  co_await ctx.report_progress(0, 100);
  co_await corio::sleep(50ms);
  co_await ctx.report_progress(50, 100);
  co_await corio::sleep(50ms);
  co_await ctx.report_progress(100, 100);
  co_return ToolResult::text("Progress test completed");
}

Coro<ToolResult> sampling(const json& args, Context& ctx) {
  const corio::mcp::SamplingResult r = co_await ctx.sample(args["prompt"].get<std::string>(), 100);
  co_return ToolResult::text("LLM response: " + r.text());
}

Coro<ToolResult> elicitation(const json& args, Context& ctx) {
  const corio::mcp::ElicitResult r = co_await ctx.elicit(args["message"].get<std::string>(), json::parse(R"({
      "type": "object",
      "properties": {"username": {"type": "string", "description": "User's response"},
                     "email": {"type": "string", "description": "User's email address"}},
      "required": ["username", "email"]})"));
  co_return ToolResult::text("User response: action=" + r.action + ", content=" + r.content.dump());
}

Coro<ToolResult> elicit_and_report(Context& ctx, json schema) {
  const corio::mcp::ElicitResult r = co_await ctx.elicit("Please fill in the form", std::move(schema));
  co_return ToolResult::text("Elicitation completed: action=" + r.action + ", content=" + r.content.dump());
}

// SEP-1034: a default for every primitive type.
Coro<ToolResult> elicitation_defaults(const json&, Context& ctx) {
  return elicit_and_report(ctx, json::parse(R"({"type": "object", "properties": {
      "name": {"type": "string", "default": "John Doe"},
      "age": {"type": "integer", "default": 30},
      "score": {"type": "number", "default": 95.5},
      "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
      "verified": {"type": "boolean", "default": true}}})"));
}

// SEP-1330: the five shapes of an enum.
Coro<ToolResult> elicitation_enums(const json&, Context& ctx) {
  return elicit_and_report(ctx, json::parse(R"({"type": "object", "properties": {
      "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
      "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"},
                                                   {"const": "value2", "title": "Second Option"},
                                                   {"const": "value3", "title": "Third Option"}]},
      "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                     "enumNames": ["Option One", "Option Two", "Option Three"]},
      "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
      "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                           {"const": "value2", "title": "Second Choice"},
                                                           {"const": "value3", "title": "Third Choice"}]}}}})"));
}

// SEP-1699: the call's SSE stream ends before its answer, which the client
// then gets by resuming the stream (GET with Last-Event-ID).
Coro<ToolResult> reconnection(const json&, Context& ctx) {
  co_await corio::sleep(10ms);
  ctx.close_sse_stream();
  co_await corio::sleep(100ms);
  co_return ToolResult::text("Reconnection test completed successfully");
}

void add_interactive_tools(Server& s) {
  s.add_tool("test_tool_with_logging", "Logs three messages", no_arguments(), with_logging);
  s.add_tool("test_tool_with_progress", "Reports progress", no_arguments(), with_progress);
  s.add_tool("test_sampling", "Asks the client's LLM", one_string("prompt", "The prompt to send to the LLM"),
             sampling);
  s.add_tool("test_elicitation", "Asks the user", one_string("message", "The message to show the user"),
             elicitation);
  s.add_tool("test_elicitation_sep1034_defaults", "Asks with defaults", no_arguments(), elicitation_defaults);
  s.add_tool("test_elicitation_sep1330_enums", "Asks with enums", no_arguments(), elicitation_enums);
  s.add_tool("test_reconnection", "Closes its SSE stream mid-call", no_arguments(), reconnection);
}

void add_resources(Server& s) {
  s.add_resource({.uri = "test://static-text", .name = "static-text", .description = "A static text resource", .mime_type = "text/plain"},
                 [](const std::string& uri) -> Coro<std::vector<ResourceContents>> {
                   co_return std::vector<ResourceContents>{
                       text_contents(uri, "text/plain", "This is the content of the static text resource.")};
                 });
  s.add_resource({.uri = "test://static-binary", .name = "static-binary", .description = "A static binary resource", .mime_type = "image/png"},
                 [](const std::string& uri) -> Coro<std::vector<ResourceContents>> {
                   co_return std::vector<ResourceContents>{ResourceContents{.uri = uri, .mime_type = "image/png", .data = png(), .binary = true}};
                 });
  s.add_resource({.uri = "test://watched-resource", .name = "watched-resource", .description = "A resource to subscribe to", .mime_type = "text/plain"},
                 [](const std::string& uri) -> Coro<std::vector<ResourceContents>> {
                   co_return std::vector<ResourceContents>{text_contents(uri, "text/plain", "Watched resource content")};
                 });
  s.add_resource_template(
      {.uri_template = "test://template/{id}/data", .name = "template", .description = "A resource per id", .mime_type = "application/json"},
      [](const std::string& uri, const std::map<std::string, std::string>& vars)
          -> Coro<std::vector<ResourceContents>> {
        const std::string& id = vars.at("id");
        const json data = {{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
        co_return std::vector<ResourceContents>{text_contents(uri, "application/json", data.dump())};
      });
}

void add_prompts(Server& s) {
  s.add_prompt({.name = "test_simple_prompt", .description = "A prompt without arguments"},
               [](const json&) -> Coro<std::vector<PromptMessage>> {
                 co_return std::vector<PromptMessage>{user_text("This is a simple prompt for testing.")};
               });
  s.add_prompt({.name = "test_prompt_with_arguments",
                .description = "A prompt with two arguments",
                .arguments = {{"arg1", "First test argument", true}, {"arg2", "Second test argument", true}}},
               [](const json& args) -> Coro<std::vector<PromptMessage>> {
                 const std::string text = "Prompt with arguments: arg1='" + args["arg1"].get<std::string>() +
                                          "', arg2='" + args["arg2"].get<std::string>() + "'";
                 co_return std::vector<PromptMessage>{user_text(text)};
               });
  s.add_prompt({.name = "test_prompt_with_embedded_resource",
                .description = "A prompt embedding a resource",
                .arguments = {{"resourceUri", "URI of the resource to embed", true}}},
               [](const json& args) -> Coro<std::vector<PromptMessage>> {
                 const ResourceContents r = text_contents(args["resourceUri"].get<std::string>(), "text/plain",
                                                          "Embedded resource content for testing.");
                 co_return std::vector<PromptMessage>{
                     PromptMessage::with("user", content::resource(r)),
                     user_text("Please process the embedded resource above.")};
               });
  s.add_prompt({.name = "test_prompt_with_image", .description = "A prompt with an image"},
               [](const json&) -> Coro<std::vector<PromptMessage>> {
                 co_return std::vector<PromptMessage>{PromptMessage::with("user", content::image(png(), "image/png")),
                                                      user_text("Please analyze the image above.")};
               });
}

Coro<corio::mcp::Completion> complete(const corio::mcp::CompletionRequest& req) {
  co_return corio::mcp::Completion::matching(req.value, {"paris", "park", "party", "test", "testing"});
}

corio::Coro<void> serve(Server& server, std::uint16_t port, bool always_stream) {
  corio::http::ServerOptions options;
  options.access_log = {};  // stderr stays for what goes wrong
  corio::http::Server http(options);
  corio::mcp::StreamableHttpOptions endpoint_options;
  endpoint_options.quick_answers_as_json = !always_stream;
  corio::mcp::StreamableHttp endpoint(server, endpoint_options);
  endpoint.mount(http);
  co_await http.start("127.0.0.1", port);
  std::printf("http://127.0.0.1:%u/mcp\n", http.port());
  std::fflush(stdout);
  co_await http.serve_forever();
}

}  // namespace

int main(int argc, char** argv) {
  std::uint16_t port = 0;
  bool always_stream = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--port" && i + 1 < argc) {
      port = static_cast<std::uint16_t>(std::stoul(argv[++i]));
    } else if (std::string(argv[i]) == "--always-stream") {
      always_stream = true;
    } else {
      std::fprintf(stderr, "usage: %s [--port N] [--always-stream]\n", argv[0]);
      return 2;
    }
  }
  Server server("corio-conformance-server", "1.0.0");
  add_content_tools(server);
  add_interactive_tools(server);
  add_resources(server);
  add_prompts(server);
  server.on_completion(complete);
  return corio::run_main(serve(server, port, always_stream));
}
