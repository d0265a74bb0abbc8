// The Streamable HTTP stream's event store (Outbox, src/mcp/http_session.hpp)
// bounds bytes as well as events: large server messages to a client that
// does not read (or is away) cost at most about a MiB per stream, and the
// newest event, a call's answer say, is never the one dropped.
#include <gtest/gtest.h>

#include <string>

#include "mcp/http_session.hpp"

namespace {

using corio::mcp::detail::Outbox;

constexpr std::size_t kEvent = 64 * 1024;
constexpr int kEvents = 100;  // 6.25 MiB: under the count bound, over the bytes

// Before the byte bound all 100 stayed (only the 257th would have gone).
TEST(Outbox, WithoutAWriterTheOldestGoPastTheByteBound) {
  Outbox box;
  for (int i = 0; i < kEvents; ++i) box.push(std::string(kEvent, 'a'));
  EXPECT_LE(box.stored_bytes, Outbox::kMaxQueuedBytes);
  EXPECT_EQ(box.next, static_cast<std::uint64_t>(kEvents) + 1);
  EXPECT_GT(box.first, 1u) << "nothing was dropped";
  const std::string answer(4 * Outbox::kMaxQueuedBytes, 'z');  // over the bound on its own
  box.push(answer);
  EXPECT_EQ(box.unwritten(), 1u);
  EXPECT_EQ(box.events.back(), answer) << "the newest event was dropped";
}

// Before, a writer's senders waited only at 256 events (16 MiB of these).
TEST(Outbox, WithAWriterTheSendersWaitAtTheByteBound) {
  Outbox box;
  box.attach(box.cursor, false);
  int pushed = 0;
  while (!box.full() && pushed < kEvents) {
    box.push(std::string(kEvent, 'a'));
    ++pushed;
  }
  EXPECT_EQ(pushed, static_cast<int>(Outbox::kMaxQueuedBytes / kEvent));
  EXPECT_EQ(box.unwritten(), static_cast<std::size_t>(pushed)) << "a writer is there: nothing dropped";
  box.take();
  EXPECT_FALSE(box.full());
}

// What was written is kept for a resumption within its own byte bound.
TEST(Outbox, WrittenEventsKeptForAResumptionAreBoundedInBytes) {
  Outbox box;
  box.attach(box.cursor, false);
  for (int i = 0; i < kEvents; ++i) {
    box.push(std::string(kEvent, 'a'));
    const auto [n, event] = box.take();
    EXPECT_EQ(event.size(), kEvent);
    EXPECT_EQ(n, static_cast<std::uint64_t>(i) + 1);
  }
  EXPECT_LE(box.stored_bytes, Outbox::kKeptWrittenBytes);
  static_assert(Outbox::kKeptWritten * kEvent > Outbox::kKeptWrittenBytes);
  EXPECT_LT(box.events.size(), Outbox::kKeptWritten) << "only the count bound applied";
  EXPECT_EQ(box.unwritten_bytes, 0u);
  // A resumption from the oldest kept replays them all.
  box.attach(box.first, true);
  EXPECT_EQ(box.unwritten_bytes, box.stored_bytes);
}

}  // namespace
