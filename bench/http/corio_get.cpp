// The http suite's corio client (bench/http/README.md, "Client"): N GETs of one URL, at
// most C in flight, through one corio::http::ClientSession.
//
// The same shape as aiohttp_get.py and curl_multi_get.c: the session's pool is capped
// at C connections (ClientOptions::limit) and keeps them alive; C worker tasks in a
// TaskGroup take requests from a shared count until N have been started, each reading
// the whole body. One failed request is counted, not fatal. The clock runs from the
// first request to the last body read.
//
// Usage: corio_get --url URL [--requests N] [--concurrency C]
// Prints JSON lines: http_client_rps (req/s) and http_client_errors (requests that threw
// or were not 200); exits 1 when there were errors.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include <corio/corio.hpp>
#include <corio/http/client.hpp>
#include <corio/task_group.hpp>

namespace {

struct Options {
  std::string url;
  long requests = 10000;
  long concurrency = 100;
};

Options parse_args(int argc, char** argv) {
  Options o;
  bool ok = argc % 2 == 1;
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--url") == 0) {
      o.url = argv[i + 1];
    } else if (std::strcmp(argv[i], "--requests") == 0) {
      o.requests = std::atol(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--concurrency") == 0) {
      o.concurrency = std::atol(argv[i + 1]);
    } else {
      ok = false;
    }
  }
  if (!ok || o.url.empty() || o.requests < 1 || o.concurrency < 1) {
    std::fprintf(stderr, "usage: corio_get --url URL [--requests N] [--concurrency C]\n");
    std::exit(2);
  }
  return o;
}

// One result line in the JSON shape bench/run reads from every participant.
void print_metric(const char* metric, double value, const char* unit) {
  std::printf("{\"impl\": \"corio\", \"metric\": \"%s\", \"value\": %.1f, \"unit\": \"%s\"}\n",
              metric, value, unit);
}

struct Tally {
  long to_start;
  long errors = 0;
};

corio::Coro<void> worker(corio::http::ClientSession& session, const std::string& url,
                         Tally& tally) {
  while (tally.to_start > 0) {
    --tally.to_start;
    try {
      // Named first: with g++ 12 the defaulted RequestOptions{} must not be built
      // inside a co_await expression.
      corio::Coro<corio::http::ClientResponse> request = session.get(url);
      corio::http::ClientResponse response = co_await std::move(request);
      co_await response.read();  // the whole body, as the peers read it
      tally.errors += response.status() != 200;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "corio_get: %s\n", e.what());
      ++tally.errors;
    }
  }
}

// Seconds taken by all of opts.requests GETs; errors counted into tally.
corio::Coro<double> fetch_all(const Options& opts, Tally& tally) {
  corio::http::ClientOptions session_opts;
  session_opts.limit = static_cast<std::size_t>(opts.concurrency);
  corio::http::ClientSession session(std::move(session_opts));
  const auto start = std::chrono::steady_clock::now();
  {
    corio::TaskGroup workers;
    for (long i = 0; i < opts.concurrency && i < opts.requests; ++i) {
      workers.create_task(worker(session, opts.url, tally));
    }
    co_await workers.wait();
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  co_await session.close();
  co_return elapsed.count();
}

}  // namespace

int main(int argc, char** argv) {
  const Options opts = parse_args(argc, argv);
  Tally tally{opts.requests};
  double seconds = 0;
  try {
    seconds = corio::run(fetch_all(opts, tally));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corio_get: %s\n", e.what());
    return 1;
  }
  print_metric("http_client_rps", static_cast<double>(opts.requests) / seconds, "req/s");
  print_metric("http_client_errors", static_cast<double>(tally.errors), "count");
  return tally.errors == 0 ? 0 : 1;
}
