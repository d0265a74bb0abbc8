// The REST examples' ending: serve on `port` until Ctrl-C / SIGTERM, or,
// with --self-test, on a free port just long enough for `self_test` to call
// every endpoint once. Returns the process's exit status either way.
#pragma once

#include <cstdint>
#include <cstdio>

#include <corio/corio.hpp>
#include <corio/http.hpp>

namespace corio_examples {

// The server's routes are added; `what` names the service in the banner.
inline corio::Coro<int> serve_or_self_test(corio::http::Server& server, std::uint16_t port,
                                           bool test, const char* what,
                                           corio::Coro<bool> (*self_test)(std::uint16_t)) {
  co_await server.start("127.0.0.1", test ? 0 : port);
  if (!test) {
    std::printf("%s on http://127.0.0.1:%u/items (Ctrl-C stops it gracefully)\n", what,
                server.port());
    co_await corio::http::run_until_signal(server);
    co_return 0;
  }
  corio::Task<void> serving = corio::create_task(server.serve_forever());
  const bool ok = co_await self_test(server.port());
  server.close();
  co_await serving;
  std::printf("self-test %s\n", ok ? "passed" : "FAILED");
  co_return ok ? 0 : 1;
}

}  // namespace corio_examples
