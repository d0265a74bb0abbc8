// Subprocesses: read a child's output as a stream, feed one through
// communicate(), and stop one that overruns its time.
//
// The asyncio original:
//
//   async def main():
//       proc = await asyncio.create_subprocess_exec(
//           "uname", "-sr", stdout=asyncio.subprocess.PIPE)
//       print("kernel:", (await proc.stdout.readline()).decode().strip())
//       await proc.wait()
//
//       proc = await asyncio.create_subprocess_exec(
//           "sort", stdin=PIPE, stdout=PIPE)
//       out, _ = await proc.communicate(b"pear\napple\nfig\n")
//
//       proc = await asyncio.create_subprocess_exec("sleep", "10")
//       try:
//           await asyncio.wait_for(proc.wait(), 0.2)
//       except asyncio.TimeoutError:
//           proc.kill()
//           print("returncode", await proc.wait())   # -9
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <corio/corio.hpp>
#include <corio/subprocess.hpp>

using namespace std::chrono_literals;

namespace app {

corio::SubprocessOptions piped(bool with_stdin) {
  corio::SubprocessOptions opts;
  if (with_stdin) opts.in = corio::Redirect::pipe;
  opts.out = corio::Redirect::pipe;
  return opts;
}

corio::Coro<> main() {
  std::vector<std::string> args{"-sr"};
  corio::Process uname = co_await corio::create_subprocess_exec("uname", args, piped(false));
  const std::string kernel = co_await uname.out.readline();
  std::printf("kernel: %s", kernel.c_str());
  co_await uname.wait();

  // communicate() writes and reads at once: no deadlock however much the
  // child writes before it has read everything.
  args.clear();
  corio::Process sort = co_await corio::create_subprocess_exec("sort", args, piped(true));
  auto [sorted, unused] = co_await sort.communicate("pear\napple\nfig\n");
  std::printf("sorted:\n%s", sorted.c_str());

  args = {"10"};
  corio::Process sleeper = co_await corio::create_subprocess_exec("sleep", args);
  try {
    co_await corio::wait_for(sleeper.wait(), 200ms);
  } catch (const corio::TimeoutError&) {
    sleeper.kill();  // a timeout does not stop the child by itself
  }
  std::printf("sleep 10 stopped after 0.2 s, returncode %d\n", co_await sleeper.wait());
}

}  // namespace app

int main() { return corio::run_main(app::main()); }
