// The seed tutorials' programs (/work/shared/seeds, 001), as tests on
// virtual time: say() gathered, compute() tasks, fetches under an overall
// wait_for (with and without return_exceptions), shield through an outer
// timeout, and cancellation whose cleanup runs. Plus sleep(0)'s one yield.
#include <tuple>

#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::Task;

// ---- 001 §2: three say() coroutines gathered ------------------------------------------

Coro<void> say(std::vector<std::string>* out, int seq, std::string word, double delay) {
  co_await corio::sleep(Secs(delay));
  out->push_back("[" + std::to_string(seq) + "] " + word);
}

Coro<void> say_main(std::vector<std::string>* out) {
  const double t0 = now();
  co_await corio::gather(say(out, 1, "hello", 0.3), say(out, 2, "world", 0.1),
                         say(out, 3, "async", 0.2));
  EXPECT_DOUBLE_EQ(now() - t0, 0.3);  // concurrent: the longest, not the sum
}

TEST(Seeds, GatherOfThreeSays) {
  std::vector<std::string> out;
  run_vt(say_main(&out));
  EXPECT_EQ(out, (std::vector<std::string>{"[2] world", "[3] async", "[1] hello"}));
}

// ---- 001 §3: two compute() tasks --------------------------------------------------------

Coro<int> compute(std::vector<std::string>* out, int x) {
  out->push_back("compute " + std::to_string(x));
  co_await corio::sleep(0.1s);
  co_return x* x;
}

Coro<void> compute_main(std::vector<std::string>* out) {
  Task<int> t1 = corio::create_task(compute(out, 3));
  Task<int> t2 = corio::create_task(compute(out, 4));
  out->push_back("tasks created");  // before either task ran
  const int r1 = co_await t1;
  const int r2 = co_await t2;
  out->push_back(std::to_string(r1) + " " + std::to_string(r2));
  EXPECT_DOUBLE_EQ(now(), 0.1);  // the two ran concurrently
}

TEST(Seeds, TwoComputeTasks) {
  std::vector<std::string> out;
  run_vt(compute_main(&out));
  EXPECT_EQ(out, (std::vector<std::string>{"tasks created", "compute 3", "compute 4", "9 16"}));
}

// ---- 001 §4: fetches under an overall timeout ---------------------------------------------

struct Fetch {
  std::string url;
  double latency;
  bool fails = false;
};

// A fetch whose "session" is released however the fetch ends.
Coro<std::string> fetch(Log* log, Fetch f) {
  Cleanup session(log, f.url);
  co_await corio::sleep(Secs(f.latency));
  if (f.fails) throw std::runtime_error("fetch " + f.url + " failed");
  co_return f.url + " 200";
}

Coro<std::tuple<std::string, std::string, std::string>> gather_all(Log* log,
                                                                   std::vector<Fetch> fs) {
  co_return co_await corio::gather(fetch(log, fs[0]), fetch(log, fs[1]), fetch(log, fs[2]));
}

Coro<void> overall_timeout(Log* log, bool* timed_out) {
  std::vector<Fetch> fs{{"example.com", 1}, {"httpbin.org", 10}, {"python.org", 2}};
  try {
    co_await corio::wait_for(gather_all(log, fs), 5s);
  } catch (const corio::TimeoutError&) {
    *timed_out = true;
    EXPECT_DOUBLE_EQ(now(), 5.0);
  }
}

TEST(Seeds, GatherOfFetchesUnderAnOverallTimeout) {
  Log log;
  bool timed_out = false;
  run_vt(overall_timeout(&log, &timed_out));
  EXPECT_TRUE(timed_out);
  // The two quick fetches finished; the slow one was cancelled and released its
  // session before wait_for raised.
  EXPECT_EQ(log.events, (std::vector<std::string>{"example.com:cleanup", "python.org:cleanup",
                                                  "httpbin.org:cleanup"}));
  expect_times(log.times, {1, 2, 5});
}

Coro<std::vector<corio::Outcome<std::string>>> gather_all_re(Log* log, std::vector<Fetch> fs) {
  std::vector<Coro<std::string>> coros;
  for (const Fetch& f : fs) coros.push_back(fetch(log, f));
  co_return co_await corio::gather(corio::return_exceptions, std::move(coros));
}

Coro<void> overall_timeout_return_exceptions(Log* log) {
  std::vector<Fetch> fs{{"example.com", 1}, {"httpbin.org", 3, true}, {"python.org", 2}};
  auto results = co_await corio::wait_for(gather_all_re(log, fs), 5s);
  EXPECT_DOUBLE_EQ(now(), 3.0);
  CO_ASSERT(results.size() == 3u);
  EXPECT_EQ(results[0].value(), "example.com 200");
  EXPECT_EQ(what_of(results[1].error()), "fetch httpbin.org failed");
  EXPECT_EQ(results[2].value(), "python.org 200");
  // One slow fetch still times the whole thing out.
  std::vector<Fetch> slow{{"a", 1}, {"b", 10, true}, {"c", 2}};
  EXPECT_THROW(co_await corio::wait_for(gather_all_re(log, slow), 5s), corio::TimeoutError);
  EXPECT_DOUBLE_EQ(now(), 8.0);
}

TEST(Seeds, ReturnExceptionsKeepsOneFailureFromSinkingTheRest) {
  Log log;
  Reports reports;
  run_vt([](Log* l, Reports* r) -> Coro<void> {
    r->install();
    co_await overall_timeout_return_exceptions(l);
  }(&log, &reports));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

// ---- 001 §4: shield keeps an inner task alive through an outer timeout ---------------------

Coro<std::string> important_work(Log* log) {
  Cleanup c(log, "work");
  co_await corio::sleep(3s);
  log->add("work:saved");
  co_return "saved";
}

Coro<void> shield_main(Log* log) {
  Task<std::string> inner = corio::create_task(important_work(log));
  try {
    co_await corio::wait_for(corio::shield(inner), 1s);
    ADD_FAILURE();
  } catch (const corio::TimeoutError&) {
    log->add("caller:timeout");
  }
  EXPECT_FALSE(inner.done());
  EXPECT_EQ(co_await inner, "saved");
}

TEST(Seeds, ShieldKeepsTheInnerTaskAliveThroughAnOuterTimeout) {
  Log log;
  run_vt(shield_main(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"caller:timeout", "work:saved", "work:cleanup"}));
  expect_times(log.times, {1, 3, 3});
}

// ---- 001 §4: cancellation is cooperative; cleanup runs ---------------------------------------

Coro<void> worker(Log* log) {
  Cleanup resource(log, "resource");  // the `finally` block
  for (int i = 0;; ++i) {
    co_await corio::sleep(1s);
    log->add("tick " + std::to_string(i));
  }
}

Coro<void> cancel_main(Log* log) {
  Task<void> t = corio::create_task(worker(log));
  co_await corio::sleep(2.5s);
  EXPECT_TRUE(t.cancel("stop"));
  try {
    co_await t;
    ADD_FAILURE();
  } catch (const corio::CancelledError& e) {
    EXPECT_EQ(e.message(), "stop");
    log->add("main:cancelled");
  }
  EXPECT_TRUE(t.cancelled());
  EXPECT_FALSE(t.cancel());  // already done
}

TEST(Seeds, CancellationRunsTheCleanup) {
  Log log;
  run_vt(cancel_main(&log));
  EXPECT_EQ(log.events,
            (std::vector<std::string>{"tick 0", "tick 1", "resource:cleanup", "main:cancelled"}));
  expect_times(log.times, {1, 2, 2.5, 2.5});
}

// ---- sleep(0) yields exactly once -------------------------------------------------------------

Coro<void> yielder(std::vector<std::string>* out, std::string name) {
  out->push_back(name + "1");
  co_await corio::sleep(0s);
  out->push_back(name + "2");
  co_await corio::sleep(-1s);  // non-positive: the same single yield
  out->push_back(name + "3");
}

Coro<void> sleep_zero_main(std::vector<std::string>* out) {
  auto& loop = corio::get_running_loop();
  Task<void> a = corio::create_task(yielder(out, "a"));
  Task<void> b = corio::create_task(yielder(out, "b"));
  co_await a;
  co_await b;
  // Against the loop's iterations: a callback queued before the yield runs
  // before the resumption; one queued by that callback (the next iteration)
  // runs after it.
  loop.call_soon([out, &loop] {
    out->push_back("cb1");
    loop.call_soon([out] { out->push_back("cb2"); });
  });
  co_await corio::sleep(0s);
  out->push_back("resumed");
  co_await corio::sleep(0s);
  out->push_back("resumed again");
  EXPECT_DOUBLE_EQ(now(), 0.0);
}

TEST(Seeds, SleepZeroYieldsExactlyOnce) {
  std::vector<std::string> out;
  run_vt(sleep_zero_main(&out));
  EXPECT_EQ(out, (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3", "b3", "cb1", "resumed",
                                           "cb2", "resumed again"}));
}

}  // namespace
}  // namespace corio_async_test
