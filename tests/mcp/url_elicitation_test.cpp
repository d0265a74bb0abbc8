// URL-mode elicitation end to end, mcp::Server to mcp::Client, over stdio
// pipes and over Streamable HTTP: a tool sends the user to a URL (or
// answers its call with -32042, the URLs to visit first), the application
// says the interaction is over (Server::complete_elicitation), and the
// client hears it (on_elicitation_complete, wait_elicitation_complete),
// once, for the client the elicitation went to.
#include <corio/mcp/streamable_http_client.hpp>
#include <corio/mcp/url_elicitation.hpp>

#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Client;
using corio::mcp::Context;
using corio::mcp::Server;
using corio::mcp::ToolResult;
using corio::mcp::UrlElicitation;
using corio::mcp::UrlElicitationRequiredError;

Coro<ToolResult> sign_in(const json&, Context& ctx) {
  const corio::mcp::ElicitResult r = co_await ctx.elicit_url("Sign in", "https://example.com/login", "login-1");
  co_return ToolResult::text(r.action);
}

Coro<ToolResult> needs_authorization(const json&, Context&) {
  throw UrlElicitationRequiredError({{"auth-2", "https://example.com/authorize", "Authorize the calendar"}});
  co_return ToolResult::text("unreachable");
}

void add_url_tools(Server& server) {
  server.add_tool("sign_in", "sends the user to sign in", json{{"type", "object"}}, sign_in);
  server.add_tool("needs_authorization", "cannot run before an authorization",
                  json{{"type", "object"}}, needs_authorization);
}

Coro<json> accept(const json&, const RequestContext&) { co_return json{{"action", "accept"}}; }

// What every transport must do, with the server serving client.
Coro<void> completions(Server& server, Client& client) {
  std::vector<std::string> heard;
  client.on_elicitation(accept, true);
  client.on_elicitation_complete([&heard](const std::string& id) { heard.push_back(id); });
  co_await client.initialize();
  EXPECT_FALSE(server.complete_elicitation("login-1")) << "not sent to anyone yet";

  const json signed_in = co_await client.call_tool("sign_in");
  EXPECT_EQ(signed_in["content"][0]["text"], "accept");
  EXPECT_TRUE(server.complete_elicitation("login-1"));
  EXPECT_FALSE(server.complete_elicitation("login-1")) << "completed once";
  co_await corio::wait_for(client.wait_elicitation_complete("login-1"), 10s);
  EXPECT_EQ(heard, std::vector<std::string>{"login-1"});

  std::vector<UrlElicitation> listed;
  int code = 0;
  try {
    co_await client.call_tool("needs_authorization");
  } catch (const UrlElicitationRequiredError& e) {
    code = e.code();
    listed = e.elicitations();
  }
  EXPECT_EQ(code, -32042);
  CO_ASSERT(listed.size() == 1u);
  EXPECT_EQ(listed[0].elicitation_id, "auth-2");
  EXPECT_EQ(listed[0].url, "https://example.com/authorize");
  EXPECT_EQ(listed[0].message, "Authorize the calendar");
  // A waiter before the completion is woken by it.
  corio::Task<void> waiter = corio::create_task(client.wait_elicitation_complete("auth-2"));
  co_await corio::sleep(0s);  // the waiter's first step: it waits
  EXPECT_FALSE(waiter.done());
  EXPECT_TRUE(server.complete_elicitation("auth-2")) << "an id the error listed is the client's too";
  co_await corio::wait_for(waiter, 10s);
  EXPECT_EQ(heard, (std::vector<std::string>{"login-1", "auth-2"}));
}

Coro<void> over_stdio() {
  Harness h;
  Server server("url-test");
  add_url_tools(server);
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  StdioTransport client_side(h.from_server, h.to_server);
  Client client(client_side);
  co_await completions(server, client);
  co_await client.close();
  h.to_server.close();
  co_await serving;
}

TEST(UrlElicitation, CompletedOverStdio) { run_test(over_stdio()); }

// Over HTTP the completion belongs to no request: it goes to the client's
// GET stream, which its transport opened at initialize.
Coro<void> over_http() {
  HttpFixture f;
  add_url_tools(f.mcp);
  co_await f.start();
  corio::mcp::StreamableHttpClient transport(f.url());
  Client client(transport);
  co_await completions(f.mcp, client);
  co_await client.close();
  co_await transport.close();
  co_await f.stop();
}

TEST(UrlElicitation, CompletedOverStreamableHttp) { run_test(over_http()); }

// Only the client the elicitation went to hears of its end.
Coro<void> only_its_client() {
  Harness first_pipes, second_pipes;
  Server server("url-test");
  add_url_tools(server);
  corio::Task<void> first_served = corio::create_task(server.run(first_pipes.transport));
  corio::Task<void> second_served = corio::create_task(server.run(second_pipes.transport));
  StdioTransport first_side(first_pipes.from_server, first_pipes.to_server);
  StdioTransport second_side(second_pipes.from_server, second_pipes.to_server);
  Client first(first_side), second(second_side);
  int second_heard = 0;
  first.on_elicitation(accept, true);
  second.on_elicitation(accept, true);
  second.on_elicitation_complete([&second_heard](const std::string&) { ++second_heard; });
  co_await first.initialize();
  co_await second.initialize();
  co_await first.call_tool("sign_in");
  EXPECT_TRUE(server.complete_elicitation("login-1"));
  co_await corio::wait_for(first.wait_elicitation_complete("login-1"), 10s);
  co_await second.list_tools();  // a round trip after the completion went out
  EXPECT_EQ(second_heard, 0);
  co_await first.close();
  co_await second.close();
  first_pipes.to_server.close();
  second_pipes.to_server.close();
  co_await first_served;
  co_await second_served;
}

TEST(UrlElicitation, OnlyTheClientItWentToHearsOfIt) { run_test(only_its_client()); }

TEST(UrlElicitation, TheErrorNamesAtLeastOneElicitation) {
  EXPECT_THROW(UrlElicitationRequiredError({}), corio::ValueError);
  const UrlElicitationRequiredError e({{"a", "https://a.example", "A"}, {"b", "https://b.example", "B"}});
  EXPECT_EQ(e.code(), -32042);
  EXPECT_STREQ(e.what(), "URL elicitations required");
  EXPECT_EQ(e.data()["elicitations"][1],
            json({{"mode", "url"}, {"elicitationId", "b"}, {"url", "https://b.example"}, {"message", "B"}}));
  // A peer's list, read leniently: what is no URL elicitation is left out.
  const json data = json::parse(R"({"elicitations": [{"mode": "form", "elicitationId": "f", "url": "https://f"},
                                                      {"mode": "url", "url": "https://no-id"},
                                                      {"mode": "url", "elicitationId": 7, "url": "https://x"},
                                                      "junk",
                                                      {"mode": "url", "elicitationId": "ok", "url": "https://ok"}]})");
  const std::vector<UrlElicitation> read = UrlElicitationRequiredError::from_data(data);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].elicitation_id, "ok");
  EXPECT_TRUE(UrlElicitationRequiredError::from_data(json("not an object")).empty());
}

// What a server sent a client (and a client was given) is bounded: a peer
// that never completes its elicitations costs a bounded memory.
TEST(UrlElicitation, TheIdsKeptAreBoundedAndTakenOnce) {
  corio::mcp::ElicitationIds ids;
  ids.add("");
  EXPECT_FALSE(ids.contains("")) << "an empty id names nothing";
  for (std::size_t i = 0; i <= corio::mcp::ElicitationIds::kBound; ++i) ids.add("e-" + std::to_string(i));
  EXPECT_FALSE(ids.contains("e-0")) << "the oldest forgotten past the bound";
  EXPECT_TRUE(ids.contains("e-1"));
  ids.add("e-1");  // noted once: taking it once forgets it
  EXPECT_TRUE(ids.take("e-1"));
  EXPECT_FALSE(ids.take("e-1"));
  EXPECT_FALSE(ids.contains("e-1"));
}

}  // namespace
}  // namespace corio_mcp_test
