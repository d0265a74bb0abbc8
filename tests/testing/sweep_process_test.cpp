// Unix sockets, subprocesses and pipes in a simulation, and the
// cancellation sweep over them: open_unix_connection and start_unix_server
// on a host's own paths; create_subprocess_exec running a program the
// simulation knows, its pipes (Process::in, out) and its end
// (communicate, wait, terminate); and MCP over stdio, a corio MCP server
// program (Server::run_stdio) under mcp::stdio_client. After each cancel:
// no child is left running (its host's sockets count), the next child
// gives its own answer, and a pipe's bytes are neither lost nor doubled.
#include <csignal>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/mcp.hpp>
#include <corio/pipe_streams.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>
#include <corio/subprocess.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::require;
using sim_support::upper_cased;

namespace {

// ---- Unix sockets ---------------------------------------------------------------------------

Coro<void> unix_echo_server() {
  std::string path = "/run/echo.sock";
  corio::ServerOptions options;
  corio::ClientConnected echo = sim_support::echo_lines;
  corio::Server server =
      co_await corio::start_unix_server(echo, std::move(path), std::move(options));
  co_await server.serve_forever();
}

Coro<void> unix_line(std::string line) {
  std::string path = "/run/echo.sock";
  corio::ConnectOptions options;
  auto [reader, writer] = co_await corio::open_unix_connection(std::move(path), std::move(options));
  writer.write(line + "\n");
  const std::string back = co_await reader.readline();
  writer.close();
  co_await writer.wait_closed();
  require(back == line + "\n", "'" + line + "' came back as '" + back + "'");
}

Coro<int> connect_errno(std::string path) {
  try {
    corio::ConnectOptions options;
    (void)co_await corio::open_unix_connection(std::move(path), std::move(options));
  } catch (const std::system_error& e) {
    co_return e.code().value();
  }
  co_return 0;
}

TEST(SimUnix, APathIsItsHostsOwn) {
  Simulation sim({.seed = 5});
  auto& server = sim.host("server");
  auto& other = sim.host("other");
  server.spawn(unix_echo_server());
  sim.run_for(0.01);
  sim.run_until_complete(server, unix_line("hello"));
  EXPECT_EQ(sim.run_until_complete(other, connect_errno("/run/echo.sock")), ENOENT)
      << "another host's file system has no such socket";
  EXPECT_EQ(sim.run_until_complete(server, connect_errno("/run/none.sock")), ENOENT);
}

TEST(SweepUnix, OpenUnixConnectionAndALine) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    auto& host = sim.host("box");
    host.spawn(unix_echo_server());
    return SweepRun{&host, [] { return unix_line("ping"); }, [] { return unix_line("again"); }};
  }), 2);
}

// ---- programs and their pipes -----------------------------------------------------------------

// Reads stdin to its end and writes it back upper-cased.
Coro<int> upper_main(std::vector<std::string>) {
  corio::StreamReader in = corio::connect_read_pipe(0);
  corio::StreamWriter out = corio::connect_write_pipe(1);
  const std::string all = co_await in.read();
  out.write(upper_cased(all));
  co_await out.drain();
  out.close();
  co_await out.wait_closed();
  co_return 0;
}

// Sleeps until SIGTERM, then exits 3 (its own way of ending); or, run as
// "sleeper plain", sets no handler, so SIGTERM ends it.
Coro<int> sleeper_main(std::vector<std::string> argv) {
  if (argv.size() > 1) {
    co_await corio::sleep(1h);
    co_return 0;
  }
  corio::Event term;
  corio::get_running_loop().add_signal_handler(SIGTERM, [&term] { term.set(); });
  co_await term.wait();
  corio::get_running_loop().remove_signal_handler(SIGTERM);
  co_return 3;
}

void add_programs(Simulation& sim) {
  sim.program("upper", upper_main);
  sim.program("sleeper", sleeper_main);
}

// create_subprocess_exec(program, {arg}), stdin and stdout piped or not,
// its arguments named (the g++ 12 trap of getting-started.md).
Coro<corio::Process> start(std::string program, std::string arg, bool piped) {
  std::vector<std::string> args;
  if (!arg.empty()) args.push_back(std::move(arg));
  corio::SubprocessOptions options;
  if (piped) options.in = options.out = corio::Redirect::pipe;
  co_return co_await corio::create_subprocess_exec(std::move(program), std::move(args), options);
}

Coro<void> communicate_upper(std::string text) {
  corio::Process p = co_await start("upper", "", true);
  std::string input = text;
  auto [out, err] = co_await p.communicate(std::move(input));
  require(out == upper_cased(text) && err.empty(), "'" + text + "' came back as '" + out + "'");
  require(p.returncode() == 0, "upper exited " + std::to_string(p.returncode().value_or(-99)));
}

TEST(SimProcess, AProgramRunsAsAChildWithPipes) {
  Simulation sim({.seed = 2});
  add_programs(sim);
  auto& host = sim.host("host");
  // Past a pipe's window (256 KiB), so that both ends wait for each other.
  sim.run_until_complete(host, communicate_upper(std::string(300000, 'x')));
  EXPECT_EQ(sim.open_sockets(), 0U) << "the pipes are closed";
  EXPECT_THROW(sim.run_until_complete(host, start("absent", "", false)), std::system_error);
}

// The sleeper's returncode once terminate() was sent to it.
Coro<int> exit_code_on_sigterm(std::string arg) {
  corio::Process p = co_await start("sleeper", std::move(arg), false);
  co_await corio::sleep(10ms);
  p.terminate();
  co_return co_await p.wait();
}

TEST(SimProcess, SignalsRunTheProgramsHandlerOrEndIt) {
  Simulation sim({.seed = 2});
  add_programs(sim);
  auto& host = sim.host("host");
  EXPECT_EQ(sim.run_until_complete(host, exit_code_on_sigterm("")), 3) << "its handler ended it";
  EXPECT_EQ(sim.run_until_complete(host, exit_code_on_sigterm("plain")), -SIGTERM);
}

// create_subprocess_exec and communicate cancelled anywhere: the dropped
// Process's pipes close, so the child, its stdin at EOF and its stdout
// gone, ends of itself (nothing leaks); the next child answers.
TEST(SweepProcess, CreateSubprocessExecAndCommunicate) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    add_programs(sim);
    return SweepRun{&sim.host("host"), [] { return communicate_upper("hello"); },
                    [] { return communicate_upper("again"); }};
  }), 1);
}

// A child with no handler for SIGTERM, terminated: cancelled anywhere, the
// Process stays usable (a cancel signals nobody, as subprocess.hpp says),
// so the next operation can end the child and hear how it ended.
struct Child {
  std::optional<corio::Process> process;
};

Coro<void> terminate_plain_sleeper(std::shared_ptr<Child> c) {
  corio::Process p = co_await start("sleeper", "plain", false);
  c->process.emplace(p);
  co_await corio::sleep(10ms);
  p.terminate();
  const int code = co_await p.wait();
  require(code == -SIGTERM, "the sleeper exited " + std::to_string(code));
}

Coro<void> kill_if_running(std::shared_ptr<Child> c) {
  if (!c->process) co_return;
  if (!c->process->returncode()) c->process->kill();
  const int code = co_await c->process->wait();
  require(code == -SIGTERM || code == -SIGKILL, "the sleeper exited " + std::to_string(code));
  c->process.reset();
}

TEST(SweepProcess, TerminateAndWaitLeaveTheProcessUsable) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    add_programs(sim);
    auto c = std::make_shared<Child>();
    return SweepRun{&sim.host("host"), [c] { return terminate_plain_sleeper(c); },
                    [c] { return kill_if_running(c); }};
  }), 2);
}

// The Process outlives the operation: wait() cancelled anywhere leaves it
// usable (the child is not signalled), and the next wait() sees the end
// terminate() asked for.

Coro<void> start_sleeper(std::shared_ptr<Child> c) {
  corio::Process p = co_await start("sleeper", "", false);
  c->process.emplace(std::move(p));
}

TEST(SweepProcess, WaitAndTerminate) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    add_programs(sim);
    auto& host = sim.host("host");
    auto c = std::make_shared<Child>();
    host.spawn(start_sleeper(c));
    auto op = [c]() -> Coro<void> {
      c->process->terminate();
      const int code = co_await c->process->wait();
      require(code == 3, "the handler's exit code is " + std::to_string(code));
    };
    auto after = [c]() -> Coro<void> {
      const int code = co_await c->process->wait();
      require(code == 3, "wait() again: " + std::to_string(code));
      c->process.reset();
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// ---- MCP over stdio -----------------------------------------------------------------------------

using corio::mcp::json;

Coro<int> tools_main(std::vector<std::string>) {
  corio::mcp::Server server("calculator", "1.0.0");
  server.add_tool("add", "Adds two integers", json{{"type", "object"}},
                  [](const json& args, corio::mcp::Context&) -> Coro<corio::mcp::ToolResult> {
                    co_await corio::sleep(5ms);
                    co_return corio::mcp::ToolResult::text(
                        std::to_string(args["a"].get<int>() + args["b"].get<int>()));
                  });
  co_await server.run_stdio();
  co_return 0;
}

Coro<std::string> add(corio::mcp::Client& c, int a, int b) {
  json args = {{"a", a}, {"b", b}};
  json result = co_await c.call_tool("add", args);
  co_return result["content"][0]["text"].get<std::string>();
}

struct Stdio {
  std::unique_ptr<corio::mcp::StdioClient> client;
};

Coro<void> start_stdio(std::shared_ptr<Stdio> s) {
  // Every argument named: g++ 12 destroys a defaulted one twice in a co_await.
  std::string command = "tools";
  std::vector<std::string> args;
  corio::mcp::StdioClientOptions options;
  std::unique_ptr<corio::mcp::StdioClient> client =
      co_await corio::mcp::stdio_client(std::move(command), std::move(args), std::move(options));
  co_await client->initialize();
  s->client = std::move(client);
}

// A tool call over stdio cancelled anywhere; the next call in the same
// session gets its own result, and the server exits 0 when closed.
TEST(SweepMcpStdio, CallTool) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    sim.program("tools", tools_main);
    auto& host = sim.host("host");
    auto s = std::make_shared<Stdio>();
    host.spawn(start_stdio(s));
    auto op = [s]() -> Coro<void> {
      const std::string sum = co_await add(*s->client, 2, 3);
      require(sum == "5", "2 + 3 is " + sum);
    };
    auto after = [s]() -> Coro<void> {
      const std::string sum = co_await add(*s->client, 20, 22);
      require(sum == "42", "the next call got " + sum);
      const int code = co_await s->client->close();
      require(code == 0, "the server exited " + std::to_string(code));
      s->client.reset();
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// The whole session cancelled anywhere (spawn, initialize, a call, the
// close with its exit): no child is left running, a new session works.
Coro<void> stdio_session() {
  auto s = std::make_shared<Stdio>();
  co_await start_stdio(s);
  const std::string sum = co_await add(*s->client, 1, 2);
  require(sum == "3", "1 + 2 is " + sum);
  const int code = co_await s->client->close();
  require(code == 0, "the server exited " + std::to_string(code));
}

TEST(SweepMcpStdio, SessionFromSpawnToExit) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    sim.program("tools", tools_main);
    return SweepRun{&sim.host("host"), stdio_session, stdio_session};
  }), 4);
}

}  // namespace
