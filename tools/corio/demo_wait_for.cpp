// Section 3: wait_for over gather(return_exceptions), the seed's fetch_all
// (examples/wait_for_gather.cpp), with simulated fetches: no network, each
// fetch sleeps for its round trip and then answers or fails. The seed's times
// are divided by 10 (5 s overall timeout -> 0.5 s; a 10 s site -> 1 s).
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

using Response = std::pair<std::string, int>;  // (url, status), as the seed returns

struct Site {
  std::string url;
  double delay;  // seconds, before --fast scaling
  bool fail = false;
};

corio::Coro<Response> fetch(Demo& demo, std::string url, Seconds delay, bool fail) {
  try {
    co_await corio::sleep(delay);  // connect + request + response
  } catch (const corio::CancelledError&) {
    demo.out("{}: cancelled while waiting for the response", url);
    throw;
  }
  if (fail) {
    demo.out("{}: connection reset", url);
    throw std::runtime_error("connection reset by " + url);
  }
  demo.out("{}: 200", url);
  co_return Response{url, 200};
}

// The seed's _gather_all: every fetch at once, failures returned as results.
corio::Coro<std::vector<corio::Outcome<Response>>> gather_all(Demo& demo, std::vector<Site> sites) {
  std::vector<corio::Coro<Response>> fetches;
  for (const Site& s : sites) fetches.push_back(fetch(demo, s.url, demo.t(s.delay), s.fail));
  co_return co_await corio::gather(corio::return_exceptions, std::move(fetches));
}

// Part 1: the seed's program as written; everything answers in time.
corio::Coro<> all_in_time(Demo& demo, std::vector<Site> sites) {
  try {
    auto results = co_await corio::wait_for(gather_all(demo, std::move(sites)), demo.t(0.5));
    demo.out("results:");
    for (const auto& r : results) {
      if (r) {
        demo.out("  ({}, {})", r.value().first, r.value().second);
      } else {
        demo.out("  error: {}", corio::describe(r.error()));
      }
    }
    demo.expect(results.size() == 3 && results[0].has_value() && !results[1].has_value() &&
                    results[2].has_value(),
                "the second fetch should be the only error result");
  } catch (const corio::TimeoutError&) {
    demo.out("overall timeout");
    demo.expect(false, "nothing should time out in part 1");
  }
}

// Part 2: one site is too slow. The fetches are tasks we keep, so after the
// timeout we can still see which ones finished.
corio::Coro<> with_a_slow_site(Demo& demo, std::vector<Site> sites) {
  std::vector<corio::Task<Response>> tasks;
  for (const Site& s : sites)
    tasks.push_back(corio::create_task(fetch(demo, s.url, demo.t(s.delay), s.fail), s.url));
  try {
    co_await corio::wait_for(corio::gather(corio::return_exceptions, tasks), demo.t(0.5));
    demo.expect(false, "part 2 should end in TimeoutError");
  } catch (const corio::TimeoutError&) {
    // gather has cancelled the unfinished fetches and waited for them to
    // unwind: every task is done now, with a value, an error, or cancelled.
    demo.out("TimeoutError: overall timeout, some requests did not finish:");
    for (const corio::Task<Response>& task : tasks) {
      if (task.cancelled()) {
        demo.out("  {:<26} cancelled by the timeout", task.get_name());
      } else if (task.exception()) {
        demo.out("  {:<26} failed: {}", task.get_name(), corio::describe(task.exception()));
      } else {
        demo.out("  {:<26} completed in time: ({}, {})", task.get_name(), task.result().first,
                 task.result().second);
      }
    }
  }
  demo.expect(tasks[0].done() && !tasks[0].cancelled() && !tasks[0].exception() &&
                  tasks[1].done() && !tasks[1].cancelled() && !tasks[1].exception(),
              "the two quick fetches should have completed");
  demo.expect(tasks[2].cancelled(), "the slow fetch should have been cancelled");
}

}  // namespace

corio::Coro<> wait_for_section(Demo& demo) {
  demo.explain(
      "gather runs the fetches concurrently; return_exceptions turns a failure into one result");
  demo.explain(
      "among the others; wait_for puts one deadline on the whole and cancels what is left.");
  demo.explain(fmt::format(
      "Simulated fetches, the seed's times divided by 10: overall timeout {} s.", demo.secs(0.5)));

  demo.part("every site answers in time, one with an error: one failure does not sink the rest");
  // (A named list: g++ 12 rejects a braced list written inside a co_await
  // expression, "array used as initializer".)
  std::vector<Site> sites = {
      {"https://example.com", 0.10},
      {"https://httpbin.org/get", 0.20, /*fail=*/true},
      {"https://www.python.org", 0.15},
  };
  co_await all_in_time(demo, std::move(sites));
  demo.elapsed_line("the slowest fetch");

  demo.part(fmt::format("one site takes {} s: the overall timeout fires, partial results remain",
                        demo.secs(1.0)));
  sites = {
      {"https://example.com", 0.10},
      {"https://httpbin.org/get", 0.20},
      {"https://slow.example.org", 1.00},
  };
  co_await with_a_slow_site(demo, std::move(sites));
  demo.elapsed_line(fmt::format("the deadline, not the slow site's {} s", demo.secs(1.0)));
}

}  // namespace corio_cli::demo
