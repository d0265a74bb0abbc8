// A crawler whose work queue and page cache live in Redis, so any number of
// worker tasks (or processes) can share them:
//
//   <prefix>queue    a list of URLs to fetch (LPUSH in, RPOP out)
//   <prefix>seen     a set: SADD says whether a URL is new, so each is queued once
//   <prefix>pending  a counter of URLs queued or being fetched: 0 means done
//   <prefix>titles   a hash url -> page title (the crawl's result)
//   cache:<url>      the page body, kept an hour (SET EX): a second crawl
//                    fetches nothing over HTTP
//
// Usage: example_redis_crawler --redis HOST:PORT --start URL [--workers N]
//        example_redis_crawler --redis-file FILE --self-test   (serves a small site
//           on a free port, crawls it twice, checks the second came from the cache)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <corio/corio.hpp>
#include <corio/http.hpp>
#include <corio/redis.hpp>

using corio::Coro;
namespace redis = corio::redis;
namespace http = corio::http;

namespace {

struct Crawl {
  redis::ClientOptions redis;
  std::string prefix;  // the crawl's keys
  std::string origin;  // links are resolved against it ("http://host:port")
};

std::vector<std::string> links_in(const std::string& html) {
  static const std::regex href(R"(href="(/[^"]*)\")");
  std::vector<std::string> out;
  for (std::sregex_iterator it(html.begin(), html.end(), href), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

std::string title_of(const std::string& html) {
  static const std::regex title("<title>([^<]*)</title>");
  std::smatch m;
  return std::regex_search(html, m, title) ? m[1].str() : "";
}

// Queues url unless it was seen; counts it as pending first, so the
// workers never see 0 while it waits.
Coro<void> enqueue(redis::Client* r, const Crawl* c, std::string url) {
  // Replies are named, never awaited inside a condition: g++ 12 miscompiles that.
  const redis::Reply added = co_await r->command("SADD", c->prefix + "seen", url);
  if (added.integer == 0) co_return;
  co_await r->command("INCR", c->prefix + "pending");
  co_await r->command("LPUSH", c->prefix + "queue", url);
}

// The page from the cache, or fetched and cached.
Coro<std::string> page(redis::Client* r, http::ClientSession* web, std::string url) {
  redis::Reply cached = co_await r->command("GET", "cache:" + url);
  if (!cached.is_nil()) co_return cached.str;
  http::ClientResponse resp = co_await web->get(url);
  std::string body = co_await resp.text();
  co_await r->command("SET", "cache:" + url, body, "EX", 3600);
  co_return body;
}

Coro<void> worker(const Crawl* c) {
  redis::Client r = co_await redis::Client::connect(c->redis);
  http::ClientSession web;
  for (;;) {
    redis::Reply next = co_await r.command("RPOP", c->prefix + "queue");
    if (next.is_nil()) {
      const redis::Reply pending = co_await r.command("GET", c->prefix + "pending");
      if (pending.str == "0") break;
      co_await corio::sleep(std::chrono::milliseconds(5));  // others are still fetching
      continue;
    }
    const std::string url = next.str;
    const std::string html = co_await page(&r, &web, url);
    co_await r.command("HSET", c->prefix + "titles", url, title_of(html));
    for (const std::string& link : links_in(html)) co_await enqueue(&r, c, c->origin + link);
    co_await r.command("DECR", c->prefix + "pending");
  }
  co_await web.close();
}

// Crawls from `start` with n workers; returns how many pages it titled.
Coro<long long> crawl(const Crawl* c, std::string start, int n) {
  redis::Client r = co_await redis::Client::connect(c->redis);
  co_await r.command("DEL", c->prefix + "queue", c->prefix + "seen", c->prefix + "pending",
                     c->prefix + "titles");
  co_await enqueue(&r, c, std::move(start));
  std::vector<Coro<void>> workers;
  for (int i = 0; i < n; ++i) workers.push_back(worker(c));
  co_await corio::gather(std::move(workers));
  const redis::Reply titled = co_await r.command("HLEN", c->prefix + "titles");
  co_return titled.integer;
}

// A binary tree of 31 pages: /page/n links to 2n and 2n + 1.
void add_site(http::Server& site, int* hits) {
  site.get("/page/{n}", [hits](http::Request& req) -> Coro<http::Response> {
    ++*hits;
    const int n = std::stoi(std::string(req.param("n")));
    std::string html = "<html><title>page " + std::to_string(n) + "</title><body>";
    if (2 * n + 1 <= 31) {
      for (int k : {2 * n, 2 * n + 1}) html += "<a href=\"/page/" + std::to_string(k) + "\">next</a>";
    }
    co_return http::Response::text(html + "<a href=\"/page/1\">home</a></body></html>");
  });
}

Coro<int> self_test(redis::ClientOptions options) {
  http::ServerOptions so;
  so.access_log = nullptr;
  http::Server site(so);
  int hits = 0;
  add_site(site, &hits);
  co_await site.start("127.0.0.1", 0);
  corio::Task<void> serving = corio::create_task(site.serve_forever());
  const std::string origin = "http://127.0.0.1:" + std::to_string(site.port());
  const Crawl c{options, "crawl:" + std::to_string(site.port()) + ":", origin};
  const long long first = co_await crawl(&c, origin + "/page/1", 4);
  const int fetched = hits;
  const long long second = co_await crawl(&c, origin + "/page/1", 4);
  std::printf("first crawl: %lld pages, %d fetched; second: %lld pages, %d fetched\n", first,
              fetched, second, hits - fetched);
  redis::Client r = co_await redis::Client::connect(options);
  for (int n = 1; n <= 31; ++n) {
    co_await r.command("DEL", "cache:" + origin + "/page/" + std::to_string(n));
  }
  site.close();
  co_await serving;
  co_return first == 31 && fetched == 31 && second == 31 && hits == fetched ? 0 : 1;
}

redis::ClientOptions parse_address(const std::string& address) {
  redis::ClientOptions o;
  const auto colon = address.rfind(':');
  o.host = address.substr(0, colon);
  o.port = std::atoi(address.c_str() + colon + 1);
  return o;
}

Coro<int> crawl_once(redis::ClientOptions options, std::string start, int workers) {
  const auto scheme_end = start.find("://");
  const auto path = start.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const Crawl c{options, "crawl:", start.substr(0, path)};
  std::printf("%lld pages\n", co_await crawl(&c, start, workers));
  co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string address = "127.0.0.1:6379", start;
  int workers = 4;
  bool test = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--self-test")) {
      test = true;
    } else if (!std::strcmp(argv[i], "--redis") && i + 1 < argc) {
      address = argv[++i];
    } else if (!std::strcmp(argv[i], "--redis-file") && i + 1 < argc) {
      std::ifstream in(argv[++i]);
      std::getline(in, address);
    } else if (!std::strcmp(argv[i], "--start") && i + 1 < argc) {
      start = argv[++i];
    } else if (!std::strcmp(argv[i], "--workers") && i + 1 < argc) {
      workers = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s --redis HOST:PORT --start URL [--workers N] | --self-test\n",
                   argv[0]);
      return 2;
    }
  }
  if (test) return corio::run_main(self_test(parse_address(address)));
  return corio::run_main(crawl_once(parse_address(address), start, workers));
}
