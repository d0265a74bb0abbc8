// pg::Connection's bound on the notifications it holds untaken, against the
// shared server: a listener that does not call next_notification() stops
// reading its socket, so the server keeps the backlog; a query meanwhile
// still gets its result; reading resumes as next_notification() drains,
// and nothing is lost or reordered.
#include <string>
#include <vector>

#include "common/flood.hpp"
#include "common/memory.hpp"
#include "pg/pg_support.hpp"
#include <corio/gather.hpp>
#include <corio/sleep.hpp>

namespace {

using corio::Coro;
using corio::pg::Connection;
using corio::pg::Notification;
using corio::pg::Result;
using namespace std::chrono_literals;
using pg_testing::connect;
using pg_testing::run_pg;

constexpr std::size_t kPayloadBytes = 1024;
constexpr int kFlood = 20'000;  // 20 MiB: more than the kernel buffers

std::string payload(int i) { return corio_testing::numbered_payload(i, kPayloadBytes); }

// Notifies payload(0) .. payload(kFlood - 1) on `channel`, pipelined in
// batches so the sender's own memory stays small.
Coro<void> notify_all(Connection* sender, std::string channel) {
  constexpr int kBatch = 500;
  for (int i = 0; i < kFlood; i += kBatch) {
    std::vector<Coro<Result>> batch;
    for (int j = i; j < i + kBatch; ++j) {
      batch.push_back(sender->query("SELECT pg_notify($1, $2)", channel, payload(j)));
    }
    co_await corio::gather(std::move(batch));
  }
}

// Takes kFlood notifications, expecting payload(0), payload(1), ... in order.
Coro<int> take_in_order(Connection* listener) {
  for (int i = 0; i < kFlood; ++i) {
    const Notification n = co_await listener->next_notification();
    if (n.payload != payload(i)) {
      ADD_FAILURE() << "expected notification " << i << ", got " << n.payload.substr(0, 8);
      co_return i;
    }
  }
  co_return kFlood;
}

// Before the bound the listener took all 20 MiB in as the server sent it.
TEST(PgNotifyBound, AListenerThatDoesNotTakeHoldsItsBound) {
  run_pg([]() -> Coro<void> {
    Connection listener = co_await connect();
    Connection sender = co_await connect();
    co_await listener.listen("flood");
    const corio_testing::Memory before = corio_testing::memory_now();
    co_await notify_all(&sender, "flood");
    co_await corio::sleep(200ms);  // the listener's loop reads what it may meanwhile
    corio_testing::expect_little_growth_since(before);
    EXPECT_EQ(co_await take_in_order(&listener), kFlood);
  }());
}

// A small bound pauses and resumes reading hundreds of times; a query while
// paused reads on to its result, the notifications before it kept in order.
TEST(PgNotifyBound, AQueryWhilePausedGetsItsResultAndReadingResumesAsTheyAreTaken) {
  run_pg([]() -> Coro<void> {
    Connection listener = co_await connect();
    listener.max_unread_bytes(64 << 10);
    Connection sender = co_await connect();
    co_await listener.listen("slow");
    co_await notify_all(&sender, "slow");
    const Result r = co_await listener.query("SELECT 42");
    EXPECT_EQ(r.at(0).get<int>(0), 42);
    EXPECT_EQ(co_await take_in_order(&listener), kFlood);
    co_await sender.query("SELECT pg_notify('slow', 'last')");
    EXPECT_EQ((co_await listener.next_notification()).payload, "last");
  }());
}

}  // namespace
