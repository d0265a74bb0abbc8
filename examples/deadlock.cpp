// A deadlock on purpose, and the loop's report of it.
//
// Two transfers between the same two accounts, each account behind a Lock.
// transfer(a, b) takes a's lock, then (after an await) b's; transfer(b, a)
// takes them in the other order. Each ends up holding one lock and waiting for
// the other: a lock cycle. asyncio would sleep forever in silence; corio's
// loop sees that every task is suspended and nothing (no timer, no socket, no
// thread) can wake them, and reports the wait-for graph through its exception
// handler: the cycle, then each task's await chain with file:line.
//
// Part 1 (the default, OnDeadlock::report): the handler prints the report and
// breaks the cycle by cancelling one transfer, whose lock guard then releases
// its lock, so the other transfer completes. Part 2 (OnDeadlock::raise): run()
// itself throws DeadlockError. The program checks what it got and exits 0
// only if both reports named the cycle. The fix, in real code: take the locks
// in one global order (here, by account number).
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

struct Account {
  int number;
  int balance;
  corio::Lock lock;
};

corio::Coro<> transfer(Account* from, Account* to, int amount) {
  auto from_guard = co_await from->lock.scoped_lock();
  co_await corio::sleep(10ms);  // an await while holding a lock: the other transfer runs here
  auto to_guard = co_await to->lock.scoped_lock();
  from->balance -= amount;
  to->balance += amount;
}

bool names_the_cycle(const std::string& report) {
  return report.find("deadlock: every task is suspended and nothing can wake them") == 0 &&
         report.find("cycle: Task(name='a->b'") != std::string::npos &&
         report.find("Task(name='b->a'") != std::string::npos &&
         report.find("held by Task(name=") != std::string::npos;
}

// Both transfers at once, as tasks named after their direction.
std::pair<corio::Task<void>, corio::Task<void>> start_both(Account* a, Account* b) {
  return {corio::create_task(transfer(a, b, 30), "a->b"),
          corio::create_task(transfer(b, a, 20), "b->a")};
}

// `*report` gets what the loop's handler was told.
corio::Coro<bool> report_and_break(std::string* report) {
  Account a{1, 100, {}}, b{2, 100, {}};
  auto [ab, ba] = start_both(&a, &b);
  corio::get_running_loop().set_exception_handler(
      [report, ab = ab](corio::EventLoop&, const corio::ExceptionContext& context) mutable {
        *report = context.message;
        std::printf("the loop's exception handler got:\n\n%s\n\n", context.message.c_str());
        std::printf("the handler cancels a->b to break the cycle\n");
        ab.cancel();
      });
  try {
    co_await ab;
  } catch (const corio::CancelledError&) {
    std::printf("a->b was cancelled; its guard released account 1\n");
  }
  co_await ba;
  std::printf("b->a completed: account 1 has %d, account 2 has %d\n", a.balance, b.balance);
  co_return a.balance == 120 && b.balance == 80;
}

// Raise mode cancels main; gather passes the cancellation to both transfers.
corio::Coro<> both_or_nothing() {
  Account a{1, 100, {}}, b{2, 100, {}};
  auto [ab, ba] = start_both(&a, &b);
  co_await corio::gather(ab, ba);
}

}  // namespace app

int main() {
  std::printf("part 1: OnDeadlock::report (the default)\n\n");
  std::string report;
  const bool balanced = corio::run(app::report_and_break(&report));

  std::printf("\npart 2: OnDeadlock::raise\n\n");
  corio::RunOptions opts;
  opts.on_deadlock = corio::OnDeadlock::raise;
  std::string raised;
  try {
    corio::run(app::both_or_nothing(), opts);
  } catch (const corio::DeadlockError& e) {
    raised = e.what();
    std::printf("run() threw DeadlockError; its first line: %s\n",
                raised.substr(0, raised.find('\n')).c_str());
  }
  const bool ok = balanced && app::names_the_cycle(report) && app::names_the_cycle(raised);
  std::printf("%s\n", ok ? "both reports named the cycle" : "!! a report was not as expected");
  return ok ? 0 : 1;
}
