// stdio_client against a real child (tests/mcp/servers/stdio_server.cpp):
// calls, the environment it gets, stderr passed on, each step of the
// shutdown sequence (stdin closed, SIGTERM, SIGKILL), a server that dies
// mid-call (ConnectionClosedError, not the server's own errors), and
// cancellation while a call is in flight, of the call and of the owner.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <memory>

#include "mcp/mcp_support.hpp"
#include <corio/mcp/stdio_client.hpp>

namespace corio_mcp_test {
namespace {

using corio::mcp::ConnectionClosedError;
using corio::mcp::RpcError;
using corio::mcp::StdioClient;
using corio::mcp::StdioClientOptions;

constexpr const char* kServer = CORIO_MCP_STDIO_SERVER;

// Started and initialized. (Callers pass named arguments: g++ 12 mishandles a
// braced list inside a co_await expression.)
Coro<std::unique_ptr<StdioClient>> start(std::vector<std::string> args,
                                         StdioClientOptions options) {
  std::unique_ptr<StdioClient> client =
      co_await corio::mcp::stdio_client(kServer, std::move(args), std::move(options));
  co_await client->initialize();
  co_return client;
}

Coro<std::string> text_of(StdioClient& client, std::string tool, json args) {
  const json r = co_await client.call_tool(std::move(tool), std::move(args));
  co_return r["content"][0]["text"].get<std::string>();
}

// A grace no loaded machine sits out: a clean exit on stdin's end must not
// become a SIGTERM because the server was slow to see it.
StdioClientOptions patient() {
  StdioClientOptions options;
  options.grace = 30s;
  return options;
}

// Gone: the loop reaped it, so its pid names nothing any more.
bool gone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

Coro<void> calls_and_closes() {
  ::setenv("CORIO_TEST_SECRET", "s3cr3t", 1);
  std::string errors;
  StdioClientOptions options = patient();
  options.env = {{"CORIO_TEST_GIVEN", "given"}};
  options.on_stderr = [&errors](std::string_view bytes) { errors += bytes; };
  const std::vector<std::string> no_args;
  std::unique_ptr<StdioClient> client = co_await start(no_args, std::move(options));
  const json hello = {{"text", "hello"}};
  EXPECT_EQ(co_await text_of(*client, "echo", hello), "hello");
  const json given = {{"name", "CORIO_TEST_GIVEN"}}, secret = {{"name", "CORIO_TEST_SECRET"}};
  EXPECT_EQ(co_await text_of(*client, "env", given), "given");
  EXPECT_EQ(co_await text_of(*client, "env", secret), "(unset)") << "only the default environment";
  const json path = {{"name", "PATH"}};
  EXPECT_EQ(co_await text_of(*client, "env", path), std::getenv("PATH"));
  const pid_t pid = client->process().pid();
  EXPECT_EQ(co_await client->close(), 0) << "it exits when its stdin ends";
  EXPECT_TRUE(gone(pid));
  EXPECT_NE(errors.find("stdio server " + std::to_string(pid) + ": started"), std::string::npos)
      << "stderr went to on_stderr: " << errors;
}

TEST(StdioClient, CallsWithTheDefaultEnvironmentAndCloses) { run_test(calls_and_closes()); }

// The header's own example: options (and args) left to their defaults. Built
// with g++ 12 it crashed (a defaulted StdioClientOptions, which holds a
// std::function, destroyed twice in the co_await's full-expression); found
// by the simulation's SweepMcpStdio.
Coro<void> starts_with_defaults() {
  const std::vector<std::string> args;
  std::unique_ptr<StdioClient> client = co_await corio::mcp::stdio_client(kServer, args);
  co_await client->initialize();
  const json hello = {{"text", "hi"}};
  EXPECT_EQ(co_await text_of(*client, "echo", hello), "hi");
  EXPECT_EQ(co_await client->close(), 0);
  std::unique_ptr<StdioClient> bare = co_await corio::mcp::stdio_client(kServer);
  co_await bare->initialize();
  EXPECT_EQ(co_await bare->close(), 0);
}

TEST(StdioClient, StartsWithItsOptionsLeftToTheirDefaults) { run_test(starts_with_defaults()); }

// A server that ignores its stdin's end is sent SIGTERM; one that ignores
// SIGTERM too, SIGKILL.
Coro<void> escalates(std::vector<std::string> args, int expected) {
  StdioClientOptions options;
  options.grace = 100ms;
  std::unique_ptr<StdioClient> client = co_await start(std::move(args), std::move(options));
  EXPECT_EQ(co_await client->close(), expected);
}

TEST(StdioClient, SendsSigtermToAServerThatOutlivesItsStdin) {
  run_test(escalates(std::vector<std::string>{"--linger"}, -SIGTERM));
}

TEST(StdioClient, SendsSigkillToAServerThatIgnoresSigterm) {
  run_test(escalates(std::vector<std::string>{"--linger", "--ignore-sigterm"}, -SIGKILL));
}

Coro<void> server_dies_mid_call() {
  std::unique_ptr<StdioClient> client = co_await start(std::vector<std::string>(), patient());
  // An error the server returned stays an RpcError of its own code.
  int refused = 0;
  try {
    co_await client->session().request("no/such/method");
  } catch (const ConnectionClosedError&) {
    ADD_FAILURE() << "the server answered";
  } catch (const RpcError& e) {
    refused = e.code();
  }
  EXPECT_EQ(refused, code::method_not_found);
  int closed = 0;
  try {
    const json status = {{"status", 3}};
    co_await client->call_tool("exit", status);
  } catch (const ConnectionClosedError& e) {
    closed = e.code();
  }
  EXPECT_EQ(closed, code::connection_closed);
  EXPECT_EQ(co_await client->close(), 3);
}

TEST(StdioClient, AServerThatDiesMidCallIsAConnectionClosedError) {
  run_test(server_dies_mid_call());
}

// A call cancelled in flight (a timeout) leaves the client usable.
Coro<void> call_cancelled() {
  std::unique_ptr<StdioClient> client = co_await start(std::vector<std::string>(), patient());
  bool timed_out = false;
  try {
    co_await corio::wait_for(client->call_tool("slow"), 100ms);
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
  const json again = {{"text", "again"}};
  EXPECT_EQ(co_await text_of(*client, "echo", again), "again");
  EXPECT_EQ(co_await client->close(), 0);
}

TEST(StdioClient, ACallCancelledInFlightLeavesTheClientUsable) { run_test(call_cancelled()); }

// The task that owns the client is cancelled while its call is in flight:
// the server is stopped all the same (the destructor's shutdown task).
Coro<void> owner(corio::Event& in_flight, pid_t& pid) {
  StdioClientOptions options;
  options.on_stderr = [&in_flight](std::string_view bytes) {
    if (bytes.find("slow: started") != std::string_view::npos) in_flight.set();
  };
  std::unique_ptr<StdioClient> client =
      co_await start(std::vector<std::string>(), std::move(options));
  pid = client->process().pid();
  co_await client->call_tool("slow");
}

Coro<void> owner_cancelled() {
  corio::Event in_flight;
  pid_t pid = 0;
  corio::Task<void> task = corio::create_task(owner(in_flight, pid));
  co_await in_flight.wait();
  task.cancel();
  bool cancelled = false;
  try {
    co_await task;
  } catch (const corio::CancelledError&) {
    cancelled = true;
  }
  EXPECT_TRUE(cancelled);
  const auto stopped = [pid] { return gone(pid); };
  EXPECT_TRUE(co_await eventually(stopped, 10s)) << "the server outlived its client";
}

TEST(StdioClient, CancellingTheOwnerMidCallStopsTheServer) { run_test(owner_cancelled()); }

}  // namespace
}  // namespace corio_mcp_test
