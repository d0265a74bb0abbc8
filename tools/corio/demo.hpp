// `corio demo`: the narrated tour of the asyncio tutorial programs corio
// was ported from (internal to the tool).
//
// demo.cpp runs the sections in order inside one corio::run(). Most sections
// are example programs: the demo runs examples/<name>.cpp's binary, found
// next to its own (demo_examples.cpp), under a heading and a few lines of
// explanation, and checks its exit code: each example checks its own story,
// so a story is told once. The stories with no example program of their own
// are coroutines here, in demo_<topic>.cpp. Either way `corio demo` exits
// non-zero if corio misbehaves.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include <corio/corio.hpp>

namespace corio_cli::demo {

using Seconds = std::chrono::duration<double>;

// What every section is given: time scaling, narration, self-checks.
// Lives in the caller of corio::run, so it outlives every section.
class Demo {
 public:
  // A duration as text, "0.30", for narration.
  static std::string text(Seconds d) { return fmt::format("{:.2f}", d.count()); }

  // "== N. title ==", and restarts the section clock.
  void heading(int number, std::string_view title) {
    fmt::print("\n== {}. {} ==\n", number, title);
    start_ = now();
  }
  // "-- title": a part of a section; restarts the section clock.
  void part(std::string_view title) {
    fmt::print("-- {}\n", title);
    start_ = now();
  }
  // A line of explanation.
  void explain(std::string_view text) const { fmt::print("{}\n", text); }
  // A line the program itself prints, stamped with the time since the
  // section started.
  template <class... A>
  void out(fmt::format_string<A...> format, A&&... args) const {
    fmt::print("  {:5.2f}s  {}\n", elapsed(), fmt::format(format, std::forward<A>(args)...));
  }
  // Seconds since the section started, on the loop's clock.
  double elapsed() const { return now() - start_; }
  // "elapsed 0.30 s (note)": the section's closing line.
  void elapsed_line(std::string_view note) const {
    fmt::print("elapsed {:.2f} s ({})\n", elapsed(), note);
  }

  // A self-check: prints the failure and remembers it for the exit code.
  void expect(bool ok, std::string_view what) {
    if (ok) return;
    ++failures_;
    fmt::print("  !! unexpected: {}\n", what);
  }
  int failures() const noexcept { return failures_; }

 private:
  static double now() { return corio::get_running_loop().time(); }

  double start_ = 0;
  int failures_ = 0;
};

// The path of examples/<...>/<name>.cpp's program, example_<name>, next to
// this binary (a build tree) or in ../libexec/corio (an install); "" when it
// is in neither.
std::string example_program(std::string_view name);  // demo_examples.cpp
// Runs example_<name> as a section, on the demo's stdout, and checks its exit
// code.
corio::Coro<> run_example(Demo& demo, std::string name);  // demo_examples.cpp

// The sections that are not example programs (demo.cpp lists every section).
corio::Coro<> news_section(Demo& demo);  // demo_news.cpp
corio::Coro<> mcp_section(Demo& demo);   // demo_mcp.cpp

}  // namespace corio_cli::demo
