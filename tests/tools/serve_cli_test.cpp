// `corio serve`'s timeouts and limits on its command line: each is in
// --help with its unit and the library's default (ServerOptions), and the
// server started with them applies them; --tls-cert and --tls-key serve HTTPS.
#include <stdlib.h>

#include <filesystem>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <corio/http/client.hpp>

#include "http/server_support.hpp"
#include "tools/cli_support.hpp"

namespace corio_tools_test {
namespace {

using ::testing::HasSubstr;

std::string seconds_of(std::chrono::milliseconds ms) {
  return fmt::format("{}", std::chrono::duration<double>(ms).count());
}

TEST(ServeCli, HelpShowsEveryTimeoutAndLimitWithTheLibrarysDefault) {
  const corio::http::ServerOptions d;
  const std::pair<const char*, std::string> expected[] = {
      {"--header-timeout", "in seconds (default " + seconds_of(d.header_timeout) + ")"},
      {"--idle-timeout", "in seconds (default " + seconds_of(d.idle_timeout) + ")"},
      {"--body-timeout", "in seconds (default " + seconds_of(d.body_timeout) + ")"},
      {"--send-timeout", "in seconds (default " + seconds_of(d.send_timeout) + ")"},
      {"--lingering-time", "in seconds (default " + seconds_of(d.lingering_time) + ")"},
      {"--lingering-timeout", "in seconds (default " + seconds_of(d.lingering_timeout) + ")"},
      {"--min-send-rate-window", "in seconds (default " + seconds_of(d.min_send_rate_window) + ")"},
      {"--max-header-size", fmt::format("(default {})", d.limits.max_head_bytes)},
      {"--max-body", fmt::format("(default {})", d.limits.max_body)},
      {"--max-connections", fmt::format("(default {}, no cap)", d.max_connections)},
      {"--min-send-rate", "bytes/s"},
      {"--min-send-rate", fmt::format("(default {}, off)", d.min_send_rate)},
  };
  const Ran ran = corio_cli({"serve", "--help"});
  EXPECT_EQ(ran.code, 0);
  for (const auto& [flag, text] : expected) {
    // The option's line, up to the next option's.
    const std::size_t at = ran.out.find("\n  " + std::string(flag) + " ");
    ASSERT_NE(at, std::string::npos) << flag;
    const std::string entry = ran.out.substr(at, ran.out.find("\n  --", at + 1) - at);
    EXPECT_THAT(entry, HasSubstr(text)) << flag;
  }
}

TEST(ServeCli, OutOfRangeValuesAreRefused) {
  const Ran zero = corio_cli({"serve", "--idle-timeout", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_THAT(zero.err, HasSubstr("--idle-timeout: 0 is not in"));
  const Ran negative = corio_cli({"serve", "--max-body", "-1"});
  EXPECT_EQ(negative.code, 2);
  EXPECT_THAT(negative.err, HasSubstr("--max-body"));
}

corio::Coro<void> serve_with_options() {
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  std::vector<std::string> args{"serve",
                                "--port",
                                "0",
                                "--quiet",
                                "--max-body",
                                "100",
                                "--max-header-size",
                                "2048",
                                "--idle-timeout",
                                "0.5",
                                "--header-timeout",
                                "5",
                                "--body-timeout",
                                "5",
                                "--send-timeout",
                                "5",
                                "--lingering-time",
                                "2",
                                "--lingering-timeout",
                                "1",
                                "--max-connections",
                                "8",
                                "--min-send-rate",
                                "1000",
                                "--min-send-rate-window",
                                "3"};
  corio::Process proc = co_await corio::create_subprocess_exec(CORIO_CLI, std::move(args), opts);
  const std::uint16_t port = corio_http_test::port_of(co_await proc.out.readline());
  using corio_http_test::exchange;
  const std::string body(200, 'b');
  EXPECT_EQ((co_await exchange(
                 port, "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + body))
                .status,
            413);
  EXPECT_EQ((co_await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                         std::string(3000, 'h') + "\r\n\r\n"))
                .status,
            431);
  // --idle-timeout 0.5: a kept-alive connection is closed well before 75 s.
  corio_http_test::RawClient c = co_await corio_http_test::connect(port);
  c.writer.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ((co_await corio_http_test::read_reply(c.reader)).status, 200);
  const double took = co_await corio_http_test::seconds_until_closed(c.reader);
  EXPECT_GE(took, 0.0) << "still open 5 s later";
  proc.terminate();
  EXPECT_EQ(co_await proc.wait(), 0);
}

TEST(ServeCli, TheServerAppliesTheOptions) {
  corio::run(corio::wait_for(serve_with_options(), 30s));
}

TEST(ServeCli, TlsCertWithoutKeyIsRefused) {
  const Ran ran = corio_cli({"serve", "--port", "0", "--tls-cert", "cert.pem"});
  EXPECT_EQ(ran.code, 2);
  EXPECT_THAT(ran.err, HasSubstr("--tls-cert and --tls-key go together"));
}

// A self-signed certificate from the openssl CLI (a test dependency, scripts/setup).
corio::Coro<void> serve_https(std::string dir) {
  const std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  std::vector<std::string> req{"req",    "-x509",    "-newkey",
                               "ec",     "-pkeyopt", "ec_paramgen_curve:prime256v1",
                               "-nodes", "-subj",    "/CN=localhost",
                               "-days",  "1",        "-keyout",
                               key,      "-out",     cert};
  const Ran made = co_await corio_testing::run_program("openssl", std::move(req));
  if (made.code != 0) {
    ADD_FAILURE() << "openssl req: " << made.err;
    co_return;
  }
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  std::vector<std::string> serve{"serve",      "--port", "0",         "--quiet",
                                 "--tls-cert", cert,     "--tls-key", key};
  corio::Process proc = co_await corio::create_subprocess_exec(CORIO_CLI, std::move(serve), opts);
  const std::string first = co_await proc.out.readline();
  EXPECT_THAT(first, HasSubstr("listening on https://"));
  corio::ConnectOptions tls;
  tls.ssl = corio::SslContext::client();
  tls.ssl->set_verify(false);  // self-signed: the test checks the serving, not the chain
  auto [reader, writer] =
      co_await corio::open_connection("127.0.0.1", corio_http_test::port_of(first), tls);
  writer.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  const corio_http_test::Reply reply = co_await corio_http_test::read_reply(reader);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "Hello, World!");
  writer.close();
  // The same port offers h2 by ALPN.
  corio::http::ClientOptions h2;
  h2.ssl = tls.ssl;
  corio::http::ClientSession session(h2);
  corio::http::ClientResponse r = co_await session.get(
      fmt::format("https://127.0.0.1:{}/hello", corio_http_test::port_of(first)));
  EXPECT_EQ(r.version(), (corio::http::HttpVersion{2, 0}));
  EXPECT_EQ(co_await r.text(), "Hello, World!");
  co_await session.close();
  proc.terminate();
  EXPECT_EQ(co_await proc.wait(), 0);
}

// Plain TCP speaks h2c with prior knowledge beside HTTP/1.1; --no-http2 does not.
corio::Coro<void> serve_h2c(bool http2) {
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  std::vector<std::string> serve{"serve", "--port", "0", "--quiet"};
  if (!http2) serve.push_back("--no-http2");
  corio::Process proc = co_await corio::create_subprocess_exec(CORIO_CLI, std::move(serve), opts);
  const std::uint16_t port = corio_http_test::port_of(co_await proc.out.readline());
  corio::http::ClientOptions h2c;
  h2c.http2_prior_knowledge = true;
  corio::http::ClientSession session(h2c);
  bool answered = false;
  try {
    corio::http::ClientResponse r = co_await session.get(fmt::format("http://127.0.0.1:{}/hello", port));
    EXPECT_EQ(r.version(), (corio::http::HttpVersion{2, 0}));
    answered = co_await r.text() == "Hello, World!";
  } catch (const corio::http::ClientError&) {
  }
  EXPECT_EQ(answered, http2);
  co_await session.close();
  proc.terminate();
  EXPECT_EQ(co_await proc.wait(), 0);
}

TEST(ServeCli, SpeaksH2cWithPriorKnowledge) { corio::run(corio::wait_for(serve_h2c(true), 30s)); }
TEST(ServeCli, NoHttp2KeepsToHttp11) { corio::run(corio::wait_for(serve_h2c(false), 30s)); }

TEST(ServeCli, TlsCertAndKeyServeHttps) {
  char dir[] = "/tmp/corio-serve-tls-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  corio::run(corio::wait_for(serve_https(dir), 30s));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace corio_tools_test
