// `corio fetch URL... [--concurrency N] [--timeout S] [-o DIR]`: a
// concurrent downloader on corio::http::ClientSession.
//
// At most --concurrency requests at once (a Semaphore), each bounded by
// --timeout; on a terminal a live progress line, otherwise one plain line
// per finished URL; then a table (status, bytes, seconds per URL). The exit
// code says whether every URL gave a 2xx with its whole body (a body short
// of its Content-Length, a truncated or malformed chunked one, or a TLS
// body ended without close_notify is a failure). With -o DIR each body is saved
// as DIR/<n>-<last path segment>.
//
// With no URL it serves a built-in site on a free loopback port (1,000
// pages of 2 KiB) and fetches all of it, printing the throughput: the
// embedded default, a demo that needs no network.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <corio/corio.hpp>
#include <corio/http.hpp>

#include "commands.hpp"

namespace corio_cli {
namespace {

namespace http = corio::http;
using Clock = std::chrono::steady_clock;

struct FetchArgs {
  std::vector<std::string> urls;
  int concurrency = 10;
  int timeout = 30;  // seconds per URL
  std::string out_dir;
};

struct Outcome {
  int status = 0;  // 0: failed before a status
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::string error;
  // A 2xx whose body came whole: a body cut short or malformed after a 200
  // head is a failure, or a downloader would report saved what it did not.
  bool ok() const { return error.empty() && status >= 200 && status <= 299; }
};

// The live line on a terminal, or one line per URL otherwise.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(::isatty(STDOUT_FILENO) != 0) {}
  void done(const std::string& url, const Outcome& o) {
    ++done_;
    bytes_ += o.bytes;
    failed_ += !o.ok();
    if (!tty_) {
      fmt::print("{} {} {} B {:.3f} s{}\n", o.status, url, o.bytes, o.seconds,
                 o.error.empty() ? "" : "  " + o.error);
      return;
    }
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = kWidth * done_ / std::max<std::size_t>(total_, 1);
    fmt::print("\r[{}{}] {}/{} done, {} failed, {:.1f} MB", std::string(filled, '#'),
               std::string(kWidth - filled, '.'), done_, total_, failed_, bytes_ / 1e6);
    if (done_ == total_) fmt::print("\n");
    std::fflush(stdout);
  }

 private:
  std::size_t total_, done_ = 0, failed_ = 0;
  std::uint64_t bytes_ = 0;
  bool tty_;
};

std::string save_name(std::size_t index, const std::string& url) {
  std::string last = url.substr(url.find_last_of('/') + 1);
  last.erase(std::remove_if(last.begin(), last.end(),
                            [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_'; }),
             last.end());
  return fmt::format("{}-{}", index + 1, last.empty() || last[0] == '.' ? "index" : last);
}

corio::Coro<Outcome> fetch_one(http::ClientSession& session, corio::Semaphore& slots, std::string url,
                               const FetchArgs& args, std::size_t index) {
  auto slot = co_await slots.scoped_acquire();
  Outcome o;
  const auto start = Clock::now();
  try {
    http::RequestOptions opts;
    http::ClientTimeout limit;
    limit.total = std::chrono::seconds(args.timeout);
    opts.timeout = limit;
    http::ClientResponse r = co_await session.get(url, std::move(opts));
    o.status = r.status();
    const std::string body = co_await r.read();
    o.bytes = body.size();
    if (!args.out_dir.empty()) {
      std::ofstream(std::filesystem::path(args.out_dir) / save_name(index, url), std::ios::binary) << body;
    }
  } catch (...) {
    o.error = corio::describe(std::current_exception());
  }
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  co_return o;
}

corio::Coro<std::vector<Outcome>> fetch_all(const FetchArgs& args, Progress& progress) {
  http::ClientSession session;
  corio::Semaphore slots(args.concurrency);
  std::vector<corio::Task<Outcome>> tasks;
  for (std::size_t i = 0; i < args.urls.size(); ++i) {
    tasks.push_back(corio::create_task(fetch_one(session, slots, args.urls[i], args, i)));
  }
  std::vector<Outcome> outcomes(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    outcomes[i] = co_await tasks[i];
    progress.done(args.urls[i], outcomes[i]);
  }
  co_await session.close();
  co_return outcomes;
}

int summary(const FetchArgs& args, const std::vector<Outcome>& outcomes, double seconds) {
  std::size_t ok = 0;
  std::uint64_t bytes = 0;
  if (args.urls.size() <= 50) {
    fmt::print("{:>6}  {:>10}  {:>8}  {}\n", "status", "bytes", "seconds", "url");
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const Outcome& o = outcomes[i];
      fmt::print("{:>6}  {:>10}  {:>8.3f}  {}{}\n", o.status ? std::to_string(o.status) : "-", o.bytes,
                 o.seconds, args.urls[i], o.error.empty() ? "" : "  (" + o.error + ")");
    }
  }
  for (const Outcome& o : outcomes) {
    ok += o.ok();
    bytes += o.bytes;
  }
  fmt::print("{} of {} succeeded, {:.1f} MB in {:.2f} s ({:.0f} requests/s, {:.1f} MB/s)\n", ok,
             outcomes.size(), bytes / 1e6, seconds, outcomes.size() / seconds, bytes / 1e6 / seconds);
  return ok == outcomes.size() ? 0 : 1;
}

corio::Coro<http::Response> page(http::Request& req) {
  co_return http::Response::text(fmt::format("<h1>page {}</h1>{}", req.param("n"), std::string(2048, '.')));
}

// No URL: a built-in site and 1,000 of its pages.
corio::Coro<int> run_fetch(FetchArgs args) {
  http::ServerOptions quiet;
  quiet.access_log = nullptr;
  http::Server site(quiet);
  site.get("/page/{n}", page);
  std::optional<corio::Task<void>> serving;
  if (args.urls.empty()) {
    co_await site.start("127.0.0.1", 0);
    serving.emplace(corio::create_task(site.serve_forever()));
    for (int i = 1; i <= 1000; ++i) args.urls.push_back(fmt::format("http://127.0.0.1:{}/page/{}", site.port(), i));
    fmt::print("no URL given: fetching 1,000 pages from a built-in site on 127.0.0.1:{}, {} at a time\n",
               site.port(), args.concurrency);
  }
  if (!args.out_dir.empty()) std::filesystem::create_directories(args.out_dir);
  Progress progress(args.urls.size());
  const auto start = Clock::now();
  const std::vector<Outcome> outcomes = co_await fetch_all(args, progress);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (serving) {
    site.close();
    co_await *serving;
  }
  co_return summary(args, outcomes, seconds);
}

}  // namespace

Command fetch_command() {
  static FetchArgs args;
  return Command{
      "fetch",
      "Concurrent HTTP(S) downloader; with no URL, fetches 1,000 pages from a built-in site",
      [](Options& o) {
        o.positionals("urls", args.urls, "the URLs to fetch");
        o.option("--concurrency", args.concurrency, "requests at once (default 10)", 1, 10000);
        o.option("--timeout", args.timeout, "seconds allowed per URL (default 30)", 1, 86400);
        o.option("-o", args.out_dir, "save each body under this directory");
      },
      [] { return corio::run_main(run_fetch(args)); }};
}

}  // namespace corio_cli
