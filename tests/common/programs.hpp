// Programs the tests run as subprocesses on the loop (peers such as curl,
// the real `corio` tool): whether one is installed, and a run to its end with
// a time bound (past it the program is killed and the test fails).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/corio.hpp>

namespace corio_testing {

using namespace std::chrono_literals;
using corio::Coro;

inline bool has_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

#define REQUIRE_PROGRAM(name) \
  if (!::corio_testing::has_program(name)) GTEST_SKIP() << name << " is not installed"

struct Ran {
  int code = -1;
  std::string out, err;
};

// Runs a program to its end, killing it past `limit`.
inline Coro<Ran> run_program(std::string program, std::vector<std::string> args,
                   std::chrono::seconds limit = 30s) {
  corio::SubprocessOptions opts;
  opts.in = corio::Redirect::devnull;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::pipe;
  corio::Process proc = co_await corio::create_subprocess_exec(program, std::move(args), opts);
  Ran ran;
  bool timed_out = false;
  try {
    auto [out, err] = co_await corio::wait_for(proc.communicate(), limit);
    ran.out = std::move(out);
    ran.err = std::move(err);
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  if (timed_out) {
    proc.kill();
    co_await proc.wait();
    ADD_FAILURE() << program << " did not finish within " << limit.count() << " s";
  }
  ran.code = *proc.returncode();
  co_return ran;
}

}  // namespace corio_testing
