// Section 4: shield, a timeout that gives up waiting without killing the work
// (examples/shield.cpp).
#include <string>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

corio::Coro<int> save_to_database(Demo& demo, std::string record, Seconds duration) {
  demo.out("saving {} ...", record);
  try {
    co_await corio::sleep(duration);  // a slow write
  } catch (const corio::CancelledError&) {
    demo.out("the save of {} was cancelled half-way", record);
    throw;
  }
  demo.out("saved {}", record);
  co_return 42;  // the new row's id
}

}  // namespace

corio::Coro<> shield_section(Demo& demo) {
  demo.explain(
      "wait_for cancels what it waits on when time is up. Wrapped in shield(), the task is not");
  demo.explain("cancelled: only the wait is abandoned, and the task runs on to completion.");

  demo.part(fmt::format("co_await wait_for(shield(save), {}s), the save takes {} s", demo.secs(0.1),
                        demo.secs(0.3)));
  corio::Task<int> save = corio::create_task(save_to_database(demo, "order #1001", demo.t(0.3)));
  bool timed_out = false;
  try {
    co_await corio::wait_for(corio::shield(save), demo.t(0.1));
  } catch (const corio::TimeoutError&) {
    timed_out = true;
    demo.out("TimeoutError: gave up waiting; save.done() = {}", save.done());
  }
  demo.expect(timed_out && !save.done(),
              "the wait should time out while the save is still running");
  const int row = co_await save;  // the same task, never cancelled
  demo.out("co_await save -> row {}; save.cancelled() = {}", row, save.cancelled());
  demo.expect(row == 42 && !save.cancelled(), "the shielded save should complete as row 42");
  demo.elapsed_line("the save's own time: the timeout did not cut it short");

  demo.part("the same without shield: co_await wait_for(save, ...)");
  corio::Task<int> unshielded =
      corio::create_task(save_to_database(demo, "order #1002", demo.t(0.3)));
  try {
    co_await corio::wait_for(unshielded, demo.t(0.1));
  } catch (const corio::TimeoutError&) {
    demo.out("TimeoutError; save.cancelled() = {}", unshielded.cancelled());
  }
  demo.expect(unshielded.cancelled(), "without shield, the timeout should cancel the save");
  demo.elapsed_line("the timeout: the save died with the wait");
}

}  // namespace corio_cli::demo
