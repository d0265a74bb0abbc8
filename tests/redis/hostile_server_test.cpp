// redis::Client against a broken or hostile server (a fake one on loopback):
// a reply's announced size costs no memory until its bytes arrive and is
// refused past the limits, and a connection whose reply stalled past the
// command timeout is closed and replaced, never reused.
#include <cstdio>
#include <string>
#include <vector>

#include "common/memory.hpp"
#include "redis/fake_server.hpp"
#include "redis/redis_support.hpp"

namespace {

using corio::Coro;
using corio::TimeoutError;
using corio_testing::expect_little_growth_since;
using corio_testing::Memory;
using corio_testing::memory_now;
using namespace corio::redis;
using namespace std::chrono_literals;
using redis_testing::FakeRedis;
using redis_testing::run_redis;

// What the first command throws ("" if nothing) against a server that
// answers it with `bytes` and stalls, for a client with `o`'s limits and
// timeout (the client is closed on return).
Coro<std::string> failure_against(std::string bytes, ClientOptions o) {
  // Named: g++ 12 destroys a closure temporary inside a co_await twice.
  FakeRedis::Script script = [bytes](int, int) { return FakeRedis::Answer{bytes, true}; };
  FakeRedis server = co_await FakeRedis::start(std::move(script));
  o.port = server.options().port;
  Client r = co_await Client::connect(o);
  std::string failure;
  try {
    co_await r.command("GET", "k");
  } catch (const TimeoutError& e) {
    failure = std::string("TimeoutError: ") + e.what();
  } catch (const ConnectionError& e) {
    failure = std::string("ConnectionError: ") + e.what();
  }
  if (r.is_connected()) failure += " (still connected)";
  co_return failure;
}

// The command failed as refused past `limit`, and its connection closed.
void expect_refused(const std::string& failure, const char* limit) {
  EXPECT_EQ(failure.rfind("ConnectionError: reply refused", 0), 0u) << failure;
  EXPECT_NE(failure.find(limit), std::string::npos) << failure;
  EXPECT_EQ(failure.find("still connected"), std::string::npos) << failure;
}

// Before the limits these commands stalled: they time out, not hang.
ClientOptions with_timeout(std::chrono::milliseconds timeout) {
  ClientOptions o;
  o.command_timeout = timeout;
  return o;
}

// 13 bytes announcing 100 million elements made hiredis's reader allocate
// 800 MB of element slots (RSS 767 MiB once the client closed). That was
// one calloc: on this kernel its untouched pages stay out of RSS (reading
// them while freeing maps the zero page), so VmPeak is where it showed,
// +775 MiB.
TEST(RedisLimits, AnArrayAnnouncingMoreThanMaxReplyElementsIsRefused) {
  run_redis([]() -> Coro<void> {
    const Memory before = memory_now();
    expect_refused(co_await failure_against("*100000000\r\n", with_timeout(5s)),
                   "max_reply_elements");
    expect_little_growth_since(before);
  }());
}

// Under the count limit, the announced count still costs nothing: the
// element slots grow with the elements received.
TEST(RedisLimits, AnArrayTakesMemoryForTheElementsReceivedNotTheCountAnnounced) {
  run_redis([]() -> Coro<void> {
    const Memory before = memory_now();
    ClientOptions o = with_timeout(500ms);
    o.max_reply_elements = 1u << 30;
    const std::string failure = co_await failure_against("*100000000\r\n:1\r\n:2\r\n", o);
    EXPECT_EQ(failure, "TimeoutError: TimeoutError");  // and closed: not "still connected"
    expect_little_growth_since(before);
  }());
}

TEST(RedisLimits, ABulkStringAnnouncingMoreThanMaxReplyBytesIsRefusedBeforeItsBytes) {
  run_redis([]() -> Coro<void> {
    expect_refused(co_await failure_against("$2000000000\r\nabc", with_timeout(5s)),
                   "max_reply_bytes");
  }());
}

// The bytes a reply takes are counted as they arrive: in finished elements,
// and in a line or string still unfinished.
TEST(RedisLimits, RepliesGrowingPastMaxReplyBytesAreRefusedAsTheyArrive) {
  run_redis([]() -> Coro<void> {
    std::string many_elements = "*100000\r\n";
    for (int i = 0; i < 100000; ++i) many_elements += ":1\r\n";
    const std::vector<std::string> answers{many_elements, "+" + std::string(1 << 20, 'a')};
    for (const std::string& bytes : answers) {
      ClientOptions o = with_timeout(5s);
      o.max_reply_bytes = 64 * 1024;
      expect_refused(co_await failure_against(bytes, o), "max_reply_bytes");
    }
  }());
}

// The first connection answers its first command with half a reply and
// stalls; every other answer is whole.
FakeRedis::Answer stall_once_midway(int connection, int command) {
  if (connection == 0 && command == 0) return FakeRedis::Answer{"$5\r\nhel", true};
  return FakeRedis::Answer{"$5\r\nhello\r\n", false};
}

// redis-py drops such a connection too.
TEST(RedisReconnect, AReplyStalledPastTheTimeoutClosesItsConnectionAndTheNextCommandReconnects) {
  run_redis([]() -> Coro<void> {
    FakeRedis server = co_await FakeRedis::start(stall_once_midway);
    ClientOptions o = server.options();
    o.command_timeout = 1s;
    Client r = co_await Client::connect(o);
    EXPECT_THROW(co_await r.command("GET", "k"), TimeoutError);
    EXPECT_FALSE(r.is_connected());
    EXPECT_EQ((co_await r.command("GET", "k")).str, "hello");
    EXPECT_EQ((co_await r.command("GET", "k")).str, "hello");
    EXPECT_EQ(server.connections(), 2);
  }());
}

TEST(RedisReconnect, APoolsClientReplacesItsStalledConnection) {
  run_redis([]() -> Coro<void> {
    FakeRedis server = co_await FakeRedis::start(stall_once_midway);
    ClientOptions o = server.options();
    o.command_timeout = 1s;
    Pool pool = co_await Pool::create(o, 1);
    EXPECT_THROW(co_await pool.get().command("GET", "k"), TimeoutError);
    EXPECT_EQ((co_await pool.get().command("GET", "k")).str, "hello");
    EXPECT_EQ(server.connections(), 2);
  }());
}

}  // namespace
