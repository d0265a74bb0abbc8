// The cancellation sweep over what leaves HTTP behind on a connection
// (ClientSession::upgrade, a CONNECT tunnel by http::open_tunnel) and over
// a multipart body read part by part in its handler (MultipartReader).
// After each cancel the next one of the same gets its own answer, and no
// host keeps a socket, task or timer the uncancelled run did not: a proxy's
// pump or an upgraded handler left waiting counts.
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/event.hpp>
#include <corio/gather.hpp>
#include <corio/http.hpp>
#include <corio/http/form_data.hpp>
#include <corio/http/multipart.hpp>
#include <corio/http/tunnel.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::quiet;
using sim_support::require;
using sim_support::upper_cased;
namespace http = corio::http;

namespace {

// ---- ClientSession::upgrade ---------------------------------------------------------------

// "Upgrade: shout": every line after the switch comes back upper-cased.
Coro<http::Response> shout(http::Request& req) {
  http::Response answer(101);
  answer.headers.add("Upgrade", "shout");
  answer.headers.add("Connection", "Upgrade");
  auto [reader, writer] = co_await req.take_connection(std::move(answer));
  for (std::string line = co_await reader.readline(); !line.empty();
       line = co_await reader.readline()) {
    writer.write(upper_cased(line));
    co_await writer.drain();
  }
  writer.close();
  co_return http::Response{};
}

Coro<void> shout_service() {
  http::Server server(quiet());
  server.get("/shout", shout);
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

Coro<void> shout_once(std::shared_ptr<http::ClientSession> session, std::string words) {
  http::RequestOptions opts;
  opts.headers.set("Connection", "Upgrade");
  opts.headers.set("Upgrade", "shout");
  std::string url = "http://10.0.0.1:8080/shout";
  http::UpgradedConnection up = co_await session->upgrade(std::move(url), std::move(opts));
  up.writer.write(words + "\n");
  const std::string back = co_await up.reader.readline();
  up.writer.close();
  co_await up.writer.wait_closed();
  require(back == upper_cased(words + "\n"), "'" + words + "' came back as '" + back + "'");
}

TEST(SweepTakeover, ClientUpgrade) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(shout_service());
    auto session = std::make_shared<http::ClientSession>();
    auto after = [session]() -> Coro<void> {
      co_await shout_once(session, "again");
      co_await session->close();
    };
    auto op = [session] { return shout_once(session, "quiet words"); };
    return SweepRun{&sim.host("client"), op, after};
  }), 3);
}

// ---- open_tunnel through a CONNECT proxy ----------------------------------------------------

Coro<void> pump(corio::StreamReader from, corio::StreamWriter to) {
  for (std::string piece = co_await from.read(65536); !piece.empty();
       piece = co_await from.read(65536)) {
    to.write(piece);
    co_await to.drain();
  }
  to.write_eof();
}

// The proxy (10.0.0.2) tunnels to the line echo server on 10.0.0.1:7000.
Coro<http::Response> tunnel(http::Request& req) {
  std::string target = "10.0.0.1";
  corio::ConnectOptions direct;
  auto [up_reader, up_writer] =
      co_await corio::open_connection(std::move(target), 7000, std::move(direct));
  auto [reader, writer] = co_await req.take_connection(http::Response(200));
  co_await corio::gather(pump(reader, up_writer), pump(up_reader, writer));
  writer.close();
  up_writer.close();
  co_return http::Response{};
}

Coro<void> proxy_service() {
  http::Server server(quiet());
  server.route("CONNECT", "/{authority}", tunnel);
  co_await server.start("0.0.0.0", 3128);
  co_await server.serve_forever();
}

Coro<void> line_through_tunnel(std::string line) {
  const http::Url proxy = http::Url::parse("http://10.0.0.2:3128");
  std::string target = "10.0.0.1";
  http::TunnelOptions options;
  auto [reader, writer] =
      co_await http::open_tunnel(proxy, std::move(target), 7000, std::move(options));
  writer.write(line + "\n");
  const std::string back = co_await reader.readline();
  writer.close();
  co_await writer.wait_closed();
  require(back == line + "\n", "'" + line + "' came back as '" + back + "'");
}

TEST(SweepTakeover, OpenTunnel) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    sim.host("target").spawn(sim_support::echo_server(7000));
    sim.host("proxy").spawn(proxy_service());
    return SweepRun{&sim.host("client"), [] { return line_through_tunnel("through"); },
                    [] { return line_through_tunnel("again"); }};
  }), 3);
}

// ---- MultipartReader in a handler -----------------------------------------------------------

// The handler gives its Request to the operation, which reads the form
// part by part; the handler answers with what the operation read, once it
// ended (cancelled or not).
struct Upload {
  http::Request* request = nullptr;
  corio::Event arrived, read;
  std::vector<std::string> parts;
  std::string answer;  // what the client got, or how it failed
};

Coro<void> read_form(std::shared_ptr<Upload> u) {
  struct Done {
    Upload& u;
    ~Done() { u.read.set(); }  // the handler answers, however the reading ended
  };
  const Done done{*u};
  co_await u->arrived.wait();
  http::MultipartReader form(*u->request);
  while (std::optional<http::BodyPart> part = co_await form.next()) {
    const std::string text = co_await part->text();
    u->parts.push_back(std::string(part->name()) + "=" + text);
  }
}

Coro<void> upload_service(std::shared_ptr<Upload> u) {
  http::Server server(quiet());
  server.post("/form", [u](http::Request& req) -> Coro<http::Response> {
    u->request = &req;
    u->arrived.set();
    co_await u->read.wait();
    std::string all;
    for (const std::string& p : u->parts) all += p + ";";
    co_return http::Response::text(all);
  });
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

Coro<void> post_form(std::shared_ptr<Upload> u) {
  http::ClientSession session;
  http::FormData form;
  form.add_field("a", std::string(300, 'a'));
  form.add_field("b", std::string(300, 'b'));
  http::RequestOptions opts;
  opts.multipart = std::move(form);
  try {
    std::string url = "http://10.0.0.1:8080/form";
    http::ClientResponse r = co_await session.post(std::move(url), std::move(opts));
    u->answer = co_await r.text();
  } catch (const std::exception& e) {
    u->answer = std::string("failed: ") + e.what();
  }
  co_await session.close();
}

// The form's body comes in pieces (a window of 128 bytes, short reads), so
// next() and the part's text() wait for it: cancelled anywhere, the handler
// still answers with the parts read whole, and the client gets it.
TEST(SweepTakeover, MultipartReaderInAHandler) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    auto u = std::make_shared<Upload>();
    auto& server = sim.host("server");
    server.spawn(upload_service(u));
    sim.host("client").spawn(post_form(u));
    auto after = [u]() -> Coro<void> {
      co_await corio::sleep(1s);
      std::string read;
      for (const std::string& p : u->parts) read += p + ";";
      require(u->answer == read, "the client got '" + u->answer + "', the handler read " + read);
      const std::string a = "a=" + std::string(300, 'a'), b = "b=" + std::string(300, 'b');
      for (const std::string& p : u->parts) require(p == a || p == b, "a part " + p);
    };
    return SweepRun{&server, [u] { return read_form(u); }, after};
  }, {.window = 128, .short_io = true}, 0.001), 4);
}

}  // namespace
