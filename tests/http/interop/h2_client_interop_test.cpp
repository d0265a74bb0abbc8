// corio's HTTP/2 client against another implementation: python3-h2 as an
// h2c server (peers/h2_server.py): many requests on one connection, a body
// past the server's window, a stream refused once (REFUSED_STREAM) and a GOAWAY above a
// request's stream, both sent again by the client. nginx over TLS is in
// client_peers_test.cpp, beside the nginx it starts. Part of the interop
// suite (label interop).
#include <corio/gather.hpp>
#include <corio/http/client.hpp>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::HttpVersion;
using corio::http::RequestOptions;

Coro<std::string> text_of(ClientSession& s, std::string url) {
  ClientResponse r = co_await s.get(std::move(url));
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.version(), (HttpVersion{2, 0}));
  co_return co_await r.text();
}

Coro<void> python_h2_body(std::uint16_t port) {
  ClientOptions o;
  o.http2_prior_knowledge = true;
  ClientSession s(o);
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  std::vector<Coro<std::string>> all;
  for (int i = 0; i < 8; ++i) all.push_back(text_of(s, base + "/hello"));
  for (const std::string& t : co_await corio::gather(std::move(all))) EXPECT_EQ(t, "hello over h2");
  EXPECT_EQ(s.open_connections(), 1u);
  RequestOptions post;
  post.data = std::string(200 * 1024, 'p');
  ClientResponse echoed = co_await s.post(base + "/echo", std::move(post));
  EXPECT_EQ(co_await echoed.text(), std::to_string(200 * 1024));
  EXPECT_EQ(co_await text_of(s, base + "/refuse-once"), "answered");
  EXPECT_EQ(co_await text_of(s, base + "/goaway-once"), "answered");
  co_await s.close();
}

TEST(ClientH2Interop, PythonH2Server) {
  PeerProcess server({python(), (peers_dir() / "h2_server.py").string()});
  const std::uint16_t port = server.read_port();
  if (port == 0) GTEST_SKIP() << "python3-h2 unavailable";
  run_bounded(python_h2_body(port), 30s);
}

}  // namespace
}  // namespace corio_http_test
