// `corio fetch URL... [--concurrency N] [--timeout S] [--retries N] [-o DIR]`:
// a concurrent downloader on corio::http::ClientSession.
//
// At most --concurrency requests at once (a Semaphore), each attempt bounded
// by --timeout. A connection error, a timeout, a 429 or a 5xx that may pass
// (not 501 or 505) is retried up to --retries times, after an exponential
// backoff with jitter (--retry-delay doubling up to --retry-max-delay), or
// after the server's Retry-After, capped the same way: what curl --retry and
// urllib3's Retry do. fetch_progress.hpp says what is printed. The exit code
// is 0 only when every URL gave a 2xx with its whole body (a body short of
// its Content-Length, a truncated or malformed chunked one, or a TLS body
// ended without close_notify is a failure), 1 otherwise, 2 for a usage error
// or an output directory it cannot write to (checked before any request).
// With -o DIR each body is saved as DIR/<n>-<last path segment>.
//
// HTTP/2 where an https server offers it (ALPN), HTTP/1.1 otherwise, as
// curl does; --http1.1 keeps to HTTP/1.1, --http2 also speaks h2c to http
// URLs (with prior knowledge: the client has no Upgrade path, so the server
// must speak h2c, as curl's --http2-prior-knowledge).
//
// With no URL it serves a built-in site on a free loopback port (1,000
// pages of 2 KiB) and fetches all of it, printing the throughput: the
// embedded default, a demo that needs no network.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <corio/corio.hpp>
#include <corio/http.hpp>

#include "commands.hpp"
#include "fetch_progress.hpp"

namespace corio_cli {
namespace {

namespace http = corio::http;
namespace fs = std::filesystem;
using fetch::Outcome;
using fetch::Progress;

struct FetchArgs {
  std::vector<std::string> urls;
  int concurrency = 10;
  double timeout = 30;  // seconds per attempt
  std::string out_dir;
  int retries = 0;
  double retry_delay = 1;       // the first backoff, doubled at each retry
  double retry_max_delay = 30;  // the cap of a backoff and of a Retry-After
  bool http11 = false;  // --http1.1
  bool http2 = false;   // --http2
};

// One try at one URL.
struct Attempt {
  Outcome outcome;
  bool retryable = false;
  std::optional<double> retry_after;  // seconds, from the response's Retry-After
};

bool retryable_status(int status) {
  return status == 429 || (status >= 500 && status <= 599 && status != 501 && status != 505);
}

// Retry-After is delay-seconds or an HTTP-date (RFC 9110, section 10.2.3).
std::optional<double> parse_retry_after(std::string_view value) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return value.size() > 9 ? 1e9 : std::stod(std::string(value));
  }
  std::tm tm{};
  const std::string text(value);
  const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return std::max(0.0, std::difftime(::timegm(&tm), std::time(nullptr)));
}

// What went wrong, in words a user reads: "timed out after 10 s", not
// "TimeoutError".
std::string explain(const std::exception_ptr& error, const FetchArgs& args, bool& retryable) {
  retryable = false;
  try {
    std::rethrow_exception(error);
  } catch (const corio::TimeoutError&) {
    retryable = true;
    return fmt::format("timed out after {:g} s", args.timeout);
  } catch (const http::ClientSSLError& e) {
    return fmt::format("TLS error: {}", e.what());
  } catch (const http::ClientConnectionError& e) {
    retryable = true;
    if (e.code() == std::errc::connection_refused) return "connection refused";
    if (e.code() == std::errc::connection_reset) return "connection reset by the server";
    return e.what();
  } catch (...) {
    return corio::describe(error);
  }
}

std::string save_name(std::size_t index, const std::string& url) {
  std::string last = url.substr(url.find_last_of('/') + 1);
  std::erase_if(last, [](char c) {
    return !std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_';
  });
  return fmt::format("{}-{}", index + 1, last.empty() || last[0] == '.' ? "index" : last);
}

// Reads the body (into `file` when saving), counting its bytes.
corio::Coro<void> take_body(http::ClientResponse& r, const fs::path* file, Outcome& o) {
  std::ofstream out;
  if (file != nullptr) out.open(*file, std::ios::binary | std::ios::trunc);
  for (std::string piece; !(piece = co_await r.read_chunk()).empty();) {
    o.bytes += piece.size();
    if (file != nullptr) out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  if (file != nullptr && !out.flush()) {
    o.error = fmt::format("cannot write {}: {}", file->string(), std::strerror(errno));
  }
}

corio::Coro<void> attempt(http::ClientSession& session, const std::string& url,
                          const FetchArgs& args, const fs::path* file, Attempt& a) {
  a = Attempt{};
  try {
    http::RequestOptions opts;
    http::ClientTimeout limit;
    limit.total = std::chrono::milliseconds(std::llround(args.timeout * 1000));
    opts.timeout = limit;
    http::ClientResponse r = co_await session.get(url, std::move(opts));
    a.outcome.status = r.status();
    if (retryable_status(r.status())) {
      a.retryable = true;
      if (auto after = r.headers().get("retry-after")) a.retry_after = parse_retry_after(*after);
      co_return;  // the body of an error that will be retried is not kept
    }
    co_await take_body(r, file, a.outcome);
  } catch (...) {
    a.outcome.error = explain(std::current_exception(), args, a.retryable);
  }
}

// The wait before retry number `retry` (0 for the first): the server's
// Retry-After, else base * 2^retry with "equal jitter" (half fixed, half
// random, so that clients failing together do not retry together); capped.
double backoff(const FetchArgs& args, int retry, std::optional<double> retry_after) {
  if (retry_after) return std::min(*retry_after, args.retry_max_delay);
  static std::mt19937 random{std::random_device{}()};
  const double full = std::min(args.retry_max_delay, args.retry_delay * std::exp2(retry));
  return full / 2 + std::uniform_real_distribution<double>(0, full / 2)(random);
}

corio::Coro<Outcome> fetch_one(http::ClientSession& session, corio::Semaphore& slots,
                               Progress& progress, const FetchArgs& args, std::size_t index) {
  auto slot = co_await slots.scoped_acquire();
  progress.started();
  const auto start = std::chrono::steady_clock::now();
  const std::string& url = args.urls[index];
  const fs::path file = args.out_dir.empty() ? fs::path() : fs::path(args.out_dir) / save_name(index, url);
  Attempt a;
  for (int tries = 1;; ++tries) {
    co_await attempt(session, url, args, args.out_dir.empty() ? nullptr : &file, a);
    a.outcome.attempts = tries;
    if (!a.retryable || tries > args.retries) break;
    co_await corio::sleep(std::chrono::duration<double>(backoff(args, tries - 1, a.retry_after)));
  }
  a.outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finished(index, a.outcome);
  co_return a.outcome;
}

http::ClientOptions client_options(const FetchArgs& args) {
  http::ClientOptions opts;
  opts.http2 = !args.http11;
  opts.http2_prior_knowledge = args.http2;
  return opts;
}

corio::Coro<std::vector<Outcome>> fetch_all(const FetchArgs& args, Progress& progress) {
  http::ClientSession session(client_options(args));
  corio::Semaphore slots(args.concurrency);
  std::vector<corio::Task<Outcome>> tasks;
  for (std::size_t i = 0; i < args.urls.size(); ++i) {
    tasks.push_back(corio::create_task(fetch_one(session, slots, progress, args, i)));
  }
  std::vector<Outcome> outcomes;
  for (corio::Task<Outcome>& task : tasks) outcomes.push_back(co_await task);
  co_await session.close();
  co_return outcomes;
}

// -o DIR must be a directory we can create files in, before any request:
// otherwise every download would fail after the network work was done.
std::optional<std::string> unwritable(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create {}: {}", dir, ec.message());
  if (!fs::is_directory(dir, ec)) return fmt::format("{} is not a directory", dir);
  const fs::path probe = fs::path(dir) / fmt::format(".corio-fetch-{}", ::getpid());
  if (!std::ofstream(probe)) return fmt::format("cannot write to {}: {}", dir, std::strerror(errno));
  fs::remove(probe, ec);
  return std::nullopt;
}

corio::Coro<http::Response> page(http::Request& req) {
  co_return http::Response::text(fmt::format("<h1>page {}</h1>{}", req.param("n"), std::string(2048, '.')));
}

// No URL: a built-in site and 1,000 of its pages.
corio::Coro<int> run_fetch(FetchArgs args) {
  if (!args.out_dir.empty()) {
    if (auto why = unwritable(args.out_dir)) {
      fmt::print(stderr, "corio fetch: error: -o {}: {}\n", args.out_dir, *why);
      co_return 2;
    }
  }
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
  Progress progress(args.urls, ::isatty(STDOUT_FILENO) != 0);
  const std::vector<Outcome> outcomes = co_await fetch_all(args, progress);
  if (serving) {
    site.close();
    co_await *serving;
  }
  co_return progress.summary(outcomes);
}

}  // namespace

Command fetch_command() {
  static FetchArgs args;
  return Command{
      "fetch",
      "Concurrent HTTP(S) downloader; with no URL, fetches 1,000 pages from a built-in site",
      "corio fetch --retries 3 -o pages https://example.com/a https://example.com/b",
      [](Options& o) {
        o.positionals("urls", args.urls, "the URLs to fetch");
        o.option("--concurrency", args.concurrency, "requests at once (default 10)", 1, 10000);
        o.option("--timeout", args.timeout, "seconds allowed per attempt (default 30)", 0.001, 86400);
        o.option("--retries", args.retries,
                 "retry a URL up to N times on a connection error, a timeout, a 429 or a 5xx "
                 "(default 0)",
                 0, 100);
        o.option("--retry-delay", args.retry_delay,
                 "seconds before the first retry, doubled at each one, with jitter (default 1)", 0,
                 3600);
        o.option("--retry-max-delay", args.retry_max_delay,
                 "the longest wait between retries, Retry-After included (default 30)", 0, 86400);
        o.option("-o", args.out_dir, "save each body under this directory (created if missing)");
        o.flag("--http1.1", args.http11, "HTTP/1.1 only (default: HTTP/2 where an https server offers it)");
        o.flag("--http2", args.http2,
               "HTTP/2 for http URLs too (h2c with prior knowledge: the server must speak it)");
      },
      [] {
        if (args.http11 && args.http2) {
          fmt::print(stderr, "corio fetch: --http1.1 and --http2 exclude each other\n");
          return 2;
        }
        return corio::run_main(run_fetch(args));
      }};
}

}  // namespace corio_cli
