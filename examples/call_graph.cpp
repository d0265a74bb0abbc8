// call_graph: what is a program waiting on, and where? A gather of three
// simulated fetches, and each fetch's call graph taken while they wait.
//
// C++ coroutines keep no call stack, so a debugger stopped here would show
// the event loop and nothing of the fetches. corio::print_call_graph (Python
// 3.14's asyncio.print_call_graph) shows, for a task, its chain of suspended
// coroutines, innermost first, each with the file:line of its co_await, what
// the innermost one waits on, and who awaits the task (main, in the gather).
//
// There is no network: download() sleeps for the round trip. At most two
// connections are open at once (a Semaphore), so the third fetch waits for a
// slot while the first two wait for their sites. The program checks the
// graphs it prints and exits 1 if one is not what it should be.
//
// With --hold the sites never answer: after the graphs the program prints
// "ready" and keeps its tasks in those states until SIGTERM (or Ctrl-C), for
// `corio ps PID` and `corio pstree PID` to look at (run it with
// CORIO_INSPECT=1). The inspection tests do just that.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

struct Site {
  std::string url;
  std::chrono::milliseconds latency;
};

corio::Coro<std::string> download(std::string url, std::chrono::milliseconds latency) {
  co_await corio::sleep(latency);  // the round trip
  co_return "<html>" + url + "</html>";
}

corio::Coro<std::size_t> fetch(std::string url, std::chrono::milliseconds latency,
                               corio::Semaphore& connections) {
  auto slot = co_await connections.scoped_acquire();
  const std::string body = co_await download(url, latency);
  co_return body.size();
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

// What the graph of a fetch must say: suspended in this file, in download's
// sleep (the first two) or waiting for a connection slot in fetch (the
// third), and awaited by main's gather.
int check_graph(const corio::FutureCallGraph& g, bool has_slot) {
  int failures = 0;
  auto expect = [&failures](bool ok, const char* what) {
    if (ok) return;
    std::printf("  !! unexpected: %s\n", what);
    ++failures;
  };
  expect(g.state == "suspended", "the fetch is not suspended");
  if (g.call_stack.empty()) return failures + 1;
  const corio::FrameCallGraphEntry& inner = g.call_stack.front();
  expect(ends_with(inner.file, "call_graph.cpp") && inner.line > 0, "no file:line of this file");
  expect(contains(inner.function, has_slot ? "download" : "fetch"), "the wrong innermost coroutine");
  expect(g.awaiting.kind == (has_slot ? "sleep" : "semaphore"), "the wrong awaited object");
  expect(contains(g.call_stack.back().function, "fetch"), "the chain does not end in fetch()");
  expect(g.awaited_by.size() == 1 && g.awaited_by[0].task.get_name() == "main" &&
             g.awaited_by[0].awaiting.kind == "gather/wait",
         "the fetch is not awaited by main's gather");
  return failures;
}

// Runs once the fetches are all suspended; in --hold mode it then waits for
// `stop` and cancels them.
corio::Coro<int> report(std::vector<corio::Task<std::size_t>> fetches, bool hold,
                        corio::Event& stop) {
  co_await corio::sleep(10ms);
  std::printf("call graph of each fetch, taken while they wait:\n\n");
  int failures = 0;
  for (std::size_t i = 0; i < fetches.size(); ++i) {
    const corio::FutureCallGraph g = corio::capture_call_graph(fetches[i]);
    std::printf("%s\n", corio::format_call_graph(g).c_str());
    failures += check_graph(g, i < 2);
  }
  if (!hold) co_return failures;
  std::printf("ready\n");
  std::fflush(stdout);
  co_await stop.wait();
  for (corio::Task<std::size_t>& f : fetches) f.cancel();
  co_return failures;
}

corio::Coro<int> main_coro(bool hold) {
  corio::current_task()->set_name("main");
  const std::chrono::milliseconds forever = 24h;
  const std::vector<Site> sites{{"a.example", hold ? forever : 300ms},
                                {"b.example", hold ? forever : 200ms},
                                {"c.example", hold ? forever : 100ms}};
  corio::Semaphore connections(2);
  std::vector<corio::Task<std::size_t>> fetches;
  for (const Site& s : sites)
    fetches.push_back(corio::create_task(fetch(s.url, s.latency, connections), "fetch " + s.url));
  corio::Event stop;
  corio::EventLoop& loop = corio::get_running_loop();
  if (hold) loop.add_signal_handler(SIGTERM, [&stop] { stop.set(); });
  corio::Task<int> reporter = corio::create_task(report(fetches, hold, stop), "reporter");
  std::size_t bytes = 0;
  try {
    for (std::size_t n : co_await corio::gather(fetches)) bytes += n;
  } catch (const corio::CancelledError&) {
    if (!hold) throw;  // --hold ends by cancelling the fetches: that is its normal end
  }
  if (hold) loop.remove_signal_handler(SIGTERM);
  int failures = co_await reporter;
  if (!hold && bytes != 3 * std::string_view("<html>a.example</html>").size()) {
    std::printf("  !! unexpected: %zu bytes fetched\n", bytes);
    ++failures;
  }
  std::printf("%s\n", failures == 0 ? "every graph as expected" : "some graphs were wrong");
  co_return failures == 0 ? 0 : 1;
}

}  // namespace app

int main(int argc, char** argv) {
  const bool hold = argc > 1 && std::string_view(argv[1]) == "--hold";
  return corio::run_main(app::main_coro(hold));
}
