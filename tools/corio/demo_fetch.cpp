// Section 13: the seed's fetch_all_news with the real HTTP client: five
// pages at once over one ClientSession, one deadline for all of them, and
// one failing page that does not sink the others.
#include <corio/http.hpp>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

namespace http = corio::http;

const char* const kTeams[] = {"lakers", "celtics", "warriors", "nuggets", "knicks"};

corio::Coro<std::string> fetch(http::ClientSession& session, std::string url) {
  http::RequestOptions opts;
  opts.raise_for_status = true;
  http::ClientResponse r = co_await session.get(std::move(url), std::move(opts));
  co_return co_await r.text();
}

}  // namespace

corio::Coro<> fetch_section(Demo& demo) {
  demo.explain(fmt::format(
      "A local news site answers each page after {} s, and the knicks page with a 500.\n"
      "gather(return_exceptions) inside wait_for: five GETs at once on one ClientSession.",
      demo.secs(0.5)));
  http::ServerOptions quiet;
  quiet.access_log = nullptr;
  http::Server site(quiet);
  const Seconds delay = demo.t(0.5);
  http::Handler page = [delay](http::Request& req) -> corio::Coro<http::Response> {
    co_await corio::sleep(delay);
    if (req.param("team") == "knicks") co_return http::Response::text("database down", 500);
    co_return http::Response::text(fmt::format("<h1>{} news</h1>", req.param("team")));
  };
  site.get("/news/{team}", page);
  co_await site.start("127.0.0.1", 0);
  corio::Task<void> serving = corio::create_task(site.serve_forever());

  http::ClientSession session;
  std::vector<corio::Coro<std::string>> gets;
  for (const char* team : kTeams) {
    gets.push_back(fetch(session, fmt::format("http://127.0.0.1:{}/news/{}", site.port(), team)));
  }
  auto all = corio::gather(corio::return_exceptions, std::move(gets));
  auto pages = co_await corio::wait_for(std::move(all), demo.t(2.0));
  int ok = 0;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (pages[i].has_value()) {
      ++ok;
      demo.out("{:<9} {}", kTeams[i], pages[i].value());
    } else {
      demo.out("{:<9} failed: {}", kTeams[i], corio::describe(pages[i].error()));
    }
  }
  demo.expect(ok == 4, "four pages and one 500");
  demo.expect(demo.elapsed() < 3 * delay.count(), "the five requests ran at once");
  co_await session.close();
  site.close();
  co_await serving;
  demo.elapsed_line(fmt::format("five {} s pages, fetched at once", demo.secs(0.5)));
}

}  // namespace corio_cli::demo
