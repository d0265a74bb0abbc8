// StdioTransport and Session against hosts that misbehave (issue 13):
// stdin closed with 100 slow calls in flight (every one answered before
// the process could exit, 50 runs), a host that stops reading stdout
// (reading stops too: memory bounded), and a host that closes stdout
// (the session ends at once, with one log line).
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <set>
#include <thread>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Context;
using corio::mcp::Server;
using corio::mcp::ToolResult;

constexpr int kCalls = 100;
const std::string kAnswerText(4096, 'x');  // 100 of them overfill a 64 KiB pipe

std::string line(const json& message) { return message.dump() + "\n"; }

std::string init_and_calls() {
  std::string out = line({{"jsonrpc", "2.0"},
                          {"id", 0},
                          {"method", "initialize"},
                          {"params",
                           {{"protocolVersion", "2025-11-25"},
                            {"capabilities", json::object()},
                            {"clientInfo", {{"name", "host"}, {"version", "1"}}}}}});
  out += line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  for (int id = 1; id <= kCalls; ++id) {
    out += line({{"jsonrpc", "2.0"},
                 {"id", id},
                 {"method", "tools/call"},
                 {"params", {{"name", "slow"}, {"arguments", json::object()}}}});
  }
  return out;
}

Coro<ToolResult> slow_answer() {
  co_await corio::sleep(1ms);
  co_return ToolResult::text(kAnswerText);
}

void add_slow_tool(Server& server) {
  server.add_tool("slow", "", json{{"type", "object"}},
                  [](const json&, Context&) -> Coro<ToolResult> { return slow_answer(); });
}

// The server's whole main over the given fds, as a process runs it: when
// it returns, corio::run ends and whatever was not written is gone.
Coro<void> serve(int in, int out) {
  StdioTransport transport(corio::connect_read_pipe(in), corio::connect_write_pipe(out));
  Server server("eof", "1");
  add_slow_tool(server);
  co_await server.run(transport);
}

// The host: writes everything, closes the server's stdin, reads to EOF,
// a little slower than the server writes (as a real client parses), so
// that the server's output is still buffered when its last request ends.
// A server stopped early has closed its stdin: EPIPE then ends the
// writing (SIGPIPE, which goes to the writing thread, is blocked here).
void host(int to_server, int from_server, const std::string& input, std::string& output) {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  for (std::size_t at = 0; at < input.size();) {
    const ssize_t n = ::write(to_server, input.data() + at, input.size() - at);
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  ::close(to_server);
  char buf[4096];
  for (ssize_t n; (n = ::read(from_server, buf, sizeof buf)) > 0;) {
    output.append(buf, static_cast<std::size_t>(n));
    std::this_thread::sleep_for(100us);
  }
  ::close(from_server);
}

std::set<int> answered_calls(const std::string& output) {
  std::set<int> ids;
  std::size_t at = 0;
  for (std::size_t nl; (nl = output.find('\n', at)) != std::string::npos; at = nl + 1) {
    const json j = json::parse(output.substr(at, nl - at));  // throws on half a message
    if (j.contains("result") && j["id"].get<int>() > 0) ids.insert(j["id"].get<int>());
  }
  EXPECT_EQ(at, output.size()) << "stdout ends in half a message";
  return ids;
}

// One process's life: main(in, out) run to its end against the host on
// pipes; all the host read from stdout.
std::string against_host(Coro<void> (*main)(int, int), const std::string& input) {
  int c2s[2], s2c[2];
  EXPECT_EQ(::pipe2(c2s, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(s2c, O_CLOEXEC), 0);
  std::string output;
  std::thread peer(host, c2s[1], s2c[0], std::cref(input), std::ref(output));
  corio::run(main(c2s[0], s2c[1]));
  ::close(c2s[0]);
  ::close(s2c[1]);  // the host reads EOF once the loop's duplicate is gone too
  peer.join();
  return output;
}

TEST(StdioHardening, AtEofEveryAcceptedRequestIsAnswered) {
  const std::string input = init_and_calls();
  for (int run = 0; run < 50; ++run) {
    const std::string output = against_host(serve, input);
    ASSERT_EQ(answered_calls(output).size(), static_cast<std::size_t>(kCalls)) << "run " << run;
  }
}

// The server's main cancelled (Ctrl-C, a shutdown) while answers are
// going out, as the process then exits.
Coro<void> serve_then_stop(int in, int out) {
  corio::Task<void> server = corio::create_task(serve(in, out));
  co_await corio::sleep(5ms);
  server.cancel();
  try {
    co_await server;
  } catch (const corio::CancelledError&) {
  }
}

TEST(StdioHardening, CancelledStdoutStillCarriesOnlyWholeMessages) {
  const std::string input = init_and_calls();
  for (int run = 0; run < 10; ++run) answered_calls(against_host(serve_then_stop, input));  // whole lines
}

json ping(int id) { return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}; }

// Polls every 20 ms until size() has not changed for 200 ms.
Coro<void> until_steady(std::function<std::size_t()> size) {
  std::size_t last = size(), steady = 0;
  while (steady < 10) {
    co_await corio::sleep(20ms);
    const std::size_t now = size();
    steady = now == last ? steady + 1 : 0;
    last = now;
  }
}

Coro<void> host_stops_reading() {
  constexpr int kPings = 60'000;
  int c2s[2], s2c[2];
  CO_ASSERT(::pipe2(c2s, O_CLOEXEC) == 0 && ::pipe2(s2c, O_CLOEXEC) == 0);
  StreamWriter server_out = corio::connect_write_pipe(s2c[1]);
  StdioTransport transport(corio::connect_read_pipe(c2s[0]), server_out);
  StreamWriter to_server = corio::connect_write_pipe(c2s[1]);
  StreamReader from_server = corio::connect_read_pipe(s2c[0]);
  for (int fd : {c2s[0], c2s[1], s2c[0], s2c[1]}) ::close(fd);
  Server server("backpressure", "1");
  corio::Task<void> running = corio::create_task(server.run(transport));
  std::string pings;
  for (int id = 1; id <= kPings; ++id) pings += line(ping(id));
  to_server.write(pings);  // about 2.6 MB; the host does not read a byte meanwhile
  auto host_backlog = [&to_server] { return to_server.get_write_buffer_size(); };
  co_await until_steady(host_backlog);
  // Held by the server: the output's high-water mark and the answers to one
  // read's worth of requests, not 60,000 answers (2.4 MB before the fix).
  EXPECT_LT(server_out.get_write_buffer_size(), 512u * 1024) << "the server buffered every answer";
  EXPECT_GT(to_server.get_write_buffer_size(), 0u) << "the server read everything";
  // Then the host reads: every ping is answered, none lost.
  to_server.close();
  std::set<int> ids;
  while (ids.size() < static_cast<std::size_t>(kPings)) {
    const std::string l = co_await corio::wait_for(from_server.readline(), 10s);
    CO_ASSERT(!l.empty());
    ids.insert(json::parse(l)["id"].get<int>());
  }
  co_await running;
}

TEST(StdioHardening, AHostThatStopsReadingStopsTheReading) { run_test(host_stops_reading()); }

Coro<void> host_closes_stdout() {
  int c2s[2], s2c[2];
  CO_ASSERT(::pipe2(c2s, O_CLOEXEC) == 0 && ::pipe2(s2c, O_CLOEXEC) == 0);
  StdioTransport transport(corio::connect_read_pipe(c2s[0]), corio::connect_write_pipe(s2c[1]));
  StreamWriter to_server = corio::connect_write_pipe(c2s[1]);
  for (int fd : {c2s[0], c2s[1], s2c[0], s2c[1]}) ::close(fd);  // s2c[0]: nobody reads stdout
  Server server("epipe", "1");
  corio::Task<void> running = corio::create_task(server.run(transport));
  for (int id = 1; id <= 50; ++id) to_server.write(line(ping(id)));
  bool ended = true;
  try {
    co_await corio::wait_for(running, 5s);  // stdin stays open
  } catch (const corio::TimeoutError&) {
    ended = false;
  }
  EXPECT_TRUE(ended) << "the server went on reading with nobody to answer";
  to_server.close();
}

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(StdioHardening, EpipeOnStdoutEndsTheSessionWithOneLogLine) {
  testing::internal::CaptureStderr();
  run_test(host_closes_stdout());
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(log, "\n"), 1u) << log;
  EXPECT_EQ(count(log, "the output is closed"), 1u) << log;
  EXPECT_EQ(count(log, "never retrieved"), 0u) << log;
}

}  // namespace
}  // namespace corio_mcp_test
