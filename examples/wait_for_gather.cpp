// wait_for over gather(return_exceptions): concurrent fetches with one overall
// timeout, where one failure does not sink the rest.
//
// The asyncio original fetches real URLs with aiohttp:
//
//   async def fetch(session, url):
//       async with session.get(url) as resp:
//           return url, resp.status
//
//   async def _gather_all(urls):
//       async with aiohttp.ClientSession() as session:
//           return await asyncio.gather(*[fetch(session, u) for u in urls],
//                                       return_exceptions=True)
//
//   async def main():
//       try:
//           results = await asyncio.wait_for(_gather_all(urls), 5.0)
//           print(results)
//       except asyncio.TimeoutError:
//           print("overall timeout, some requests did not finish")
//
// Here there is no network: fetch(url, delay, fail) sleeps for `delay` (the
// round trip) and then returns (url, 200) or throws. The waiting is real but
// scaled down tenfold so the program runs in about a second: the original's 5 s
// overall timeout is 0.5 s here, and its "slow site" takes 1 s instead of 10 s.
//
// Round 1: everything answers in time, one fetch fails. gather with
// return_exceptions hands back one Outcome per fetch, value or error, so the
// failure is just one entry among the results.
//
// Round 2: one site is too slow and the overall timeout fires. wait_for
// cancels the gather, which cancels the fetches still running. Because the
// fetches were created as tasks we hold on to, we can still see which ones
// completed before the deadline and which were cancelled by it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

using Seconds = std::chrono::duration<double>;
using Response = std::pair<std::string, int>;  // (url, status), as the original returns

// The original's wait_for(..., 5.0), scaled down tenfold.
constexpr Seconds kOverallTimeout = 0.5s;

// A simulated site: how long it takes to answer, and whether the request fails.
struct Site {
  std::string url;
  Seconds delay;
  bool fail = false;
};

corio::Coro<Response> fetch(std::string url, Seconds delay, bool fail) {
  co_await corio::sleep(delay);  // stands for connect + request + response
  if (fail) throw std::runtime_error("connection reset by " + url);
  co_return Response{url, 200};
}

void print_result(const corio::Outcome<Response>& result) {
  if (result.has_value()) {
    std::printf("  (%s, %d)\n", result.value().first.c_str(), result.value().second);
  } else {
    std::printf("  error: %s\n", corio::describe(result.error()).c_str());
  }
}

// _gather_all: every fetch at once; return_exceptions turns each failure into
// an error result instead of letting the first one propagate.
corio::Coro<std::vector<corio::Outcome<Response>>> gather_all(std::vector<Site> sites) {
  std::vector<corio::Coro<Response>> fetches;
  for (const Site& site : sites) fetches.push_back(fetch(site.url, site.delay, site.fail));
  co_return co_await corio::gather(corio::return_exceptions, std::move(fetches));
}

// Round 1: the original program as written. Returns how many requests
// failed (-1: the overall timeout).
corio::Coro<int> fetch_all(std::vector<Site> sites) {
  try {
    auto results = co_await corio::wait_for(gather_all(std::move(sites)), kOverallTimeout);
    int failed = 0;
    for (const auto& result : results) {
      print_result(result);
      failed += !result.has_value();
    }
    co_return failed;
  } catch (const corio::TimeoutError&) {
    std::printf("overall timeout, some requests did not finish\n");
  }
  co_return -1;
}

// Round 2: the same, with the fetches as tasks so they can be inspected after
// a timeout. Returns how many the timeout cancelled.
corio::Coro<int> fetch_all_reporting_partial_results(std::vector<Site> sites) {
  std::vector<corio::Task<Response>> tasks;
  for (const Site& site : sites) {
    tasks.push_back(corio::create_task(fetch(site.url, site.delay, site.fail), site.url));
  }
  try {
    // gather takes its own copy of the task handles; `tasks` stays usable.
    auto results =
        co_await corio::wait_for(corio::gather(corio::return_exceptions, tasks), kOverallTimeout);
    for (const auto& result : results) print_result(result);
    co_return 0;
  } catch (const corio::TimeoutError&) {
    // By now gather has cancelled the unfinished fetches and waited for them
    // to unwind, so every task is done: with a value, an error, or cancelled.
    std::printf("overall timeout, some requests did not finish:\n");
    for (const corio::Task<Response>& task : tasks) {
      const std::string name = task.get_name();
      if (task.cancelled()) {
        std::printf("  %-26s cancelled by the timeout\n", name.c_str());
      } else if (task.exception()) {
        std::printf("  %-26s failed: %s\n", name.c_str(),
                    corio::describe(task.exception()).c_str());
      } else {
        std::printf("  %-26s completed: status %d\n", name.c_str(), task.result().second);
      }
    }
  }
  co_return static_cast<int>(
      std::count_if(tasks.begin(), tasks.end(), [](const auto& t) { return t.cancelled(); }));
}

corio::Coro<int> main() {
  corio::EventLoop& loop = corio::get_running_loop();

  std::printf("round 1: all answer within %.1f s, one fails\n", kOverallTimeout.count());
  // (The site lists are named variables: g++ 12 rejects a braced list of
  // aggregates written directly in a co_await expression, "array used as
  // initializer".)
  std::vector<Site> sites = {
      {"https://example.com", 0.10s},
      {"https://httpbin.org/get", 0.20s, /*fail=*/true},
      {"https://www.python.org", 0.15s},
  };
  double start = loop.time();
  const int failed = co_await fetch_all(std::move(sites));
  std::printf("elapsed %.2f s\n\n", loop.time() - start);

  std::printf("round 2: one site takes 1 s, the overall timeout is %.1f s\n",
              kOverallTimeout.count());
  sites = {
      {"https://example.com", 0.10s},
      {"https://httpbin.org/get", 0.20s},
      {"https://slow.example.org", 1.00s},
  };
  start = loop.time();
  const int cancelled = co_await fetch_all_reporting_partial_results(std::move(sites));
  const double elapsed = loop.time() - start;
  std::printf("elapsed %.2f s (the timeout, not the slow site's 1 s)\n", elapsed);
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return failed == 1 && cancelled == 1 ? 0 : 1;
}

}  // namespace app

int main() { return corio::run_main(app::main()); }
