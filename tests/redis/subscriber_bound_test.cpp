// redis::Subscriber's bound on what it holds unread, against a real
// redis-server: a subscriber that does not call next() stops reading its
// socket, so Redis keeps the backlog (and applies its own
// client-output-buffer-limit to it); reading resumes as next() drains, a
// subscribe() meanwhile still gets its confirmation, and a subscriber Redis
// cut off gets what it had queued, then ConnectionError.
//
// Each test has its own server: they change its client-output-buffer-limit,
// which would disturb the shared one's other tests.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/flood.hpp"
#include "common/memory.hpp"
#include "redis/redis_support.hpp"
#include <corio/errors.hpp>
#include <corio/sleep.hpp>

namespace {

using corio::Coro;
using corio_testing::DbServer;
using corio_testing::memory_now;
using namespace corio::redis;
using namespace std::chrono_literals;
using redis_testing::options_for;
using redis_testing::run_redis;

constexpr std::size_t kPayloadBytes = 1024;

std::string payload(int i) { return corio_testing::numbered_payload(i, kPayloadBytes); }

// Named: g++ 12 frees a default argument's ClientOptions temporary twice
// in a coroutine's caller ("free(): invalid size").
const std::size_t kDefaultBound = ClientOptions{}.max_unread_bytes;

// A publisher and a subscriber of `channel` holding `max_unread_bytes`, on
// a private server whose pub/sub clients Redis disconnects past `limit`
// ("hard soft seconds", as in redis.conf; "0 0 0": never).
struct PubSub {
  Client pub;
  Subscriber sub;
};
Coro<PubSub> pub_sub(const DbServer* server, std::string limit, std::string channel,
                     std::size_t max_unread_bytes = kDefaultBound) {
  ClientOptions o = options_for(server->address());
  Client pub = co_await Client::connect(o);
  co_await pub.command("CONFIG", "SET", "client-output-buffer-limit", "pubsub " + limit);
  o.max_unread_bytes = max_unread_bytes;
  Subscriber sub = co_await Subscriber::connect(o);
  const std::vector<std::string> channels{std::move(channel)};
  co_await sub.subscribe(channels);
  co_return PubSub{std::move(pub), std::move(sub)};
}

// Publishes payload(first) .. payload(first + count - 1), pipelined in
// batches so the publisher's own memory stays small.
Coro<void> publish(Client* pub, std::string channel, int first, int count) {
  constexpr int kBatch = 500;
  for (int i = first; i < first + count; i += kBatch) {
    std::vector<std::vector<std::string>> batch;
    for (int j = i; j < std::min(i + kBatch, first + count); ++j) {
      batch.push_back({"PUBLISH", channel, payload(j)});
    }
    co_await pub->pipeline(std::move(batch));
  }
}

// Bytes Redis holds unsent for its pub/sub clients (CLIENT LIST's omem):
// the backlog of a subscriber that stopped reading.
Coro<long> redis_backlog(Client* pub) {
  const std::string list = (co_await pub->command("CLIENT", "LIST", "TYPE", "pubsub")).str;
  long total = 0;
  for (auto at = list.find(" omem="); at != std::string::npos; at = list.find(" omem=", at + 1)) {
    total += std::stol(list.substr(at + 6));
  }
  co_return total;
}

// The backlog once the subscriber had 100 ms to read: one that does not
// pause takes the tests' 20 MiB in a few (it lagged by 5 MiB when the last
// PUBLISH was answered).
Coro<long> settled_backlog(Client* pub) {
  co_await corio::sleep(100ms);
  co_return co_await redis_backlog(pub);
}

// Takes up to `count` messages, expecting payload(first), payload(first+1),
// ... on `channel`; returns how many came before a ConnectionError.
Coro<int> read_in_order(Subscriber* sub, std::string channel, int first, int count) {
  for (int i = 0; i < count; ++i) {
    Message m;
    try {
      m = co_await sub->next();
    } catch (const ConnectionError&) {
      co_return i;
    }
    if (m.channel != channel || m.payload != payload(first + i)) {
      ADD_FAILURE() << "expected message " << first + i << " on " << channel << ", got "
                    << m.payload.substr(0, 8) << " on " << m.channel;
      co_return i;
    }
  }
  co_return count;
}

constexpr int kFlood = 20'000;            // 20 MiB: more than the kernel buffers
constexpr std::size_t kSmall = 64 << 10;  // about 55 messages of 1 KiB

// Before the bound the subscriber took all 100 MB in: VmHWM +98..109 MiB
// (290 MiB for 262,144). Now it holds 1 MiB and Redis the rest (the test
// lifts Redis's limit, which would otherwise cut it off).
TEST(RedisSubscriberBound, AnUnreadSubscriberHoldsItsBoundAndRedisKeepsTheRest) {
  DbServer server("redis");
  run_redis([](const DbServer* server) -> Coro<void> {
    constexpr int kMessages = 100'000;
    PubSub ps = co_await pub_sub(server, "0 0 0", "flood");
    const corio_testing::Memory before = memory_now();
    co_await publish(&ps.pub, "flood", 0, kMessages);
    EXPECT_GT(co_await settled_backlog(&ps.pub), 50L << 20);
    EXPECT_EQ(co_await read_in_order(&ps.sub, "flood", 0, kMessages), kMessages);
    corio_testing::expect_little_growth_since(before);
  }(&server));
}

// Reading kFlood messages through a small bound resumes it hundreds of
// times, and a message published after the backlog arrives.
TEST(RedisSubscriberBound, ReadingResumesAsNextDrainsTheQueue) {
  DbServer server("redis");
  run_redis([](const DbServer* server) -> Coro<void> {
    PubSub ps = co_await pub_sub(server, "0 0 0", "slow", kSmall);
    co_await publish(&ps.pub, "slow", 0, kFlood);
    EXPECT_GT(co_await settled_backlog(&ps.pub), 0);  // paused: Redis holds what the kernel cannot
    EXPECT_EQ(co_await read_in_order(&ps.sub, "slow", 0, kFlood), kFlood);
    co_await ps.pub.command("PUBLISH", "slow", payload(kFlood));
    EXPECT_EQ(co_await read_in_order(&ps.sub, "slow", kFlood, 1), 1);
    EXPECT_EQ(co_await redis_backlog(&ps.pub), 0);
  }(&server));
}

// subscribe() while paused reads on until its confirmation, which comes
// after the backlog Redis held: that backlog is queued past the bound (and
// nothing is lost), then reading pauses again.
TEST(RedisSubscriberBound, SubscribeWhilePausedReadsOnToItsConfirmationThenPausesAgain) {
  DbServer server("redis");
  run_redis([](const DbServer* server) -> Coro<void> {
    PubSub ps = co_await pub_sub(server, "0 0 0", "a", kSmall);
    co_await publish(&ps.pub, "a", 0, kFlood);
    const std::vector<std::string> more{"b"};
    co_await ps.sub.subscribe(more);
    EXPECT_EQ(co_await redis_backlog(&ps.pub), 0);  // all of it came before the confirmation
    co_await publish(&ps.pub, "a", kFlood, kFlood);
    EXPECT_GT(co_await settled_backlog(&ps.pub), 0);  // paused again
    co_await ps.pub.command("PUBLISH", "b", "on b");
    EXPECT_EQ(co_await read_in_order(&ps.sub, "a", 0, 2 * kFlood), 2 * kFlood);
    Message last = co_await ps.sub.next();
    EXPECT_EQ(last.channel, "b");
    EXPECT_EQ(last.payload, "on b");
  }(&server));
}

// Redis cuts off a subscriber past its limit (1 MiB here, 32 MiB by
// default): next() gives the messages queued before, in order, then
// ConnectionError. Before the bound it read on and was never cut off.
TEST(RedisSubscriberBound, ASubscriberRedisCutsOffGetsWhatItQueuedThenConnectionError) {
  DbServer server("redis");
  run_redis([](const DbServer* server) -> Coro<void> {
    PubSub ps = co_await pub_sub(server, "1mb 0 0", "cut");
    co_await publish(&ps.pub, "cut", 0, kFlood);
    const int got = co_await read_in_order(&ps.sub, "cut", 0, kFlood);
    std::printf("%d of %d messages before the cut\n", got, kFlood);
    EXPECT_GT(got, 0);
    EXPECT_LT(got, kFlood);
    if (got < kFlood) {
      EXPECT_THROW(co_await ps.sub.next(), ConnectionError);  // and stays so
    }
  }(&server));
}

}  // namespace
