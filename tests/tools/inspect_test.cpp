// `corio ps / pstree / stats PID` against a running program: example_call_graph
// --hold, started with CORIO_INSPECT=1, keeps its tasks in known states (two
// fetches in download's sleep, one waiting for a Semaphore slot, main in the
// gather, the reporter on an Event). The lines they are suspended at are read
// from the example's source, so the test says which co_await each task is at.
// And the errors: no such process, inspection not enabled, not a pid.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.hpp"
#include "tools/cli_support.hpp"

namespace corio_tools_test {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

#ifdef CORIO_EXAMPLE_CALL_GRAPH

// The line of the example's source that contains text (0 if none does).
unsigned line_of(const std::string& text) {
  std::ifstream in(CORIO_EXAMPLES_DIR "/call_graph.cpp");
  std::string line;
  for (unsigned n = 1; std::getline(in, line); ++n) {
    if (line.find(text) != std::string::npos) return n;
  }
  return 0;
}

// The example held in its states, with its own XDG_RUNTIME_DIR; the corio
// tool the test runs finds it there through the same variable.
class HeldExample {
 public:
  explicit HeldExample(const corio_testing::TempDir& dir) : dir_(dir) {}

  corio::Coro<> start() {
    ::setenv("XDG_RUNTIME_DIR", dir_.path().c_str(), 1);
    corio::SubprocessOptions opts;
    opts.in = corio::Redirect::devnull;
    opts.out = corio::Redirect::pipe;
    opts.env = environment();
    // Named first: g++ 12 rejects a string literal argument inside a co_await.
    std::string program = CORIO_EXAMPLE_CALL_GRAPH;
    std::vector<std::string> args{"--hold"};
    proc_ = co_await corio::create_subprocess_exec(std::move(program), std::move(args), opts);
    for (;;) {
      const std::string line = co_await corio::wait_for(proc_->out.readline(), 30s);
      if (line.empty() || line == "ready\n") break;
    }
  }

  std::map<std::string, std::string> environment() const {
    std::map<std::string, std::string> env;
    env["CORIO_INSPECT"] = "1";
    env["XDG_RUNTIME_DIR"] = dir_.path().string();
    if (const char* path = std::getenv("PATH")) env["PATH"] = path;
    return env;
  }

  std::string pid() const { return std::to_string(proc_->pid()); }
  std::string socket() const { return corio::inspect_socket_path(proc_->pid()); }

  // SIGTERM: the example cancels its fetches and exits 0.
  corio::Coro<int> stop() {
    proc_->terminate();
    co_return co_await corio::wait_for(proc_->wait(), 30s);
  }

  ~HeldExample() { ::unsetenv("XDG_RUNTIME_DIR"); }

 private:
  const corio_testing::TempDir& dir_;
  std::optional<corio::Process> proc_;
};

struct Answers {
  Ran ps, pstree, json, stats;
  bool socket_while_running = false, socket_after_exit = true;
  int exit_code = -1;
};

// Each command line and where its answer goes (a plain function: g++ 12
// rejects braced lists inside a coroutine's co_await).
std::vector<std::pair<Ran*, std::vector<std::string>>> questions(Answers& a, const std::string& pid) {
  return {{&a.ps, {"ps", pid}},
          {&a.pstree, {"pstree", pid}},
          {&a.json, {"ps", pid, "--json"}},
          {&a.stats, {"stats", pid}}};
}

corio::Coro<Answers> inspect_held_example(const corio_testing::TempDir& dir) {
  HeldExample example(dir);
  co_await example.start();
  Answers a;
  struct stat st {};
  a.socket_while_running = ::stat(example.socket().c_str(), &st) == 0;
  for (auto [answer, args] : questions(a, example.pid())) *answer = co_await run_corio(args);
  a.exit_code = co_await example.stop();
  a.socket_after_exit = ::stat(example.socket().c_str(), &st) == 0;
  co_return a;
}

class InspectCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    corio_testing::TempDir dir;
    answers_ = new Answers(corio::run(inspect_held_example(dir)));
  }
  static void TearDownTestSuite() { delete answers_; }
  static Answers* answers_;
};
Answers* InspectCli::answers_ = nullptr;

TEST_F(InspectCli, TheSocketLivesAsLongAsTheProgram) {
  EXPECT_TRUE(answers_->socket_while_running);
  EXPECT_EQ(answers_->exit_code, 0);
  EXPECT_FALSE(answers_->socket_after_exit);
}

TEST_F(InspectCli, PsShowsEachTaskItsStateWhatItAwaitsAndWhere) {
  const Ran& ps = answers_->ps;
  ASSERT_EQ(ps.code, 0) << ps.err;
  const unsigned sleep_line = line_of("co_await corio::sleep(latency)");
  const unsigned slot_line = line_of("co_await connections.scoped_acquire()");
  const unsigned gather_line = line_of("co_await corio::gather(fetches)");
  const unsigned stop_line = line_of("co_await stop.wait()");
  ASSERT_TRUE(sleep_line && slot_line && gather_line && stop_line);
  const auto row = [](int id, const std::string& name, unsigned line, const std::string& what) {
    return ContainsRegex(fmt::format("\n +{} +{} +suspended +call_graph.cpp:{} +{}", id, name, line, what));
  };
  EXPECT_THAT(ps.out, ::testing::StartsWith("  ID  NAME"));
  EXPECT_THAT(ps.out, row(1, "main", gather_line,
                          "gather/wait on Task\\(name='fetch a.example', id=2\\), Task\\(name='fetch "
                          "b.example', id=3\\), Task\\(name='fetch c.example', id=4\\)\n"));
  EXPECT_THAT(ps.out, row(2, "fetch a.example", sleep_line, "sleep \\([0-9.]+ s left\\)\n"));
  EXPECT_THAT(ps.out, row(3, "fetch b.example", sleep_line, "sleep \\([0-9.]+ s left\\)\n"));
  EXPECT_THAT(ps.out, row(4, "fetch c.example", slot_line, "semaphore 0x[0-9a-f]+ \\(1 waiting\\)\n"));
  EXPECT_THAT(ps.out, row(5, "reporter", stop_line, "event 0x[0-9a-f]+ \\(1 waiting\\)\n"));
}

TEST_F(InspectCli, PstreeShowsTheFetchesUnderMainWithTheirChains) {
  const Ran& tree = answers_->pstree;
  ASSERT_EQ(tree.code, 0) << tree.err;
  EXPECT_THAT(tree.out, ::testing::StartsWith("* Task(name='main', id=1) awaiting gather/wait on "));
  EXPECT_THAT(tree.out, HasSubstr("\n+ Awaits:\n   * Task(name='fetch a.example', id=2) awaiting sleep"));
  // fetch a's chain, innermost first: download's sleep, then fetch's co_await of download.
  EXPECT_THAT(tree.out, ContainsRegex(fmt::format(
                            "   \\+ Call stack:\n   \\|   File '[^']*call_graph.cpp', line {}, in [^\n]*"
                            "download[^\n]*\n   \\|   File '[^']*call_graph.cpp', line {}, in [^\n]*fetch",
                            line_of("co_await corio::sleep(latency)"),
                            line_of("co_await download(url, latency)"))));
  EXPECT_THAT(tree.out, HasSubstr("\n   * Task(name='fetch c.example', id=4) awaiting semaphore"));
  EXPECT_THAT(tree.out, HasSubstr("\n* Task(name='reporter', id=5) awaiting event"));
}

TEST_F(InspectCli, PsJsonIsOneRecordPerTask) {
  const Ran& json = answers_->json;
  ASSERT_EQ(json.code, 0) << json.err;
  std::istringstream lines(json.out);
  std::map<std::string, nlohmann::json> by_name;
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    by_name[record["name"]] = record;
  }
  ASSERT_EQ(by_name.size(), 5u) << json.out;
  const nlohmann::json& c = by_name["fetch c.example"];
  EXPECT_EQ(c["id"], 4);
  EXPECT_EQ(c["state"], "suspended");
  EXPECT_EQ(c["awaiting_kind"], "semaphore");
  EXPECT_EQ(c["awaited_by"], nlohmann::json::array({1}));
  ASSERT_EQ(c["stack"].size(), 1u);
  EXPECT_EQ(c["stack"][0]["line"], line_of("co_await connections.scoped_acquire()"));
  EXPECT_EQ(by_name["fetch a.example"]["stack"].size(), 2u);
}

TEST_F(InspectCli, StatsShowsTheLoopCounters) {
  const Ran& stats = answers_->stats;
  ASSERT_EQ(stats.code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("\ntasks_alive    5\n"));
  EXPECT_THAT(stats.out, HasSubstr("\ntasks_created  5\n"));
  EXPECT_THAT(stats.out, ContainsRegex("\nlag_p99        [0-9.]+ s\n"));
}

#endif  // CORIO_EXAMPLE_CALL_GRAPH

TEST(InspectCliErrors, AProcessWithoutInspectionIsToldHowToStartIt) {
  // This test process runs no inspection socket.
  const Ran ran = corio_cli({"ps", std::to_string(::getpid())});
  EXPECT_EQ(ran.code, 1);
  EXPECT_THAT(ran.err, HasSubstr(fmt::format("corio ps: process {} does not serve inspection", ::getpid())));
  EXPECT_THAT(ran.err, HasSubstr("start it with CORIO_INSPECT=1"));
  EXPECT_EQ(ran.out, "");
}

TEST(InspectCliErrors, NoSuchProcess) {
  // Above the kernel's pid_max (at most 2^22): no process has it.
  const Ran ran = corio_cli({"pstree", "99999999"});
  EXPECT_EQ(ran.code, 1);
  EXPECT_THAT(ran.err, HasSubstr("corio pstree: no such process: 99999999"));
}

TEST(InspectCliErrors, NotAPid) {
  const Ran ran = corio_cli({"stats", "nginx"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("corio stats: 'nginx' is not a process id"));
}

}  // namespace
}  // namespace corio_tools_test
