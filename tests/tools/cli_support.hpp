// Runs the real `corio` tool (its path is CORIO_CLI, set by
// tools/CMakeLists.txt) as a child process with its output piped: what a
// user at a shell sees, off a terminal.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <corio/corio.hpp>

#include "common/programs.hpp"

namespace corio_tools_test {

using namespace std::chrono_literals;

using corio_testing::Ran;

// `corio ARGS...`, killed (and the test failed) if still running after `limit`.
inline corio::Coro<Ran> run_corio(std::vector<std::string> args,
                                  std::chrono::seconds limit = 60s) {
  return corio_testing::run_program(CORIO_CLI, std::move(args), limit);
}

// The same from outside a loop.
inline Ran corio_cli(std::vector<std::string> args) { return corio::run(run_corio(std::move(args))); }

}  // namespace corio_tools_test
