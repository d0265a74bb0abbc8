// WaitSlot (detail/io_wait.hpp): an IoWait parked in a slot its owner keeps
// (a transport with no fd: an HTTP/2 stream), not in the loop's slot of an
// fd. The owner's fire() wakes the task; a cancellation, an interrupt or
// the awaiter's end takes the wait out again and leaves the slot free; a
// slot destroyed under a wait wakes it with EBADF.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <system_error>

#include "core/test_support.hpp"
#include <corio/detail/io_wait.hpp>

namespace corio_test {
namespace {

using corio::Coro;
using corio::detail::IoWait;
using corio::detail::WaitSlot;

// How a wait in the slot ended.
enum class Ended { not_yet, woke, cancelled, ebadf };

Coro<void> wait_in(WaitSlot* slot, Ended* ended) {
  try {
    co_await IoWait(corio::get_running_loop(), *slot);
    *ended = Ended::woke;
  } catch (const corio::CancelledError&) {
    *ended = Ended::cancelled;
    throw;
  } catch (const std::system_error& e) {
    if (e.code().value() == EBADF) *ended = Ended::ebadf;
  }
}

// A task waiting in slot: it runs to its suspension in one loop pass, and
// sleep(0) yields exactly once.
Coro<corio::Task<void>> parked(WaitSlot* slot, Ended* ended) {
  corio::Task<void> t = corio::create_task(wait_in(slot, ended));
  co_await corio::sleep(std::chrono::seconds(0));
  co_return t;
}

Coro<void> fired_body() {
  WaitSlot slot;
  Ended ended = Ended::not_yet;
  corio::Task<void> t = co_await parked(&slot, &ended);
  EXPECT_TRUE(slot.parked());
  EXPECT_EQ(ended, Ended::not_yet);
  slot.fire();
  EXPECT_FALSE(slot.parked()) << "fire() takes the waiter out before it runs";
  co_await t;
  EXPECT_EQ(ended, Ended::woke);
  slot.fire();  // nobody waits: nothing happens
}

TEST(WaitSlot, FireWakesTheParkedTask) { corio::run(fired_body()); }

Coro<void> cancelled_body() {
  WaitSlot slot;
  Ended ended = Ended::not_yet;
  corio::Task<void> t = co_await parked(&slot, &ended);
  EXPECT_TRUE(slot.parked());
  t.cancel();
  EXPECT_FALSE(slot.parked()) << "a cancelled wait leaves the slot at once";
  EXPECT_THROW(co_await t, corio::CancelledError);
  EXPECT_EQ(ended, Ended::cancelled);
  // The slot takes the next waiter.
  corio::Task<void> again = co_await parked(&slot, &ended);
  EXPECT_TRUE(slot.parked());
  slot.fire();
  co_await again;
  EXPECT_EQ(ended, Ended::woke);
}

TEST(WaitSlot, ACancelledWaitLeavesTheSlotClean) { corio::run(cancelled_body()); }

Coro<void> destroyed_body() {
  auto slot = std::make_unique<WaitSlot>();
  Ended ended = Ended::not_yet;
  corio::Task<void> t = co_await parked(slot.get(), &ended);
  EXPECT_TRUE(slot->parked());
  slot.reset();
  co_await t;
  EXPECT_EQ(ended, Ended::ebadf) << "as a wait on a socket closed under it";
}

TEST(WaitSlot, ASlotDestroyedUnderAWaitWakesItWithEbadf) { corio::run(destroyed_body()); }

// One waiter per slot, as one reader per fd.
Coro<void> second_body() {
  WaitSlot slot;
  Ended ended = Ended::not_yet;
  corio::Task<void> first = co_await parked(&slot, &ended);
  EXPECT_THROW(co_await IoWait(corio::get_running_loop(), slot), corio::RuntimeError);
  EXPECT_TRUE(slot.parked()) << "the first waiter stays";
  slot.fire();
  co_await first;
  EXPECT_EQ(ended, Ended::woke);
}

TEST(WaitSlot, ASecondWaiterIsRefused) { corio::run(second_body()); }

// The loop does not count a slot's wait as I/O: what wakes it is another
// task, as for an Event.
Coro<void> counted_body() {
  WaitSlot slot;
  Ended ended = Ended::not_yet;
  corio::Task<void> t = co_await parked(&slot, &ended);
  EXPECT_EQ(corio::get_running_loop().stats().io_waits, 0u);
  slot.fire();
  co_await t;
}

TEST(WaitSlot, TheLoopCountsNoIoForIt) { corio::run(counted_body()); }

}  // namespace
}  // namespace corio_test
