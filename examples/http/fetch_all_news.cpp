// The Python asyncio tutorial's fetch_all_news, for real: fetch every team's page at once,
// one overall deadline, one failure not sinking the rest.
//
// The Python original (aiohttp):
//
//   async def fetch(session, team):
//       async with session.get(f"{BASE}/news/{team}") as resp:
//           resp.raise_for_status()
//           return team, await resp.text()
//
//   async def fetch_all_news(teams):
//       async with aiohttp.ClientSession() as session:
//           tasks = [fetch(session, t) for t in teams]
//           return await asyncio.wait_for(
//               asyncio.gather(*tasks, return_exceptions=True), timeout=2.0)
//
// So that it runs anywhere, the "news site" is a corio::http::Server on a
// free loopback port in the same program: each page takes 0.5 s, one team's
// page is an error (500), and everything is fetched concurrently: about 0.5 s
// in all, not 0.5 s per team.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <corio/corio.hpp>
#include <corio/http.hpp>

using corio::Coro;
using namespace corio::http;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> kTeams = {"lakers", "celtics", "warriors", "nuggets", "knicks"};

Coro<Response> news_page(Request& req) {
  const std::string team(req.param("team"));
  co_await corio::sleep(500ms);  // a slow backend
  if (team == "knicks") co_return Response::text("database down", 500);
  co_return Response::text("<h1>" + team + " news</h1>");
}

Coro<std::string> fetch(ClientSession& session, std::string url) {
  RequestOptions opts;
  opts.raise_for_status = true;  // a 500 becomes ClientResponseError
  ClientResponse resp = co_await session.get(std::move(url), std::move(opts));
  co_return co_await resp.text();
}

// Returns whether it went as the story says (the test suite runs this).
Coro<bool> fetch_all_news() {
  ServerOptions quiet;
  quiet.access_log = nullptr;
  Server site(quiet);
  site.get("/news/{team}", news_page);
  co_await site.start("127.0.0.1", 0);
  corio::Task<void> serving = corio::create_task(site.serve_forever());

  ClientSession session;
  const std::string base = "http://127.0.0.1:" + std::to_string(site.port());
  std::vector<Coro<std::string>> fetches;
  for (const std::string& team : kTeams) fetches.push_back(fetch(session, base + "/news/" + team));

  const auto start = std::chrono::steady_clock::now();
  auto all = corio::gather(corio::return_exceptions, std::move(fetches));
  auto results = co_await corio::wait_for(std::move(all), 2s);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;

  std::size_t ok = 0;
  for (std::size_t i = 0; i < kTeams.size(); ++i) {
    if (results[i].has_value()) {
      ++ok;
      std::printf("%-9s %s\n", kTeams[i].c_str(), results[i].value().c_str());
    } else {
      std::printf("%-9s failed: %s\n", kTeams[i].c_str(), corio::describe(results[i].error()).c_str());
    }
  }
  std::printf("%zu pages in %.2f s (one at a time would take %.1f s)\n", kTeams.size(), took.count(),
              0.5 * static_cast<double>(kTeams.size()));
  co_await session.close();
  site.close();
  co_await serving;
  co_return ok == kTeams.size() - 1 && took.count() < 1.5;
}

}  // namespace

Coro<int> main_coro() { co_return co_await fetch_all_news() ? 0 : 1; }

int main() { return corio::run_main(main_coro()); }
