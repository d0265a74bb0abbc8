// ClientSession against real servers: nginx over HTTP and HTTPS (with a CA
// the test makes; verification on), and `python3 -m http.server`.
#include <sys/socket.h>

#include <fstream>
#include <sstream>

#include <corio/gather.hpp>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A blocking connect, before any loop runs.
bool port_answers(std::uint16_t port) {
  const corio::SocketAddress addr = corio::SocketAddress::ip("127.0.0.1", port);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = fd >= 0 && ::connect(fd, addr.data(), addr.size()) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

class Nginx {
 public:
  Nginx() {
    if (!fs::exists("/usr/sbin/nginx") || !make_certificates(dir_.path())) return;
    fs::create_directories(dir_.path() / "www");
    fs::create_directories(dir_.path() / "tmp");
    std::string page;
    for (int i = 0; i < 20000; ++i) page += "line " + std::to_string(i) + " of the corio test page\n";
    write_file(dir_.path() / "www" / "index.html", "<h1>corio</h1>\n");
    write_file(dir_.path() / "www" / "page.txt", page);
    // nginx cannot take port 0: try free ports until one pair binds.
    for (int attempt = 0; attempt < 5 && !process_; ++attempt) start(free_port(), free_port());
  }
  bool running() const { return process_ != nullptr; }
  std::string http(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(http_port_) + path; }
  std::string https(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + std::to_string(https_port_) + path;
  }
  fs::path file(const std::string& name) const { return dir_.path() / name; }

 private:
  void start(std::uint16_t http_port, std::uint16_t https_port) {
    std::string conf = read_file(peers_dir() / "nginx.conf.in");
    const std::pair<std::string, std::string> vars[] = {
        {"@DIR@", dir_.path().string()},
        {"@HTTP_PORT@", std::to_string(http_port)},
        {"@HTTPS_PORT@", std::to_string(https_port)}};
    for (const auto& [key, value] : vars) {
      for (std::size_t at; (at = conf.find(key)) != std::string::npos;) conf.replace(at, key.size(), value);
    }
    write_file(dir_.path() / "nginx.conf", conf);
    auto p = std::make_unique<PeerProcess>(std::vector<std::string>{
        "/usr/sbin/nginx", "-p", dir_.path().string(), "-e", (dir_.path() / "error.log").string(),
        "-c", (dir_.path() / "nginx.conf").string()});
    for (int i = 0; i < 100; ++i) {
      if (p->exited()) return;
      if (port_answers(http_port)) {
        process_ = std::move(p);
        http_port_ = http_port;
        https_port_ = https_port;
        return;
      }
      ::usleep(50'000);  // nginx has no readiness signal in the foreground; poll its port
    }
  }

  TempDir dir_;
  std::unique_ptr<PeerProcess> process_;
  std::uint16_t http_port_ = 0;
  std::uint16_t https_port_ = 0;
};

Coro<void> nginx_http(const Nginx* ng) {
  ClientSession s;
  for (int i = 0; i < 200; ++i) {
    ClientResponse r = co_await s.get(ng->http("/index.html"));
    CO_ASSERT(r.status() == 200);
    EXPECT_EQ(co_await r.text(), "<h1>corio</h1>\n");
  }
  EXPECT_EQ(s.open_connections(), 1u);
  ClientResponse page = co_await s.get(ng->http("/page.txt"));
  EXPECT_EQ(page.headers().get_or("Content-Encoding", ""), "gzip");
  EXPECT_EQ(co_await page.text(), read_file(ng->file("www/page.txt")));
  ClientResponse missing = co_await s.get(ng->http("/missing"));
  EXPECT_EQ(missing.status(), 404);
  co_await s.close();
}

TEST(ClientPeers, NginxHttpKeepAliveAndGzip) {
  Nginx ng;
  if (!ng.running()) GTEST_SKIP() << "nginx or openssl unavailable";
  run_bounded(nginx_http(&ng), 30s);
}

Coro<void> nginx_https(const Nginx* ng) {
  ClientOptions trusting;
  trusting.ssl = corio::SslContext::client();
  trusting.ssl->load_verify_locations(ng->file("ca.pem").string());
  ClientSession s(trusting);
  for (const char* host : {"localhost", "127.0.0.1"}) {
    for (int i = 0; i < 3; ++i) {
      ClientResponse r = co_await s.get(ng->https(host, "/page.txt"));
      CO_ASSERT(r.status() == 200);
      EXPECT_EQ(co_await r.text(), read_file(ng->file("www/page.txt")));
    }
  }
  EXPECT_EQ(s.open_connections(), 2u);  // one per origin, reused

  // 127.0.0.2 is the same server, but not a name on its certificate.
  bool refused = false;
  try {
    co_await s.get(ng->https("127.0.0.2", "/index.html"));
  } catch (const corio::http::ClientSSLError&) {
    refused = true;
  }
  EXPECT_TRUE(refused) << "wrong host name";

  ClientSession system_cas;  // does not know the test's CA
  refused = false;
  try {
    co_await system_cas.get(ng->https("localhost", "/index.html"));
  } catch (const corio::http::ClientSSLError&) {
    refused = true;
  }
  EXPECT_TRUE(refused) << "untrusted certificate";
  co_await s.close();
}

TEST(ClientPeers, NginxHttpsVerifiesTheCertificate) {
  Nginx ng;
  if (!ng.running()) GTEST_SKIP() << "nginx or openssl unavailable";
  run_bounded(nginx_https(&ng), 30s);
}

// nginx offers h2 by ALPN: a session multiplexes on one connection; with
// http2 off it stays on HTTP/1.1.
Coro<std::string> h2_page(ClientSession* s, std::string url) {
  ClientResponse r = co_await s->get(std::move(url));
  EXPECT_EQ(r.version(), (corio::http::HttpVersion{2, 0}));
  co_return co_await r.text();
}

Coro<void> nginx_h2(const Nginx* ng) {
  ClientOptions o;
  o.ssl = corio::SslContext::client();
  o.ssl->load_verify_locations(ng->file("ca.pem").string());
  ClientSession s(o);
  std::vector<Coro<std::string>> all;
  for (int i = 0; i < 20; ++i) all.push_back(h2_page(&s, ng->https("localhost", "/page.txt")));
  const std::string page = read_file(ng->file("www/page.txt"));
  for (const std::string& text : co_await corio::gather(std::move(all))) EXPECT_EQ(text, page);
  EXPECT_EQ(s.open_connections(), 1u);
  co_await s.close();
  o.http2 = false;
  ClientSession h1(o);
  ClientResponse r = co_await h1.get(ng->https("localhost", "/index.html"));
  EXPECT_EQ(r.version(), (corio::http::HttpVersion{1, 1}));
  co_await r.read();
  co_await h1.close();
}

TEST(ClientPeers, NginxHttp2MultiplexesOverTls) {
  Nginx ng;
  if (!ng.running()) GTEST_SKIP() << "nginx or openssl unavailable";
  run_bounded(nginx_h2(&ng), 30s);
}

Coro<void> static_file(std::string url, std::string expected) {
  ClientSession s;
  ClientResponse r = co_await s.get(url);
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.content_length(), expected.size());
  EXPECT_EQ(co_await r.read(), expected);
}

TEST(ClientPeers, PythonHttpServerStaticFile) {
  TempDir dir;
  std::string data;
  for (int i = 0; i < 100000; ++i) data += static_cast<char>('a' + i % 26);
  write_file(dir.path() / "data.bin", data);
  PeerProcess server({python(), "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory",
                      dir.path().string()});
  const std::uint16_t port = server.read_port();
  ASSERT_NE(port, 0);
  run_bounded(static_file("http://127.0.0.1:" + std::to_string(port) + "/data.bin", data), 20s);
}

}  // namespace
}  // namespace corio_http_test
