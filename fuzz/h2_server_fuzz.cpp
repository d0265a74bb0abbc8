// libFuzzer target: the HTTP/2 server's glue (src/http/h2/: nghttp2's
// callbacks, the streams' heads, bodies and trailers, the guard), from the
// frames a client sends to the Request a handler gets. Input: one steering
// byte (bit 0: small limits, as the other HTTP targets), then the bytes
// after the client preface, sent on one loopback connection to a Server
// whose handler reads each request whole.
//
// Checks, on every Request a handler gets: version 2.0; a method and a
// target; no pseudo-header and no connection-specific field among the
// fields, names in lower case; the limits held (fields, head bytes, body);
// and the connection ends, whatever the frames (the server closes it, or
// it ends at the client's end of input), with no crash, leak or UB.
#include <cctype>
#include <cstdint>
#include <string>

#include <corio/corio.hpp>
#include <corio/http/server.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace corio_fuzz;
using corio::Coro;

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// Loop iterations given to the server after the input went: enough for
// loopback I/O and the handlers' first steps.
constexpr int kTurns = 20;

bool forbidden(std::string_view name) {
  for (std::string_view f :
       {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}) {
    if (name == f) return true;
  }
  return false;
}

void check_fields(const Headers& fields, const Limits& limits) {
  FUZZ_CHECK(fields.size() <= limits.max_headers);
  for (const Header& h : fields) {
    FUZZ_CHECK(!h.name.empty() && h.name[0] != ':');
    FUZZ_CHECK(!forbidden(h.name));
    for (char c : h.name) FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)));
  }
}

// A middleware, so that every request gets here, routed or not.
Coro<Response> handler(const Limits* limits, Request& req) {
  FUZZ_CHECK(req.version().major == 2 && req.version().minor == 0);
  FUZZ_CHECK(!req.method().empty() && !req.target().empty());
  check_fields(req.headers(), *limits);
  std::string body;
  try {
    body = co_await req.read();
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.status() == 413 || e.status() == 400);
    throw;
  }
  FUZZ_CHECK(body.size() <= limits->max_body);
  check_fields(req.trailers(), *limits);
  co_return Response::text(std::to_string(body.size()));
}

Coro<void> one(std::string input, Limits limits) {
  ServerOptions opts;
  opts.access_log = {};
  opts.limits = limits;
  opts.max_concurrent_streams = 8;
  Server server(opts);
  server.use([l = &limits](Request& r, corio::http::Next) { return handler(l, r); });
  co_await server.start("127.0.0.1", 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  writer.write(std::string(kPreface) + input);
  for (int i = 0; i < kTurns; ++i) co_await corio::sleep(std::chrono::seconds(0));
  writer.write_eof();
  try {
    // The server's end: what it says until it closes. Bounded: a server
    // that does not close is a finding (TimeoutError escapes, libFuzzer
    // reports it as a crash).
    co_await corio::wait_for(reader.read(), std::chrono::seconds(5));
  } catch (const std::system_error&) {
    // A reset is an end too.
  }
  writer.close();
  server.close();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  corio::run(one(input, pick_limits(data[0])));
  return 0;
}
