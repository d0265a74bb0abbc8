// `corio demo`: the seed programs, section by section, narrated.
#include "demo.hpp"

#include <iterator>
#include <memory>

#include <fmt/core.h>

#include "commands.hpp"
#include <corio/corio.hpp>

namespace corio_cli {

namespace {

struct DemoOptions {
  int section = 0;  // 0: all
  bool fast = false;
};

struct Section {
  const char* title;
  corio::Coro<> (*run)(demo::Demo&);
};

constexpr Section kSections[] = {
    {"gather: three coroutines, one thread", &demo::gather_section},
    {"create_task: start now, await later", &demo::create_task_section},
    {"wait_for over gather(return_exceptions): one deadline for many fetches",
     &demo::wait_for_section},
    {"shield: the timeout gives up waiting, the work goes on", &demo::shield_section},
    {"cancellation: CancelledError at the await, destructors clean up", &demo::cancel_section},
    {"TaskGroup: one child fails, its siblings are cancelled", &demo::task_group_section},
    {"Lock: the counter race, and where it really is", &demo::lock_section},
    {"debug mode and to_thread: a blocking call stalls the loop", &demo::blocking_section},
    {"Queue: producers and consumers, back-pressure, join() and shutdown()", &demo::queue_section},
    {"Semaphore: 100 tasks, at most 5 at a time", &demo::semaphore_section},
    {"team news: five pages sequentially, with threads, with tasks", &demo::news_section},
    {"MCP: the nba-daily-brief server as a child process, spoken to over stdio", &demo::mcp_section},
    {"fetch_all_news: five pages at once with the HTTP client, one deadline", &demo::fetch_section},
};
constexpr int kSectionCount = static_cast<int>(std::size(kSections));

// The whole demo is one asyncio.run(main()): the sections run one after the
// other on the same loop. Returns the total time.
corio::Coro<double> run_sections(demo::Demo& demo, DemoOptions opts) {
  corio::EventLoop& loop = corio::get_running_loop();
  const double start = loop.time();
  fmt::print("corio {} demo: asyncio's model in C++20, one thread, one event loop ({} backend){}\n",
             kVersion, loop.backend_name(), opts.fast ? "; --fast: every delay divided by 10" : "");
  for (int i = 0; i < kSectionCount; ++i) {
    if (opts.section != 0 && opts.section != i + 1) continue;
    demo.heading(i + 1, kSections[i].title);
    co_await kSections[i].run(demo);
  }
  co_return loop.time() - start;
}

int run_demo(const DemoOptions& opts) {
  demo::Demo demo(opts.fast ? 0.1 : 1.0);
  const double total = corio::run(run_sections(demo, opts));
  const int sections = opts.section != 0 ? 1 : kSectionCount;
  fmt::print("\n");
  if (demo.failures() == 0) {
    fmt::print("demo done: {} section{} in {:.2f} s on one thread, every result as expected\n",
               sections, sections == 1 ? "" : "s", total);
    return 0;
  }
  fmt::print("demo done: {} section{} in {:.2f} s, {} unexpected result{} (marked !!)\n", sections,
             sections == 1 ? "" : "s", total, demo.failures(), demo.failures() == 1 ? "" : "s");
  return 1;
}

}  // namespace

Command demo_command() {
  auto opts = std::make_shared<DemoOptions>();
  return Command{
      "demo",
      "Run the seed programs (gather, create_task, wait_for, shield, cancellation, TaskGroup, "
      "Lock, to_thread and debug mode, Queue, Semaphore, team news, MCP, HTTP fetch), narrated",
      "corio demo --section 3 --fast",
      [opts](Options& o) {
        o.option("--section", opts->section,
                 fmt::format("Run only section N (1-{})", kSectionCount), 1, kSectionCount);
        o.flag("--fast", opts->fast, "Divide every delay by 10");
      },
      [opts] { return run_demo(*opts); },
  };
}

}  // namespace corio_cli
