// The demo's sections that are example programs: examples/<name>.cpp is
// built as example_<name> next to the corio binary (tools/CMakeLists.txt
// makes the tool depend on them), and the section runs it as a child process.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "demo.hpp"

namespace corio_cli::demo {

std::string example_program(std::string_view name) {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  std::string path(self, static_cast<std::size_t>(n));
  path.resize(path.rfind('/') + 1);
  path += "example_";
  path += name;
  return ::access(path.c_str(), X_OK) == 0 ? path : std::string();
}

corio::Coro<> run_example(Demo& demo, std::string name) {
  const std::string program = example_program(name);
  if (program.empty()) {
    demo.expect(false, fmt::format("example_{} is not next to this corio binary (build it: "
                                   "cmake --build --preset release --target corio_cli)",
                                   name));
    co_return;
  }
  // The program writes to the demo's own stdout: on a terminal its lines come
  // as it prints them (through a pipe, stdio would hold them until it exits).
  std::fflush(stdout);
  corio::SubprocessOptions opts;
  opts.in = corio::Redirect::devnull;
  corio::Process child = co_await corio::create_subprocess_exec(program, {}, opts);
  const int status = co_await child.wait();
  demo.expect(status == 0,
              fmt::format("example_{} exited with status {}: its story did not hold", name, status));
  demo.elapsed_line(fmt::format("example_{}, from start to exit", name));
}

}  // namespace corio_cli::demo
