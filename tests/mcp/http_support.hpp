// What the Streamable HTTP tests share: an mcp::Server behind a
// StreamableHttp endpoint on a loopback http::Server (port 0), and a
// ClientSession to speak to it as a client would.
#pragma once

#include <corio/http/client.hpp>
#include <corio/mcp/streamable_http.hpp>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {

inline const json kInitialize = {{"jsonrpc", "2.0"},
                                 {"id", 1},
                                 {"method", "initialize"},
                                 {"params",
                                  {{"protocolVersion", "2025-11-25"},
                                   {"capabilities", json::object()},
                                   {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}};

struct HttpFixture {
  corio::mcp::Server mcp{"http-test", "1.0"};
  corio::http::Server http{[] {
    corio::http::ServerOptions o;
    o.access_log = {};
    return o;
  }()};
  corio::mcp::StreamableHttp endpoint;
  corio::http::ClientSession client;

  explicit HttpFixture(corio::mcp::StreamableHttpOptions opts = {}) : endpoint(mcp, std::move(opts)) {
    endpoint.mount(http);
  }
  Coro<void> start() { co_await http.start("127.0.0.1", 0); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http.port()) + "/mcp"; }

  // POSTs body (a JSON string is sent as its text); session: the
  // Mcp-Session-Id to send ("" none).
  Coro<corio::http::ClientResponse> post(const json& body, const std::string& session = {},
                                         corio::http::Headers extra = {}) {
    corio::http::RequestOptions opts;
    opts.headers = std::move(extra);
    if (!opts.headers.contains("Accept")) opts.headers.set("Accept", "application/json, text/event-stream");
    if (!opts.headers.contains("Content-Type")) opts.headers.set("Content-Type", "application/json");
    if (!session.empty()) opts.headers.set("Mcp-Session-Id", session);
    opts.data = body.is_string() ? body.get<std::string>() : body.dump();
    co_return co_await client.post(url(), std::move(opts));
  }
  // initialize and notifications/initialized: the new session's id.
  Coro<std::string> open_session(json initialize = kInitialize) {
    corio::http::ClientResponse r = co_await post(initialize);
    const std::string id(r.headers().get_or("Mcp-Session-Id", ""));
    co_await r.read();
    const json initialized = {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};
    corio::http::ClientResponse ack = co_await post(initialized, id);
    EXPECT_EQ(ack.status(), 202);
    co_await ack.read();
    co_return id;
  }
  // A GET stream of the session (Last-Event-ID: a resumption, "" none).
  Coro<corio::http::ClientResponse> open_stream(const std::string& session, const std::string& last_event_id = {}) {
    corio::http::RequestOptions get;
    get.headers.set("Accept", "text/event-stream");
    get.headers.set("Mcp-Session-Id", session);
    if (!last_event_id.empty()) get.headers.set("Last-Event-ID", last_event_id);
    co_return co_await client.get(url(), std::move(get));
  }
  Coro<void> stop() {
    endpoint.close_sessions();
    co_await client.close();
    co_await http.shutdown(std::chrono::seconds(1));
  }
};

}  // namespace corio_mcp_test
