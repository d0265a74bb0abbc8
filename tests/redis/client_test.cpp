// redis::Client against a real redis-server: typed replies, binary-safe
// arguments, pipelining, timeouts that close the connection, cancellation
// that drops a reply and keeps the rest in step, pub/sub, pools, and
// reconnection after a restart.
#include <string>
#include <vector>

#include <corio/errors.hpp>
#include <corio/gather.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/to_thread.hpp>

#include "redis/redis_support.hpp"

namespace {

using corio::Coro;
using namespace corio::redis;
using namespace std::chrono_literals;
using redis_testing::options;
using redis_testing::run_redis;

// Each test keys under its own prefix: the server is shared.
std::string key(const char* test, const char* name) { return std::string(test) + ":" + name; }

TEST(RedisClient, RepliesAreTypedAndArgumentsBinarySafe) {
  run_redis([]() -> Coro<void> {
    Client r = co_await Client::connect(options());
    const std::string k = key("typed", "bytes");
    const std::string bytes("a\0b\r\n$3\r\n\xff", 10);
    Reply ok = co_await r.command("SET", k, bytes);
    EXPECT_EQ(ok.type, Reply::Type::status);
    EXPECT_EQ(ok.as_string(), "OK");
    Reply got = co_await r.command("GET", k);
    EXPECT_EQ(got.type, Reply::Type::string);
    EXPECT_EQ(got.str, bytes);
    EXPECT_TRUE((co_await r.command("GET", key("typed", "missing"))).is_nil());
    EXPECT_EQ((co_await r.command("INCRBY", key("typed", "n"), 41)).as_integer(), 41);
    co_await r.command("RPUSH", key("typed", "list"), "x", 2, 3.5);
    Reply list = co_await r.command("LRANGE", key("typed", "list"), 0, -1);
    EXPECT_EQ(list.type, Reply::Type::array);
    EXPECT_EQ(list.elements.size(), 3u);
    if (list.elements.size() == 3) {
      EXPECT_EQ(list.elements[2].str, "3.5");
    }
    try {
      co_await r.command("INCR", key("typed", "list"));
      ADD_FAILURE() << "no error";
    } catch (const ServerError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("WRONGTYPE", 0), 0u);
    }
    EXPECT_EQ((co_await r.command("PING")).as_string(), "PONG");
  }());
}

Coro<long long> incr(Client* r, std::string k) { co_return(co_await r->command("INCR", k)).integer; }

TEST(RedisClient, ConcurrentCommandsArePipelinedInOrder) {
  run_redis([]() -> Coro<void> {
    Client r = co_await Client::connect(options());
    const std::string k = key("pipe", "counter");
    co_await r.command("DEL", k);
    std::vector<corio::Task<long long>> tasks;
    for (int i = 0; i < 100; ++i) tasks.push_back(corio::create_task(incr(&r, k)));
    co_await corio::sleep(0s);
    EXPECT_EQ(r.in_flight(), 100u);
    std::vector<long long> got = co_await corio::gather(std::move(tasks));
    for (int i = 0; i < 100; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i + 1);

    const std::vector<std::vector<std::string>> batch{
        {"SET", key("pipe", "a"), "1"}, {"LPUSH", key("pipe", "a"), "x"}, {"GET", key("pipe", "a")}};
    std::vector<Reply> replies = co_await r.pipeline(batch);
    EXPECT_EQ(replies.size(), 3u);
    if (replies.size() != 3) co_return;
    EXPECT_EQ(replies[0].str, "OK");
    EXPECT_TRUE(replies[1].is_error());  // a value here, not an exception
    EXPECT_EQ(replies[2].str, "1");
  }());
}

TEST(RedisClient, TimeoutClosesTheConnectionAndTheNextCommandGetsItsOwnReply) {
  run_redis([]() -> Coro<void> {
    ClientOptions o = options();
    o.command_timeout = 100ms;
    Client r = co_await Client::connect(o);
    Client other = co_await Client::connect(options());
    const std::string list = key("late", "list");
    co_await other.command("SET", key("late", "k"), "v");
    EXPECT_THROW(co_await r.command("BLPOP", list, 0), corio::TimeoutError);
    EXPECT_FALSE(r.is_connected());  // the BLPOP's connection went with it
    co_await other.command("LPUSH", list, "element");
    EXPECT_EQ((co_await r.command("GET", key("late", "k"))).str, "v");
    EXPECT_TRUE(r.is_connected());
  }());
}

Coro<void> block_forever(Client* r, std::string k) { co_await r->command("BLPOP", k, 0); }
Coro<std::string> get(Client* r, std::string k) { co_return(co_await r->command("GET", k)).str; }

TEST(RedisClient, CancelledCommandsReplyIsConsumedAndDropped) {
  run_redis([]() -> Coro<void> {
    Client r = co_await Client::connect(options());
    Client other = co_await Client::connect(options());
    const std::string list = key("cancel", "list");
    co_await other.command("SET", key("cancel", "k"), "value");
    corio::Task<void> blocked = corio::create_task(block_forever(&r, list));
    co_await corio::sleep(50ms);
    blocked.cancel();
    EXPECT_THROW(co_await blocked, corio::CancelledError);
    corio::Task<std::string> after = corio::create_task(get(&r, key("cancel", "k")));
    co_await corio::sleep(50ms);
    EXPECT_FALSE(after.done());  // still behind the BLPOP on the server
    co_await other.command("LPUSH", list, "unblock");
    EXPECT_EQ(co_await after, "value");  // not the BLPOP's reply
  }());
}

TEST(RedisPubSub, MessagesArriveInOrderAsAnAsyncSequence) {
  run_redis([]() -> Coro<void> {
    Subscriber sub = co_await Subscriber::connect(options());
    Client pub = co_await Client::connect(options());
    // Named: g++ 12 cannot hold an initializer list across a co_await.
    const std::vector<std::string> channels{"news", "sports"}, patterns{"log.*"};
    co_await sub.subscribe(channels);
    co_await sub.psubscribe(patterns);
    EXPECT_EQ((co_await pub.command("PUBLISH", "news", "one")).integer, 1);
    co_await pub.command("PUBLISH", "sports", std::string("t\0wo", 4));
    co_await pub.command("PUBLISH", "log.error", "three");
    Message a = co_await sub.next();
    EXPECT_EQ(a.channel, "news");
    EXPECT_EQ(a.payload, "one");
    Message b = co_await sub.next();
    EXPECT_EQ(b.payload, std::string("t\0wo", 4));
    Message c = co_await sub.next();
    EXPECT_EQ(c.channel, "log.error");
    EXPECT_EQ(c.pattern, "log.*");
    EXPECT_EQ(c.payload, "three");
  }());
}

TEST(RedisPubSub, UnsubscribeLeavesOnlyTheChannelsNamed) {
  run_redis([]() -> Coro<void> {
    Subscriber sub = co_await Subscriber::connect(options());
    Client pub = co_await Client::connect(options());
    const std::vector<std::string> both{"unsub.a", "unsub.b"}, a{"unsub.a"}, none;
    co_await sub.subscribe(both);
    co_await pub.command("PUBLISH", "unsub.a", "before");
    co_await sub.unsubscribe(a);
    EXPECT_EQ((co_await pub.command("PUBLISH", "unsub.a", "after")).integer, 0);
    EXPECT_EQ((co_await pub.command("PUBLISH", "unsub.b", "still")).integer, 1);
    EXPECT_EQ((co_await sub.next()).payload, "before");  // queued before: kept
    EXPECT_EQ((co_await sub.next()).payload, "still");
    EXPECT_THROW(co_await sub.unsubscribe(none), corio::ValueError);
  }());
}

TEST(RedisPool, SpreadsCommandsOverItsClients) {
  run_redis([]() -> Coro<void> {
    Pool pool = co_await Pool::create(options(), 3);
    EXPECT_EQ(pool.size(), 3u);
    Client* first = &pool.get();
    corio::Task<void> blocked = corio::create_task(block_forever(first, key("pool", "l")));
    co_await corio::sleep(0s);
    EXPECT_NE(&pool.get(), first);  // the busy one is passed over
    EXPECT_EQ((co_await pool.get().command("PING")).str, "PONG");
    blocked.cancel();
    EXPECT_THROW(co_await blocked, corio::CancelledError);
    first->close();
  }());
}

TEST(RedisClient, RefusedConnectIsAConnectionError) {
  run_redis([]() -> Coro<void> {
    ClientOptions o;
    o.port = 1;
    EXPECT_THROW(co_await Client::connect(o), ConnectionError);
  }());
}

// hiredis takes the host as a C string: "127.0.0.1\0.evil" would connect
// to 127.0.0.1. Refused before connecting.
TEST(RedisClient, HostWithNulIsAValueError) {
  run_redis([]() -> Coro<void> {
    ClientOptions o = options();
    o.host += std::string("\0.evil", 6);
    EXPECT_THROW(co_await Client::connect(o), corio::ValueError);
    EXPECT_THROW(co_await Subscriber::connect(o), corio::ValueError);
  }());
}

Coro<void> restart(corio_testing::DbServer* server) {
  co_await corio::to_thread([server] { server->restart(); });
}

TEST(RedisFaults, ServerRestartFailsWhatWasInFlightAndTheClientReconnects) {
  corio_testing::DbServer server("redis");
  run_redis([](corio_testing::DbServer* server) -> Coro<void> {
    Client r = co_await Client::connect(redis_testing::options_for(server->address()));
    co_await r.command("SET", "k", "before");
    corio::Task<void> blocked = corio::create_task(block_forever(&r, "l"));
    co_await corio::sleep(50ms);
    co_await restart(server);
    EXPECT_THROW(co_await blocked, ConnectionError);
    EXPECT_FALSE(r.is_connected());
    EXPECT_EQ((co_await r.command("PING")).str, "PONG");  // reconnected
    EXPECT_TRUE((co_await r.command("GET", "k")).is_nil());  // a fresh server
  }(&server));
}

}  // namespace
