// The cancellation sweep over corio::redis against a fake RESP server host
// (sim_redis_support.hpp): a Client's connect and command, pipelined and
// concurrent commands, a Pool's creation and command, a Subscriber's
// subscribe, next and unsubscribe. After each cancel, the next command on
// the same Client gets its own reply, not the cancelled one's (redis-py
// #2665), the next subscribe() its own confirmation, and no host keeps
// sockets, tasks or timers the uncancelled run did not.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <corio/gather.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/redis.hpp>

#include "testing/sim_redis_support.hpp"
#include "testing/sim_support.hpp"

using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using corio::testing::cancellation_sweep;
using sim_support::expect_clean;
using sim_redis::require;
namespace redis = corio::redis;

namespace {

redis::ClientOptions options() {
  redis::ClientOptions o;
  o.host = "redis";
  return o;
}

// What the operation and the next one share, made before the operation.
struct Side {
  std::optional<redis::Client> client;
  std::optional<redis::Pool> pool;
  std::optional<redis::Subscriber> sub;
};

Coro<void> open_client(std::shared_ptr<Side> side) {
  side->client.emplace(co_await redis::Client::connect(options()));
}

// The next commands on `r` get their own replies: a reply left over from a
// cancelled command would answer the SET (an integer or a bulk string for
// "OK") and shift the GET's.
Coro<void> in_step(redis::Client& r) {
  const redis::Reply ok = co_await r.command("SET", "after", "mine");
  require(ok.type == redis::Reply::Type::status && ok.str == "OK", "SET got another reply: " + ok.str);
  const redis::Reply got = co_await r.command("GET", "after");
  require(got.str == "mine", "GET got another reply: '" + got.str + "'");
  const redis::Reply pong = co_await r.command("PING");
  require(pong.str == "PONG", "PING got another reply: '" + pong.str + "'");
}

// The system: the server host and a client host; `prepare` runs on the
// client host before the operation.
void redis_sweep(std::function<Coro<void>(std::shared_ptr<Side>)> op,
                 std::function<Coro<void>(std::shared_ptr<Side>)> after,
                 std::function<Coro<void>(std::shared_ptr<Side>)> prepare, int min_points) {
  expect_clean(cancellation_sweep([&](Simulation& sim) {
    sim.host("redis").spawn(sim_redis::server());
    auto side = std::make_shared<Side>();
    auto& client = sim.host("client");
    if (prepare) client.spawn(prepare(side));
    return SweepRun{&client, [op, side] { return op(side); },
                    [after, side] { return after(side); }};
  }), min_points);
}

// ---- Client ---------------------------------------------------------------------------------

Coro<void> connect_and_incr(std::shared_ptr<Side> side) {
  side->client.emplace(co_await redis::Client::connect(options()));
  const redis::Reply n = co_await side->client->command("INCR", "n");
  require(n.type == redis::Reply::Type::integer, "INCR's reply is no integer");
}

// The connect or the next command may have been the one cancelled: the
// Client (made anew if the connect was) answers in step.
Coro<void> client_after(std::shared_ptr<Side> side) {
  if (!side->client) side->client.emplace(co_await redis::Client::connect(options()));
  co_await in_step(*side->client);
  side->client->close();
}

TEST(SweepRedis, ClientConnectAndCommand) {
  redis_sweep(connect_and_incr, client_after, nullptr, 2);
}

Coro<void> get_and_set(std::shared_ptr<Side> side) {
  redis::Client& r = *side->client;
  co_await r.command("SET", "k", "v1");
  const redis::Reply v = co_await r.command("GET", "k");
  require(v.str == "v1", "GET k: '" + v.str + "'");
}

// Commands on a connection open before the operation.
TEST(SweepRedis, ClientCommandsOnAnOpenConnection) {
  redis_sweep(get_and_set, client_after, open_client, 2);
}

Coro<void> open_client_with_timeout(std::shared_ptr<Side> side) {
  redis::ClientOptions o = options();
  o.command_timeout = std::chrono::seconds(1);
  side->client.emplace(co_await redis::Client::connect(o));
}

// The same under a command_timeout: the await goes through wait_for, whose
// cancellation must not be taken for a timeout (that would close the
// connection; here it stays, in step).
TEST(SweepRedis, ClientCommandsUnderACommandTimeout) {
  redis_sweep(get_and_set, [](std::shared_ptr<Side> side) -> Coro<void> {
    require(side->client->is_connected(), "the connection was closed");
    co_await client_after(side);
  }, open_client_with_timeout, 2);
}

// ---- pipelining -----------------------------------------------------------------------------

Coro<long long> incr(redis::Client* r, std::string key) {
  co_return (co_await r->command("INCR", key)).as_integer();
}

// pipeline() and three commands of three tasks at once (gather): their
// replies come back in one stream, each to its own command.
Coro<void> pipelined(std::shared_ptr<Side> side) {
  redis::Client& r = *side->client;
  const std::vector<std::vector<std::string>> batch{{"SET", "p", "1"}, {"INCR", "p"}, {"GET", "p"}};
  const std::vector<redis::Reply> replies = co_await r.pipeline(batch);
  require(replies.size() == 3 && replies[1].integer == 2 && replies[2].str == "2", "pipeline replies");
  // Named: g++ 12 cannot hold temporaries across a co_await.
  Coro<long long> x = incr(&r, "x"), y = incr(&r, "y"), z = incr(&r, "z");
  const std::tuple<long long, long long, long long> n =
      co_await corio::gather(std::move(x), std::move(y), std::move(z));
  require(std::get<0>(n) >= 1 && std::get<1>(n) >= 1 && std::get<2>(n) >= 1, "concurrent INCRs");
}

TEST(SweepRedis, PipelinedAndConcurrentCommands) {
  redis_sweep(pipelined, client_after, open_client, 2);
}

// ---- Pool -----------------------------------------------------------------------------------

Coro<void> pool_command(std::shared_ptr<Side> side) {
  side->pool.emplace(co_await redis::Pool::create(options(), 2));
  co_await side->pool->get().command("SET", "pooled", "yes");
  const redis::Reply v = co_await side->pool->get().command("GET", "pooled");
  require(v.str == "yes", "pooled GET: '" + v.str + "'");
}

// Both clients answer in step: the first one's commands in flight make
// get() pick the other.
Coro<void> pool_after(std::shared_ptr<Side> side) {
  if (!side->pool) side->pool.emplace(co_await redis::Pool::create(options(), 2));
  corio::Task<void> first = corio::create_task(in_step(side->pool->get()));
  co_await corio::sleep(std::chrono::seconds(0));
  co_await in_step(side->pool->get());
  co_await first;
  side->pool.reset();
}

TEST(SweepRedis, PoolCreateAndCommand) {
  redis_sweep(pool_command, pool_after, nullptr, 3);
}

// ---- Subscriber -----------------------------------------------------------------------------

Coro<void> open_subscriber(std::shared_ptr<Side> side) {
  side->client.emplace(co_await redis::Client::connect(options()));
  side->sub.emplace(co_await redis::Subscriber::connect(options()));
}

// Publishes on `channel` and expects the subscriber to take it next,
// after any messages still queued from "news"; returns it.
Coro<redis::Message> publish_and_take(std::shared_ptr<Side> side, std::string channel,
                                      std::string payload) {
  const long long receivers = (co_await side->client->command("PUBLISH", channel, payload)).integer;
  require(receivers == 1, "PUBLISH " + channel + " reached " + std::to_string(receivers));
  for (;;) {
    redis::Message m = co_await side->sub->next();
    if (m.channel == channel && m.payload == payload) co_return m;
    require(m.channel == "news", "a message on " + m.channel + " before " + channel);
  }
}

Coro<void> subscribe_next_unsubscribe(std::shared_ptr<Side> side) {
  const std::vector<std::string> news{"news"};
  co_await side->sub->subscribe(news);
  (void)co_await publish_and_take(side, "news", "first");
  co_await side->sub->unsubscribe(news);
}

// subscribe() returned once its own channel was confirmed: a PUBLISH right
// after it reaches the subscriber (a confirmation left over from the
// cancelled one would let it return early, and the message be missed).
Coro<void> subscriber_after(std::shared_ptr<Side> side) {
  const std::vector<std::string> mine{"mine"};
  co_await side->sub->subscribe(mine);
  (void)co_await publish_and_take(side, "mine", "second");
  co_await side->sub->unsubscribe(mine);
  co_await in_step(*side->client);
}

TEST(SweepRedis, SubscriberSubscribeNextUnsubscribe) {
  redis_sweep(subscribe_next_unsubscribe, subscriber_after, open_subscriber, 3);
}

// The same with patterns, on a Subscriber the operation connects:
// Subscriber::connect, psubscribe(), a pmessage that names its pattern,
// punsubscribe(); their confirmations are counted as the channels' are.
Coro<void> take_by_pattern(std::shared_ptr<Side> side, std::string pattern, std::string channel,
                           std::string payload) {
  if (!side->sub) side->sub.emplace(co_await redis::Subscriber::connect(options()));
  const std::vector<std::string> patterns{pattern};
  co_await side->sub->psubscribe(patterns);
  const redis::Message m = co_await publish_and_take(side, channel, payload);
  require(m.pattern == pattern, "the message came without its pattern: '" + m.pattern + "'");
  co_await side->sub->punsubscribe(patterns);
}

TEST(SweepRedis, SubscriberPsubscribeNextPunsubscribe) {
  redis_sweep(
      [](std::shared_ptr<Side> side) { return take_by_pattern(side, "new*", "news", "first"); },
      [](std::shared_ptr<Side> side) -> Coro<void> {
        co_await take_by_pattern(side, "mi*", "mine", "second");
        co_await in_step(*side->client);
      },
      open_client, 4);
}

// ---- split replies --------------------------------------------------------------------------

// A value of n bytes, different for each key.
std::string value_for(int i, std::size_t n) { return std::string(n, static_cast<char>('a' + i % 26)); }

Coro<void> set_and_get(redis::Client* r, int i) {
  const std::string key = "k" + std::to_string(i), value = value_for(i, 3000 + 100 * i);
  co_await r->command("SET", key, value);
  const redis::Reply got = co_await r->command("GET", key);
  require(got.str == value, "GET " + key + " got " + std::to_string(got.str.size()) + " bytes");
}

// 20 tasks' commands at once, then a pipeline, replies of a few KiB each.
Coro<void> many_commands() {
  co_await corio::sleep(std::chrono::milliseconds(100));  // the server listens
  redis::Client r = co_await redis::Client::connect(options());
  std::vector<corio::Task<void>> tasks;
  for (int i = 0; i < 20; ++i) tasks.push_back(corio::create_task(set_and_get(&r, i)));
  co_await corio::gather(std::move(tasks));
  std::vector<std::vector<std::string>> batch;
  for (int i = 0; i < 20; ++i) batch.push_back({"GET", "k" + std::to_string(i)});
  const std::vector<redis::Reply> replies = co_await r.pipeline(batch);
  for (int i = 0; i < 20; ++i) {
    require(replies.at(static_cast<std::size_t>(i)).str == value_for(i, 3000 + 100 * i), "pipelined GET");
  }
}

// Not a sweep: the reader task and the reply parser with replies cut at
// random points (short reads, jittered segments), over ten seeds.
TEST(SimRedis, RepliesCutAnywhereStillMatchTheirCommands) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Simulation sim({.seed = seed, .jitter = 0.0005, .short_io = true});
    sim.host("redis").spawn(sim_redis::server());
    EXPECT_NO_THROW(sim.run_until_complete(sim.host("client"), many_commands())) << "seed " << seed;
  }
}

}  // namespace
