// Section 1: gather, three coroutines on one thread (examples/hello_gather.cpp).
#include <string>
#include <vector>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

corio::Coro<> say(Demo& demo, std::vector<int>& printed, int seq, std::string word, Seconds delay) {
  co_await corio::sleep(delay);  // hands the loop back until the delay is over
  demo.out("[{}] {}", seq, word);
  printed.push_back(seq);
}

}  // namespace

corio::Coro<> gather_section(Demo& demo) {
  demo.explain(
      "Each say() sleeps and hands the loop back, so the three run at once on one thread;");
  demo.explain("the output order is set by the delays, not by the order in the code:");
  demo.explain(
      fmt::format("  co_await gather(say(1, \"hello\", {0}s), say(2, \"world\", {1}s), "
                  "say(3, \"async\", {2}s))",
                  demo.secs(0.3), demo.secs(0.1), demo.secs(0.2)));
  std::vector<int> printed;
  co_await corio::gather(say(demo, printed, 1, "hello", demo.t(0.3)),  //
                         say(demo, printed, 2, "world", demo.t(0.1)),  //
                         say(demo, printed, 3, "async", demo.t(0.2)));
  demo.expect(printed == std::vector<int>{2, 3, 1},
              "the lines should come in the order [2], [3], [1]");
  demo.elapsed_line(
      fmt::format("sum of delays {} s: concurrent, so the slowest sets the total", demo.secs(0.6)));
}

}  // namespace corio_cli::demo
