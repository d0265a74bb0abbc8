// Section 6: TaskGroup, one child fails and its siblings are cancelled
// (examples/task_group.cpp).
#include <stdexcept>
#include <string>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

corio::Coro<std::string> fetch(Demo& demo, std::string name, Seconds delay, bool fail) {
  try {
    co_await corio::sleep(delay);
  } catch (const corio::CancelledError&) {
    demo.out("{}: cancelled by the group", name);
    throw;
  }
  if (fail) {
    demo.out("{}: fails", name);
    throw std::invalid_argument(name + ": unexpected end of input");
  }
  demo.out("{}: done", name);
  co_return name + " contents";
}

const char* state_of(const corio::Task<std::string>& t) {
  if (!t.done()) return "pending";
  if (t.cancelled()) return "cancelled";
  return t.exception() ? "failed" : "finished";
}

}  // namespace

corio::Coro<> task_group_section(Demo& demo) {
  demo.explain(
      "A TaskGroup owns its children (asyncio's `async with TaskGroup() as tg`); the first");
  demo.explain(
      "failure cancels the siblings, and co_await tg.wait() rethrows it once all have ended.");
  demo.explain(fmt::format("  a.json {} s, b.json fails at {} s, c.json would take {} s",
                           demo.secs(0.05), demo.secs(0.1), demo.secs(0.5)));
  corio::TaskGroup tg;
  auto a = tg.create_task(fetch(demo, "a.json", demo.t(0.05), false));
  auto b = tg.create_task(fetch(demo, "b.json", demo.t(0.10), true));
  auto c = tg.create_task(fetch(demo, "c.json", demo.t(0.50), false));
  bool surfaced = false;
  try {
    co_await tg.wait();  // the end of the `async with` block
    demo.out("all fetched");
  } catch (const std::invalid_argument& e) {
    surfaced = true;
    demo.out("co_await tg.wait() threw: {}", e.what());
  }
  demo.out("a.json {}, b.json {}, c.json {}", state_of(a), state_of(b), state_of(c));
  demo.expect(surfaced, "b.json's error should surface from tg.wait()");
  demo.expect(std::string(state_of(a)) == "finished" && std::string(state_of(b)) == "failed" &&
                  std::string(state_of(c)) == "cancelled",
              "a.json should finish, b.json fail, c.json be cancelled");
  demo.elapsed_line("the failure, not c.json's time: the group stopped at the first error");
}

}  // namespace corio_cli::demo
