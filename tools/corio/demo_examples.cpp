// The demo's sections that are example programs: examples/<name>.cpp is
// built as example_<name> next to the corio binary (tools/CMakeLists.txt
// makes the tool depend on them and installs them), and the section runs it
// as a child process.
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
  std::string dir(self, static_cast<std::size_t>(n));
  dir.resize(dir.rfind('/') + 1);
  // A build tree has them beside corio; an installed corio in <prefix>/bin
  // finds them in <prefix>/libexec/corio (tools/CMakeLists.txt).
  for (const char* place : {"", "../libexec/corio/"}) {
    const std::string path = dir + place + "example_" + std::string(name);
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return {};
}

corio::Coro<> run_example(Demo& demo, std::string name) {
  const std::string program = example_program(name);
  if (program.empty()) {
    demo.expect(false, fmt::format("example_{} is neither next to this corio binary nor in "
                                   "../libexec/corio (configure with CORIO_BUILD_EXAMPLES=ON)",
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
