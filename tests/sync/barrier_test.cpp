// corio::Barrier: construction, a round passing with arrival indices, the
// last arrival not suspending, reuse over rounds (arrivals during a drain
// wait for the next round), abort() and reset(), and cancellation: a waiter
// cancelled while filling, while blocked by a drain, or released but
// cancelled before it ran, and corio::wait_for() timeouts. Virtual time.
#include "sync/sync_support.hpp"
#include <corio/barrier.hpp>

namespace corio_sync_test {
namespace {

using corio::Barrier;

static_assert(!std::is_copy_constructible_v<Barrier> && !std::is_move_constructible_v<Barrier>);

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// Waits at the barrier and stores the index in *index (left at kNone when
// the wait throws).
Coro<void> arrive(Barrier* b, std::size_t* index) { *index = co_await b->wait(); }

// Sleeps `delay`, records "name" in *arrivals, then arrive().
Coro<void> party(Barrier* b, Order* arrivals, std::string name, double delay, std::size_t* index) {
  co_await corio::sleep(Secs(delay));
  arrivals->push_back(name);
  co_await arrive(b, index);
}

// How a wait() at the barrier ended.
enum class Exit { none, passed, broken, cancelled };

// Waits once and records how the wait ended in *out.
Coro<void> ended(Barrier* b, Exit* out) {
  try {
    co_await b->wait();
    *out = Exit::passed;
  } catch (const corio::BrokenBarrierError&) {
    *out = Exit::broken;
  } catch (const corio::CancelledError&) {
    *out = Exit::cancelled;
  }
}

// ---- construction ---------------------------------------------------------------------

TEST(Barrier, PartiesBelowOneThrowValueError) {
  EXPECT_THROW(Barrier(0), corio::ValueError);
  EXPECT_THROW(Barrier(-3), corio::ValueError);
  Barrier b(3);
  EXPECT_EQ(b.parties(), 3u);
  EXPECT_EQ(b.n_waiting(), 0u);
  EXPECT_FALSE(b.broken());
}

// ---- one round ----------------------------------------------------------------------------

Coro<void> one_round(Order* arrivals, std::vector<std::size_t>* indices) {
  Barrier b(4);
  const double delays[] = {0.3, 0.1, 0.4, 0.2};
  indices->assign(4, kNone);
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 4; ++i)
    tasks.push_back(corio::create_task(
        party(&b, arrivals, "P" + std::to_string(i), delays[i], &(*indices)[i])));
  co_await corio::sleep(0.05s);
  for (std::size_t waiting = 1; waiting <= 3; ++waiting) {
    co_await corio::sleep(0.1s);
    EXPECT_EQ(b.n_waiting(), waiting);
  }
  EXPECT_EQ(*indices, std::vector<std::size_t>(4, kNone))
      << "a party passed before the last one arrived";
  co_await drain(&tasks);
  EXPECT_NEAR(now(), 0.4, 1e-9);
  for (Task<void>& t : tasks) EXPECT_EQ(end_of(t), End::value);
  EXPECT_EQ(b.n_waiting(), 0u);
  EXPECT_FALSE(b.broken());
}

TEST(Barrier, AllPartiesPassWithIndicesInArrivalOrder) {
  Order arrivals;
  std::vector<std::size_t> indices;
  run_vt(one_round(&arrivals, &indices));
  EXPECT_EQ(arrivals, (Order{"P1", "P3", "P0", "P2"}));
  EXPECT_EQ(indices, (std::vector<std::size_t>{2, 0, 3, 1}));
}

// The last arrival releases the others and returns without suspending; with
// one party, every wait() is the last arrival.
Coro<void> last_arrival_does_not_yield() {
  Barrier b(2), single(1);
  bool ran = false;
  std::size_t first = kNone;
  Task<void> p = corio::create_task(arrive(&b, &first));
  co_await corio::sleep(0s);
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  EXPECT_EQ(co_await b.wait(), 1u);
  for (std::size_t round = 0; round < 3; ++round) EXPECT_EQ(co_await single.wait(), 0u);
  EXPECT_FALSE(ran) << "the last arrival suspended";
  co_await p;
  EXPECT_EQ(first, 0u);
  co_await other;
}

TEST(Barrier, LastArrivalReturnsWithoutYielding) { run_vt(last_arrival_does_not_yield()); }

// ---- reuse --------------------------------------------------------------------------------

// Waits `rounds` times, appending each index to *indices.
Coro<void> cyclic_party(Barrier* b, int rounds, double pause, std::vector<std::size_t>* indices) {
  for (int r = 0; r < rounds; ++r) {
    indices->push_back(co_await b->wait());
    co_await corio::sleep(Secs(pause));
  }
}

Coro<void> cyclic_rounds() {
  Barrier b(3);
  std::vector<std::size_t> idx[3];
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 3; ++i)
    tasks.push_back(corio::create_task(cyclic_party(&b, 5, 0.1 * (i + 1), &idx[i])));
  co_await drain(&tasks);
  for (int r = 0; r < 5; ++r) {
    std::vector<std::size_t> round{idx[0][r], idx[1][r], idx[2][r]};
    std::sort(round.begin(), round.end());
    EXPECT_EQ(round, (std::vector<std::size_t>{0, 1, 2})) << "round " << r;
  }
  // Each round waits for the slowest party's pause (0.3s) before it fills.
  EXPECT_NEAR(now(), 5 * 0.3, 1e-9);
  EXPECT_EQ(b.n_waiting(), 0u);
}

TEST(Barrier, ReusableOverSeveralRounds) { run_vt(cyclic_rounds()); }

// While a round drains (released parties not yet run), a new arrival waits
// for the next round: the releaser, arriving again at once, is index 0 of
// round two, not a third party of round one.
Coro<void> arrival_during_drain() {
  Barrier b(2);
  std::size_t a1 = kNone, c2 = kNone;
  Order arrivals;
  Task<void> a = corio::create_task(arrive(&b, &a1));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 1u);  // releases A, who has not run yet
  EXPECT_EQ(b.n_waiting(), 0u) << "draining";
  Task<void> c = corio::create_task(party(&b, &arrivals, "C", 1, &c2));
  EXPECT_EQ(co_await b.wait(), 0u);
  EXPECT_EQ(a1, 0u);
  EXPECT_TRUE(a.done());
  co_await c;
  EXPECT_EQ(c2, 1u);
  EXPECT_NEAR(now(), 1.0, 1e-9);
}

TEST(Barrier, ArrivalWhileDrainingWaitsForTheNextRound) { run_vt(arrival_during_drain()); }

// 3 rounds' worth of parties arriving at once: they pass 10 at a time, each
// round with indices 0..9.
Coro<void> many_at_once(std::vector<std::size_t>* indices) {
  Barrier b(10);
  indices->assign(30, kNone);
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 30; ++i) tasks.push_back(corio::create_task(arrive(&b, &(*indices)[i])));
  co_await drain(&tasks);
  EXPECT_EQ(b.n_waiting(), 0u);
}

TEST(Barrier, ManyPartiesPassInRoundsOfParties) {
  std::vector<std::size_t> indices;
  run_vt(many_at_once(&indices));
  std::sort(indices.begin(), indices.end());
  for (std::size_t i = 0; i < 30; ++i) EXPECT_EQ(indices[i], i / 3) << i;
}

// ---- abort and reset ------------------------------------------------------------------------

Coro<void> abort_breaks() {
  Barrier b(3);
  Exit e[2] = {Exit::none, Exit::none};
  std::vector<Task<void>> tasks{corio::create_task(ended(&b, &e[0])),
                                corio::create_task(ended(&b, &e[1]))};
  co_await corio::sleep(1s);
  EXPECT_EQ(b.n_waiting(), 2u);
  co_await b.abort();
  EXPECT_TRUE(b.broken());
  co_await drain(&tasks);
  EXPECT_EQ(e[0], Exit::broken);
  EXPECT_EQ(e[1], Exit::broken);
  EXPECT_EQ(b.n_waiting(), 0u);
  EXPECT_THROW(co_await b.wait(), corio::BrokenBarrierError);  // at once, and again
  EXPECT_THROW(co_await b.wait(), corio::BrokenBarrierError);
  EXPECT_TRUE(b.broken());
  EXPECT_DOUBLE_EQ(now(), 1.0);
}

TEST(Barrier, AbortBreaksWaitersAndLaterWaits) { run_vt(abort_breaks()); }

// reset() with waiters: they get BrokenBarrierError; the barrier is not
// broken, and once they have left a full round passes again.
Coro<void> reset_with_waiters() {
  Barrier b(3);
  Exit e[4] = {Exit::none, Exit::none, Exit::none, Exit::none};
  std::vector<Task<void>> tasks{corio::create_task(ended(&b, &e[0])),
                                corio::create_task(ended(&b, &e[1]))};
  co_await corio::sleep(0s);
  co_await b.reset();
  EXPECT_FALSE(b.broken());
  EXPECT_EQ(b.n_waiting(), 0u) << "resetting";
  tasks.push_back(corio::create_task(ended(&b, &e[2])));  // after the reset
  co_await corio::sleep(0s);
  EXPECT_EQ(e[0], Exit::broken);
  EXPECT_EQ(e[1], Exit::broken);
  EXPECT_EQ(b.n_waiting(), 1u);
  tasks.push_back(corio::create_task(ended(&b, &e[3])));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 2u);
  co_await drain(&tasks);
  EXPECT_EQ(e[2], Exit::passed);
  EXPECT_EQ(e[3], Exit::passed);
}

TEST(Barrier, ResetBreaksCurrentWaitersThenBarrierIsReusable) { run_vt(reset_with_waiters()); }

// reset() of a broken barrier with nobody inside: usable at once.
Coro<void> reset_after_abort() {
  Barrier b(2);
  co_await b.abort();
  EXPECT_THROW(co_await b.wait(), corio::BrokenBarrierError);
  co_await b.reset();
  EXPECT_FALSE(b.broken());
  Exit e = Exit::none;
  Task<void> t = corio::create_task(ended(&b, &e));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 1u);
  co_await t;
  EXPECT_EQ(e, Exit::passed);
}

TEST(Barrier, ResetAfterAbortMakesBarrierUsable) { run_vt(reset_after_abort()); }

// As asyncio: a reset while the round drains reaches the released parties
// that have not run yet; they get BrokenBarrierError although the round
// completed.
Coro<void> reset_while_draining() {
  Barrier b(2);
  Exit e = Exit::none;
  Task<void> a = corio::create_task(ended(&b, &e));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 1u);
  co_await b.reset();
  co_await a;
  EXPECT_EQ(e, Exit::broken);
  EXPECT_FALSE(b.broken());
  EXPECT_EQ(b.n_waiting(), 0u);
}

TEST(Barrier, ResetWhileDrainingBreaksReleasedPartiesNotYetRun) { run_vt(reset_while_draining()); }

// ---- cancellation ---------------------------------------------------------------------------

// Of A, B waiting at Barrier(3), A is cancelled: n_waiting drops and C plus
// the main task complete the round with B. Indices count the parties inside,
// as asyncio's: C takes the index 1 that B also holds.
Coro<void> cancel_while_filling() {
  Barrier b(3);
  std::size_t ia = kNone, ib = kNone, ic = kNone;
  Task<void> a = corio::create_task(arrive(&b, &ia));
  Task<void> pb = corio::create_task(arrive(&b, &ib));
  co_await corio::sleep(1s);
  EXPECT_EQ(b.n_waiting(), 2u);
  a.cancel();
  co_await finish(a);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_EQ(b.n_waiting(), 1u);
  Task<void> c = corio::create_task(arrive(&b, &ic));
  co_await corio::sleep(1s);
  EXPECT_EQ(b.n_waiting(), 2u);
  EXPECT_FALSE(pb.done()) << "passed with only two parties";
  EXPECT_EQ(co_await b.wait(), 2u);
  co_await pb;
  co_await c;
  EXPECT_EQ(ia, kNone);
  EXPECT_EQ(ib, 1u);
  EXPECT_EQ(ic, 1u);
  EXPECT_EQ(b.n_waiting(), 0u);
  EXPECT_FALSE(b.broken());
}

TEST(BarrierCancel, WaiterCancelledWhileFillingLeavesCountConsistent) {
  run_vt(cancel_while_filling());
}

// C arrives while the round drains and is cancelled there: it never counted,
// so the next round still needs two fresh parties.
Coro<void> cancel_while_blocked() {
  Barrier b(2);
  Exit ea = Exit::none, el = Exit::none, ec = Exit::none;
  Task<void> a = corio::create_task(ended(&b, &ea));
  co_await corio::sleep(0s);
  Task<void> last = corio::create_task(ended(&b, &el));
  Task<void> c = corio::create_task(ended(&b, &ec));
  co_await corio::sleep(0s);  // `last` releases A; C, running before A, blocks
  EXPECT_EQ(el, Exit::passed);
  EXPECT_EQ(ea, Exit::none);
  EXPECT_EQ(ec, Exit::none);
  c.cancel();
  std::vector<Task<void>> tasks{a, c};
  co_await drain(&tasks);
  EXPECT_EQ(ea, Exit::passed);
  EXPECT_EQ(ec, Exit::cancelled);
  EXPECT_EQ(b.n_waiting(), 0u);
  Exit e = Exit::none;
  Task<void> next = corio::create_task(ended(&b, &e));
  co_await corio::sleep(0s);
  EXPECT_EQ(b.n_waiting(), 1u);
  EXPECT_EQ(co_await b.wait(), 1u);
  co_await next;
  EXPECT_EQ(e, Exit::passed);
}

TEST(BarrierCancel, ArrivalCancelledWhileBlockedByDrainNeverCounts) {
  run_vt(cancel_while_blocked());
}

// A is released and cancelled before it runs: it ends cancelled (its
// cancellation lands at that await, as in asyncio) and still leaves, so the
// barrier is ready for the next round.
Coro<void> cancel_released() {
  Barrier b(2);
  Exit ea = Exit::none;
  Task<void> a = corio::create_task(ended(&b, &ea));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 1u);
  a.cancel();
  co_await a;
  EXPECT_EQ(ea, Exit::cancelled);
  EXPECT_EQ(b.n_waiting(), 0u);
  Exit e = Exit::none;
  Task<void> next = corio::create_task(ended(&b, &e));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 1u);
  co_await next;
  EXPECT_EQ(e, Exit::passed);
}

TEST(BarrierCancel, ReleasedWaiterCancelledBeforeRunningStillLeaves) { run_vt(cancel_released()); }

// corio::wait_for(b.wait(), 1s) times out and leaves; a later round of two
// passes.
Coro<void> wait_for_timeout() {
  Barrier b(2);
  End timed = End::none;
  Exit e = Exit::none;
  co_await capture(corio::wait_for(b.wait(), 1s), &timed);
  EXPECT_EQ(timed, End::timeout);
  EXPECT_EQ(b.n_waiting(), 0u);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  Task<void> t = corio::create_task(ended(&b, &e));
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await b.wait(), 1u);
  co_await t;
  EXPECT_EQ(e, Exit::passed);
}

TEST(BarrierCancel, WaitForTimeoutLeavesBarrierConsistent) { run_vt(wait_for_timeout()); }

}  // namespace
}  // namespace corio_sync_test
