// The real `corio fetch` against a local peer that fails on purpose: 503
// then 200, 502 twice, 429 with a Retry-After (honoured, and capped), a server that
// never answers, a refused port, a 404 that must not be retried, and an
// output directory that cannot exist. Delays are shortened with the tool's
// options, so the whole suite takes a few seconds.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <corio/http/server.hpp>

#include "common/temp_dir.hpp"
#include "tools/cli_support.hpp"

namespace corio_tools_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// When each path was asked for, on the loop's clock (the peer and the test
// share one loop and run one test at a time).
std::map<std::string, std::vector<double>>& hits() {
  static std::map<std::string, std::vector<double>> h;
  return h;
}

std::string reply(const std::string& path, std::size_t hit) {
  auto answer = [](const char* status, const char* headers, const char* body) {
    return fmt::format("HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n{}\r\n{}", status,
                       std::strlen(body), headers, body);
  };
  const bool first = hit == 1;
  if (path.starts_with("/ok")) return answer("200 OK", "", "hello");
  if (path.starts_with("/flaky")) {
    return first ? answer("503 Service Unavailable", "", "later") : answer("200 OK", "", "fine");
  }
  if (path.starts_with("/twice")) {  // fails twice, then answers
    return hit <= 2 ? answer("502 Bad Gateway", "", "") : answer("200 OK", "", "third time");
  }
  if (path.starts_with("/busy")) {
    return first ? answer("429 Too Many Requests", "Retry-After: 1\r\n", "") : answer("200 OK", "", "done");
  }
  if (path.starts_with("/far")) return answer("429 Too Many Requests", "Retry-After: 3600\r\n", "");
  return answer("404 Not Found", "", "no such page");
}

// One request per connection; /hang is read and never answered, until the
// client gives up and closes.
corio::Coro<void> peer(corio::StreamReader reader, corio::StreamWriter writer) {
  std::string head;
  try {
    head = co_await reader.readuntil("\r\n\r\n");
  } catch (const std::exception&) {
    co_return;
  }
  const std::size_t from = head.find(' ') + 1;
  const std::string path = head.substr(from, head.find(' ', from) - from);
  std::vector<double>& times = hits()[path];
  times.push_back(corio::get_running_loop().time());
  if (path == "/hang") {
    co_await reader.read();  // EOF: the client's timeout closed it
    co_return;
  }
  writer.write(reply(path, times.size()));
  co_await writer.drain();
  writer.close();
  co_await writer.wait_closed();
}

// A port nothing listens on: bound once, then closed.
corio::Coro<std::uint16_t> closed_port() {
  corio::ClientConnected unused = peer;
  corio::Server server = co_await corio::start_server(unused, "127.0.0.1", 0);
  const std::uint16_t port = server.port();
  server.close();
  co_await server.wait_closed();
  co_return port;
}

// `corio fetch ARGS` with the peer running; an argument starting with "/"
// (but -o's) is a path on the peer. Returns what it printed and how it exited.
corio::Coro<Ran> fetch_with_peer(std::vector<std::string> args) {
  hits().clear();
  corio::ClientConnected handler = peer;
  corio::Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].starts_with("/") && (i == 0 || args[i - 1] != "-o")) args[i] = base + args[i];
  }
  args.insert(args.begin(), "fetch");
  Ran ran = co_await run_corio(std::move(args));
  server.close();
  co_await server.wait_closed();
  co_return ran;
}

Ran fetch(std::vector<std::string> args) { return corio::run(fetch_with_peer(std::move(args))); }

// The row of the URL ending in `path`: the line that names it.
std::string row(const std::string& out, const std::string& path) {
  const std::size_t at = out.find(path + "  ");
  const std::size_t end = out.find(path + "\n");
  const std::size_t hit = std::min(at, end);
  if (hit == std::string::npos) return "";
  const std::size_t start = out.rfind('\n', hit) + 1;
  return out.substr(start, out.find('\n', hit) - start);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Fetch, EveryUrlSucceedingExitsZero) {
  const Ran ran = fetch({"/ok/1", "/ok/2"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("2 of 2 succeeded, 0 failed"));
  EXPECT_THAT(ran.out, HasSubstr("requests/s"));
}

TEST(Fetch, A503IsRetriedUntilItSucceeds) {
  const Ran ran = fetch({"--retries", "2", "--retry-delay", "0.05", "/flaky", "/ok"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(row(ran.out, "/flaky"), HasSubstr("2 attempts"));
  EXPECT_THAT(row(ran.out, "/flaky"), HasSubstr("   200"));
  EXPECT_EQ(hits()["/flaky"].size(), 2u);
  EXPECT_THAT(ran.out, HasSubstr("2 of 2 succeeded"));
}

TEST(Fetch, TheBackoffDoublesAtEachRetry) {
  const Ran ran = fetch({"--retries", "2", "--retry-delay", "0.2", "/twice"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  const std::vector<double>& times = hits()["/twice"];
  ASSERT_EQ(times.size(), 3u) << ran.out;
  // With equal jitter a wait is at least half its delay: 0.2 s, then 0.4 s.
  EXPECT_GE(times[1] - times[0], 0.1 - 0.01);
  EXPECT_GE(times[2] - times[1], 0.2 - 0.01);
  EXPECT_THAT(row(ran.out, "/twice"), HasSubstr("3 attempts"));
}

TEST(Fetch, WithoutRetriesA503FailsAndTheExitCodeSaysSo) {
  const Ran ran = fetch({"/flaky", "/ok"});
  EXPECT_EQ(ran.code, 1) << ran.out;
  EXPECT_THAT(row(ran.out, "/flaky"), HasSubstr("   503"));
  EXPECT_THAT(ran.out, HasSubstr("1 of 2 succeeded, 1 failed"));
}

TEST(Fetch, RetryAfterIsHonoured) {
  const Ran ran = fetch({"--retries", "1", "--retry-delay", "0.01", "/busy"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  const std::vector<double>& times = hits()["/busy"];
  ASSERT_EQ(times.size(), 2u) << ran.out;
  // Retry-After: 1, where the backoff alone would have waited 0.01 s.
  EXPECT_GE(times[1] - times[0], 0.9);
}

TEST(Fetch, RetryAfterIsCappedByTheLongestDelay) {
  const Ran ran = fetch({"--retries", "1", "--retry-max-delay", "0.1", "/far"});
  EXPECT_EQ(ran.code, 1) << ran.out;
  const std::vector<double>& times = hits()["/far"];
  ASSERT_EQ(times.size(), 2u) << ran.out;
  EXPECT_LT(times[1] - times[0], 30);  // not the 3600 s the server asked for
  EXPECT_THAT(row(ran.out, "/far"), HasSubstr("   429"));
  EXPECT_THAT(row(ran.out, "/far"), HasSubstr("2 attempts"));
}

TEST(Fetch, ATimeoutSaysHowLongAndIsRetried) {
  const Ran ran = fetch({"--timeout", "0.2", "--retries", "1", "--retry-delay", "0.01", "/hang"});
  EXPECT_EQ(ran.code, 1) << ran.out;
  EXPECT_THAT(row(ran.out, "/hang"), HasSubstr("(timed out after 0.2 s, 2 attempts)"));
  EXPECT_THAT(ran.out, Not(HasSubstr("TimeoutError")));
  EXPECT_EQ(hits()["/hang"].size(), 2u);
  // Nothing succeeded: no rate to report.
  EXPECT_THAT(ran.out, HasSubstr("0 of 1 succeeded, 1 failed"));
  EXPECT_THAT(ran.out, Not(HasSubstr("requests/s")));
}

TEST(Fetch, ARefusedConnectionIsNamedAndRetried) {
  const std::uint16_t port = corio::run(closed_port());
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/x";
  const Ran ran = fetch({"--retries", "2", "--retry-delay", "0.01", url});
  EXPECT_EQ(ran.code, 1) << ran.out;
  const std::string line = row(ran.out, url);
  EXPECT_THAT(line, HasSubstr("(connection refused, 3 attempts)"));
  // No response came: the status is "-", never 0.
  EXPECT_THAT(line, ::testing::StartsWith("     -"));
}

TEST(Fetch, A404IsNotRetried) {
  const Ran ran = fetch({"--retries", "3", "--retry-delay", "0.01", "/missing"});
  EXPECT_EQ(ran.code, 1) << ran.out;
  EXPECT_EQ(hits()["/missing"].size(), 1u);
  EXPECT_THAT(row(ran.out, "/missing"), HasSubstr("   404"));
  EXPECT_THAT(row(ran.out, "/missing"), Not(HasSubstr("attempts")));
}

TEST(Fetch, OffATerminalEachUrlIsListedOnce) {
  const Ran ran = fetch({"/ok/1", "/missing", "/ok/3"});
  for (const char* path : {"/ok/1", "/missing", "/ok/3"}) {
    EXPECT_EQ(count(ran.out, std::string(path) + "\n") + count(ran.out, std::string(path) + "  "), 1u)
        << path << " in\n" << ran.out;
  }
  EXPECT_THAT(ran.out, Not(HasSubstr("\r")));  // no live line off a terminal
}

using corio_testing::TempDir;

TEST(Fetch, AnOutputDirectoryThatCannotBeIsAnErrorBeforeAnyRequest) {
  TempDir tmp;
  std::ofstream(tmp.path() / "file") << "a file, not a directory";
  const Ran ran = fetch({"-o", (tmp.path() / "file" / "pages").string(), "/ok"});
  EXPECT_EQ(ran.code, 2) << ran.out;
  EXPECT_THAT(ran.err, HasSubstr("corio fetch: error: -o "));
  EXPECT_TRUE(hits()["/ok"].empty());
}

TEST(Fetch, BodiesAreSavedUnderTheOutputDirectory) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "new" / "pages";
  const Ran ran = fetch({"-o", dir.string(), "/ok"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  std::ifstream saved(dir / "1-ok");
  std::string body((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  EXPECT_EQ(body, "hello");
}

// The version that answered, from a corio server in this process (it
// speaks h2c with prior knowledge and HTTP/1.1 on one port).
corio::Coro<corio::http::Response> version(corio::http::Request& req) {
  co_return corio::http::Response::text(fmt::format("{}.{}", req.version().major, req.version().minor));
}

corio::Coro<std::string> fetch_version(std::vector<std::string> flags, fs::path dir) {
  corio::http::ServerOptions quiet;
  quiet.access_log = nullptr;
  corio::http::Server server(quiet);
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  std::vector<std::string> args{"fetch", "-o", dir.string()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(fmt::format("http://127.0.0.1:{}/v", server.port()));
  const Ran ran = co_await run_corio(std::move(args));
  server.close();
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  std::ifstream saved(dir / "1-v");
  co_return std::string((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
}

TEST(Fetch, Http2FlagSpeaksH2cAndHttp11FlagHttp11) {
  TempDir tmp;
  EXPECT_EQ(corio::run(fetch_version({"--http2"}, tmp.path() / "a")), "2.0");
  EXPECT_EQ(corio::run(fetch_version({}, tmp.path() / "b")), "1.1");  // plain http: no ALPN to ask
  EXPECT_EQ(corio::run(fetch_version({"--http1.1"}, tmp.path() / "c")), "1.1");
  const Ran both = corio_cli({"fetch", "--http1.1", "--http2", "http://127.0.0.1:1/"});
  EXPECT_EQ(both.code, 2);
  EXPECT_THAT(both.err, HasSubstr("exclude each other"));
}

}  // namespace
}  // namespace corio_tools_test
