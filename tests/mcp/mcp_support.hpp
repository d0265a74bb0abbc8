// What the mcp tests share: a client and a server end over real pipes,
// with the server's side as an MCP stdio server has it.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <functional>

#include <corio/corio.hpp>
#include <corio/mcp/client.hpp>
#include <corio/mcp/server.hpp>
#include <corio/mcp/session.hpp>

#include "async/async_support.hpp"  // CO_ASSERT

namespace corio_mcp_test {

using corio::Coro;
using corio::StreamReader;
using corio::StreamWriter;
using corio::mcp::json;
using corio::mcp::RequestContext;
using corio::mcp::Session;
using corio::mcp::StdioTransport;
namespace code = corio::mcp::error_code;
using namespace std::chrono_literals;

// The server's transport over two pipes, and the client's ends of them.
struct Harness {
  int c2s[2]{-1, -1}, s2c[2]{-1, -1};
  StdioTransport transport;
  StreamWriter to_server;
  StreamReader from_server;

  static StdioTransport make_transport(int (&c2s)[2], int (&s2c)[2], std::size_t max) {
    EXPECT_EQ(::pipe2(c2s, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(s2c, O_CLOEXEC), 0);
    return StdioTransport(corio::connect_read_pipe(c2s[0]), corio::connect_write_pipe(s2c[1]), max);
  }
  explicit Harness(std::size_t max_message = 1024)
      : transport(make_transport(c2s, s2c, max_message)),
        to_server(corio::connect_write_pipe(c2s[1])),
        from_server(corio::connect_read_pipe(s2c[0])) {
    for (int fd : {c2s[0], c2s[1], s2c[0], s2c[1]}) ::close(fd);  // the streams hold duplicates
  }

  void send(std::string_view line) { to_server.write(std::string(line) + "\n"); }
  Coro<json> next() {
    std::string line = co_await corio::wait_for(from_server.readline(), 10s);
    EXPECT_TRUE(line.ends_with("\n")) << "one message per line: " << line;
    co_return json::parse(line);
  }
};

// A scripted client on a harness's pipes, numbering its requests, that can
// also answer what the server asks it.
struct ScriptedClient {
  Harness& h;
  int next_id = 1;

  // params as JSON text: g++ 12 cannot take a braced json initializer
  // inside a co_await expression, and text reads as what goes on the wire.
  void request(int id, const std::string& method, const std::string& params) {
    h.send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", json::parse(params)}}.dump());
  }
  Coro<json> call(std::string method, std::string params = "{}") {
    const int id = next_id++;
    request(id, method, params);
    json reply = co_await h.next();
    EXPECT_EQ(reply["id"], id) << reply.dump();
    co_return reply;
  }
  Coro<json> initialize(std::string version = "2025-11-25", std::string capabilities = "{}") {
    json params = {{"protocolVersion", version},
                   {"capabilities", json::parse(capabilities)},
                   {"clientInfo", {{"name", "test"}, {"version", "1"}}}};
    json r = co_await call("initialize", params.dump());
    h.send(R"({"jsonrpc": "2.0", "method": "notifications/initialized"})");
    co_return r;
  }
  // The result of the server's request.
  void answer(const json& request, const std::string& result) {
    h.send(json{{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", json::parse(result)}}.dump());
  }
};

// Polls cond every 5 ms until it holds or `within` passes; its last value.
// (Name the lambda before the co_await: a closure temporary inside a
// co_await expression trips g++ 12.)
inline Coro<bool> eventually(std::function<bool()> cond, std::chrono::milliseconds within = 2s) {
  for (auto waited = 0ms; !cond() && waited < within; waited += 5ms) co_await corio::sleep(5ms);
  co_return cond();
}

inline void run_test(Coro<void> body) { corio::run(corio::wait_for(std::move(body), 20s)); }

}  // namespace corio_mcp_test
