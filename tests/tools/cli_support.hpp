// Runs the real `corio` tool (its path is CORIO_CLI, set by
// tools/CMakeLists.txt) as a child process with its output piped: what a
// user at a shell sees, off a terminal.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <corio/corio.hpp>

namespace corio_tools_test {

using namespace std::chrono_literals;

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `corio ARGS...`; a child still running after `limit` is a failure of the
// test (wait_for's TimeoutError), not a hang.
inline corio::Coro<Ran> run_corio(std::vector<std::string> args,
                                  std::chrono::seconds limit = 60s) {
  corio::SubprocessOptions opts;
  opts.in = corio::Redirect::devnull;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::pipe;
  corio::Process p = co_await corio::create_subprocess_exec(CORIO_CLI, std::move(args), opts);
  std::pair<std::string, std::string> output = co_await corio::wait_for(p.communicate(), limit);
  Ran ran;
  ran.exit_code = co_await p.wait();
  ran.out = std::move(output.first);
  ran.err = std::move(output.second);
  co_return ran;
}

// The same from outside a loop.
inline Ran corio_cli(std::vector<std::string> args) { return corio::run(run_corio(std::move(args))); }

}  // namespace corio_tools_test
