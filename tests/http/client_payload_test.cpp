// Bodies that are not whole: short of their Content-Length, chunked and cut,
// a bad chunk size, and over TLS a body read until close that ends without
// close_notify. Each is a ClientPayloadError for the reader and a failure
// (counted, reported, exit code 1) for the real `corio fetch`.
#include <map>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientPayloadError;
using corio::http::ClientResponse;
using corio::http::ClientSession;

// What the peer answers, by request path; the connection ends after it.
const std::map<std::string, std::string>& replies() {
  static const std::map<std::string, std::string> r = {
      {"/whole", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"},
      {"/short", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"},
      {"/chunked-cut", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"},
      {"/bad-chunk",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
      {"/until-close", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nthe body until close"},
  };
  return r;
}

// Answers one request by its path. abort: end the connection without a
// goodbye (over TLS: no close_notify), as a crash or an attacker's cut does.
Coro<void> answer_by_path(StreamReader reader, StreamWriter writer, bool abort) {
  std::string head;
  try {
    head = co_await reader.readuntil("\r\n\r\n");
  } catch (const std::exception&) {
    co_return;  // the client gave up first
  }
  const std::size_t from = head.find(' ') + 1;
  const auto it = replies().find(head.substr(from, head.find(' ', from) - from));
  writer.write(it == replies().end() ? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                                     : it->second);
  co_await writer.drain();
  if (abort) {
    writer.abort();
    co_return;
  }
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> answer_plain(StreamReader r, StreamWriter w) {
  return answer_by_path(std::move(r), std::move(w), false);
}

Coro<void> answer_cut(StreamReader r, StreamWriter w) {
  return answer_by_path(std::move(r), std::move(w), true);
}

// Reads the body at url: "" and *payload_error set when a ClientPayloadError
// ends it.
Coro<std::string> read_body(ClientSession* s, std::string url, bool* payload_error) {
  *payload_error = false;
  ClientResponse r = co_await s->get(url);
  EXPECT_EQ(r.status(), 200) << url;
  try {
    co_return co_await r.read();
  } catch (const ClientPayloadError&) {
    *payload_error = true;
  }
  co_return "";
}

Coro<void> plain_bodies() {
  corio::ClientConnected handler = answer_plain;
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  ClientSession s;
  bool failed = false;
  EXPECT_EQ(co_await read_body(&s, base + "/whole", &failed), "hello");
  EXPECT_FALSE(failed);
  EXPECT_EQ(co_await read_body(&s, base + "/until-close", &failed), "the body until close");
  EXPECT_FALSE(failed) << "over plain TCP the close is the end";
  for (const char* path : {"/short", "/chunked-cut", "/bad-chunk"}) {
    co_await read_body(&s, base + path, &failed);
    EXPECT_TRUE(failed) << path;
  }
  EXPECT_EQ(s.open_connections(), 0u);
  co_await s.close();
  server.close();
}

TEST(ClientPayload, TruncatedOrMalformedBodiesRaiseClientPayloadError) {
  run_bounded(plain_bodies(), 20s);
}

// Two HTTPS peers with the certificate make_certificates made in dir: one
// ends each answer with close_notify, the other without.
struct TlsPeers {
  Server goodbye;
  Server no_goodbye;
  std::string url(const Server& server, const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(server.port()) + path;
  }
};

Coro<TlsPeers> start_tls_peers(fs::path dir) {
  corio::ServerOptions so;
  so.ssl = corio::SslContext::server((dir / "server.pem").string(), (dir / "server.key").string());
  corio::ClientConnected plain = answer_plain;
  corio::ClientConnected cut = answer_cut;
  TlsPeers peers;
  peers.goodbye = co_await corio::start_server(plain, "127.0.0.1", 0, so);
  peers.no_goodbye = co_await corio::start_server(cut, "127.0.0.1", 0, so);
  co_return peers;
}

Coro<void> tls_bodies(const TempDir* certs) {
  const fs::path dir = certs->path();
  TlsPeers peers = co_await start_tls_peers(dir);
  Server& goodbye = peers.goodbye;
  Server& no_goodbye = peers.no_goodbye;
  ClientOptions co;
  co.ssl = corio::SslContext::client();
  co.ssl->load_verify_locations((dir / "ca.pem").string());
  ClientSession s(co);
  bool failed = false;
  const std::string path = "/until-close";
  EXPECT_EQ(
      co_await read_body(&s, "https://127.0.0.1:" + std::to_string(goodbye.port()) + path, &failed),
      "the body until close");
  EXPECT_FALSE(failed) << "a close_notify ends the body";
  co_await read_body(&s, "https://127.0.0.1:" + std::to_string(no_goodbye.port()) + path, &failed);
  EXPECT_TRUE(failed) << "an EOF without close_notify is no end of a body read until close";
  EXPECT_EQ(co_await read_body(
                &s, "https://127.0.0.1:" + std::to_string(no_goodbye.port()) + "/whole", &failed),
            "hello")
      << "a body complete by its Content-Length is whole, close_notify or not";
  EXPECT_FALSE(failed);
  co_await s.close();
  goodbye.close();
  no_goodbye.close();
}

TEST(ClientPayload, TlsBodyUntilCloseWithoutCloseNotifyIsTruncated) {
  TempDir certs;
  if (!make_certificates(certs.path())) GTEST_SKIP() << "openssl unavailable";
  run_bounded(tls_bodies(&certs), 30s);
}

#ifdef CORIO_CLI
// `corio fetch` on each URL: {exit code, stdout}. With ca_file it trusts
// that CA (OpenSSL's SSL_CERT_FILE; the only variable it gets).
Coro<std::pair<int, std::string>> run_fetch(std::vector<std::string> urls,
                                            std::string ca_file = {}) {
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  if (!ca_file.empty()) opts.env = std::map<std::string, std::string>{{"SSL_CERT_FILE", ca_file}};
  urls.insert(urls.begin(), "fetch");
  corio::Process p = co_await corio::create_subprocess_exec(CORIO_CLI, urls, opts);
  std::pair<std::string, std::string> output = co_await p.communicate();
  co_return std::pair<int, std::string>(co_await p.wait(), std::move(output.first));
}

Coro<void> fetch_counts_bad_bodies() {
  corio::ClientConnected handler = answer_plain;
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  std::vector<std::string> urls = {base + "/whole", base + "/short", base + "/chunked-cut",
                                   base + "/bad-chunk"};
  const std::pair<int, std::string> ran = co_await run_fetch(std::move(urls));
  const std::string& out = ran.second;
  EXPECT_EQ(ran.first, 1) << out;
  EXPECT_NE(out.find("1 of 4 succeeded"), std::string::npos) << out;
  for (const char* path : {"/short", "/chunked-cut", "/bad-chunk"}) {
    const std::size_t row = out.rfind(base + path);  // the table's row, after the progress lines
    const std::string line =
        row == std::string::npos ? "" : out.substr(row, out.find('\n', row) - row);
    EXPECT_NE(line.find("ClientPayloadError"), std::string::npos) << path << " in\n" << out;
  }
  std::vector<std::string> one = {base + "/whole"};
  const std::pair<int, std::string> whole = co_await run_fetch(std::move(one));
  EXPECT_EQ(whole.first, 0) << whole.second;
  server.close();
}

TEST(ClientPayload, FetchFailsOnEveryTruncatedOrMalformedBody) {
  run_bounded(fetch_counts_bad_bodies(), 60s);
}

Coro<void> fetch_over_tls(const TempDir* certs) {
  TlsPeers peers = co_await start_tls_peers(certs->path());
  const std::string cut = peers.url(peers.no_goodbye, "/until-close");
  std::vector<std::string> urls = {peers.url(peers.goodbye, "/until-close"), cut};
  const std::pair<int, std::string> ran =
      co_await run_fetch(std::move(urls), (certs->path() / "ca.pem").string());
  const std::string& out = ran.second;
  EXPECT_EQ(ran.first, 1) << out;
  EXPECT_NE(out.find("1 of 2 succeeded"), std::string::npos) << out;
  const std::size_t row = out.rfind(cut);
  EXPECT_NE(out.find("close_notify", row == std::string::npos ? out.size() : row),
            std::string::npos)
      << "the cut body's row says why\n"
      << out;
  peers.goodbye.close();
  peers.no_goodbye.close();
}

TEST(ClientPayload, FetchFailsOnATlsBodyCutWithoutCloseNotify) {
  TempDir certs;
  if (!make_certificates(certs.path())) GTEST_SKIP() << "openssl unavailable";
  run_bounded(fetch_over_tls(&certs), 60s);
}
#endif

}  // namespace
}  // namespace corio_http_test
