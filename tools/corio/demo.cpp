// `corio demo`: the asyncio tutorial programs corio was ported from,
// section by section, narrated.
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
};

// A section is an example program (examples/<example>.cpp, run as is) or,
// for the stories with no program of their own, a coroutine.
struct Section {
  const char* title;
  const char* story;    // what to watch for, printed before the program runs
  const char* example;  // example_<example>, or nullptr
  corio::Coro<> (*run)(demo::Demo&) = nullptr;
};

constexpr Section kSections[] = {
    {"gather: three coroutines, one thread",
     "Each say() sleeps and hands the loop back, so the three run at once on one thread;\n"
     "the output order is set by the delays (0.3, 0.1, 0.2 s), not by the order in the code.",
     "hello_gather"},
    {"create_task: start now, await later",
     "create_task schedules compute(3) and compute(4) at once; main awaits them later,\n"
     "so their two 0.1 s sleeps overlap.",
     "create_task"},
    {"wait_for over gather(return_exceptions): one deadline for many fetches",
     "One deadline (0.5 s) for three simulated fetches: a failure is one result among the\n"
     "others; a site too slow makes the deadline cancel what is still running.",
     "wait_for_gather"},
    {"shield: the timeout gives up waiting, the work goes on",
     "wait_for cancels what it waits on when time is up. Wrapped in shield(), the task is not\n"
     "cancelled: only the wait is abandoned, and the task runs on to completion.",
     "shield"},
    {"cancellation: CancelledError at the await, destructors clean up",
     "task.cancel() makes the task's current co_await throw CancelledError; destructors are\n"
     "the finally blocks. A task may also catch it and finish its work anyway.",
     "cancellation"},
    {"TaskGroup: one child fails, its siblings are cancelled",
     "b.json fails after 0.1 s: the group cancels c.json (0.5 s) and tg.wait() rethrows\n"
     "b.json's error; a.json had finished.",
     "task_group"},
    {"Lock: the counter race, and where it really is",
     "1000 tasks add one to a counter. With no await between the read and the write nothing\n"
     "is lost; with one, updates are lost; a Lock around read-await-write makes it whole.",
     "counter_race"},
    {"debug mode and to_thread: a blocking call stalls the loop",
     "A 0.5 s blocking call inside a task stalls the ticker, and debug mode names the slow\n"
     "step; under to_thread the same call waits on a pool thread and the ticker runs on.",
     "blocking_to_thread"},
    {"Queue: producers and consumers, back-pressure, join() and shutdown()",
     "Two producers put four items each into a Queue of maxsize 3, two consumers take 0.1 s\n"
     "an item: put() waits while the queue is full, join() returns when all are done.",
     "producer_consumer"},
    {"Semaphore: 100 tasks, at most 5 at a time",
     "100 fetches of 0.05 s each behind Semaphore(5): 20 waves, about 1 s.", "semaphore_limit"},
    {"team news: five pages sequentially, with threads, with tasks", "", nullptr,
     &demo::news_section},
    {"MCP: the nba-daily-brief server as a child process, spoken to over stdio", "", nullptr,
     &demo::mcp_section},
    {"fetch_all_news: five pages at once with the HTTP client, one deadline",
     "A local news site answers each page after 0.5 s, and the knicks page with a 500:\n"
     "gather(return_exceptions) inside wait_for, five GETs at once on one ClientSession.",
     "fetch_all_news"},
    {"deadlock: a lock cycle, and the loop's report instead of silence",
     "Two transfers take two account locks in opposite orders and wait for each other forever.\n"
     "The loop sees that nothing can wake them and reports the cycle with both await chains.",
     "deadlock"},
    {"call graphs: what a gather of fetches waits on, and where",
     "Three fetches in a gather, two waiting for their sites, one for a connection slot: each\n"
     "task's call graph names its chain of coroutines with the file:line of each co_await,\n"
     "what the innermost waits on, and the task awaiting it (`corio pstree PID` from outside).",
     "call_graph"},
};
constexpr int kSectionCount = static_cast<int>(std::size(kSections));

corio::Coro<> run_section(demo::Demo& demo, const Section& section) {
  if (section.example == nullptr) {
    co_await section.run(demo);
    co_return;
  }
  demo.explain(section.story);
  co_await demo::run_example(demo, section.example);
}

// The whole demo is one asyncio.run(main()): the sections run one after the
// other on the same loop. Returns the total time.
corio::Coro<double> run_sections(demo::Demo& demo, DemoOptions opts) {
  corio::EventLoop& loop = corio::get_running_loop();
  const double start = loop.time();
  fmt::print("corio {} demo: asyncio's model in C++20, one thread, one event loop ({} backend)\n",
             kVersion, loop.backend_name());
  for (int i = 0; i < kSectionCount; ++i) {
    if (opts.section != 0 && opts.section != i + 1) continue;
    demo.heading(i + 1, kSections[i].title);
    co_await run_section(demo, kSections[i]);
  }
  co_return loop.time() - start;
}

int run_demo(const DemoOptions& opts) {
  demo::Demo demo;
  const double total = corio::run(run_sections(demo, opts));
  const int sections = opts.section != 0 ? 1 : kSectionCount;
  fmt::print("\n");
  if (demo.failures() == 0) {
    fmt::print("demo done: {} section{} in {:.2f} s, every result as expected\n", sections,
               sections == 1 ? "" : "s", total);
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
      "Run the ports of the Python asyncio tutorial programs (gather, create_task, wait_for, "
      "shield, cancellation, TaskGroup, Lock, to_thread and debug mode, Queue, Semaphore, "
      "team news, MCP, HTTP fetch, a deadlock, call graphs), narrated",
      "corio demo --section 3",
      [opts](Options& o) {
        o.option("--section", opts->section,
                 fmt::format("Run only section N (1-{})", kSectionCount), 1, kSectionCount);
      },
      [opts] { return run_demo(*opts); },
  };
}

}  // namespace corio_cli
