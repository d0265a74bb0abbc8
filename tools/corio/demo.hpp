// `corio demo`: the narrated tour of the seed programs (internal to the tool).
//
// demo.cpp runs the sections in order inside one corio::run(); each section
// is a coroutine in its own demo_<topic>.cpp. The bare programs are in
// examples/; the sections tell the same stories with a heading, a line of
// explanation, timestamped output and the elapsed time, and they check their
// own results so that `corio demo` exits non-zero if corio misbehaves.
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
  explicit Demo(double scale) : scale_(scale), precision_(scale < 1 ? 3 : 2) {}

  // A delay of the story, scaled (--fast divides every delay by 10).
  Seconds t(double seconds) const { return Seconds(seconds * scale_); }
  // The same delay as text, "0.30" (or "0.030" with --fast), for narration.
  std::string secs(double seconds) const { return text(t(seconds)); }
  // An already scaled duration as text.
  std::string text(Seconds d) const { return fmt::format("{:.{}f}", d.count(), precision_); }

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
    fmt::print("  {:{}.{}f}s  {}\n", elapsed(), precision_ + 3, precision_,
               fmt::format(format, std::forward<A>(args)...));
  }
  // Seconds since the section started, on the loop's clock.
  double elapsed() const { return now() - start_; }
  // "elapsed 0.30 s (note)": the section's closing line.
  void elapsed_line(std::string_view note) const {
    fmt::print("elapsed {:.{}f} s ({})\n", elapsed(), precision_, note);
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

  double scale_;
  int precision_;  // decimals shown for times
  double start_ = 0;
  int failures_ = 0;
};

// The sections, in order (demo.cpp lists them with their titles).
corio::Coro<> gather_section(Demo& demo);       // demo_gather.cpp
corio::Coro<> create_task_section(Demo& demo);  // demo_create_task.cpp
corio::Coro<> wait_for_section(Demo& demo);     // demo_wait_for.cpp
corio::Coro<> shield_section(Demo& demo);       // demo_shield.cpp
corio::Coro<> cancel_section(Demo& demo);       // demo_cancel.cpp
corio::Coro<> task_group_section(Demo& demo);   // demo_task_group.cpp
corio::Coro<> lock_section(Demo& demo);         // demo_sync.cpp
corio::Coro<> blocking_section(Demo& demo);     // demo_threads.cpp
corio::Coro<> queue_section(Demo& demo);        // demo_sync.cpp
corio::Coro<> semaphore_section(Demo& demo);    // demo_sync.cpp
corio::Coro<> news_section(Demo& demo);         // demo_news.cpp
corio::Coro<> mcp_section(Demo& demo);          // demo_mcp.cpp
corio::Coro<> fetch_section(Demo& demo);        // demo_fetch.cpp

}  // namespace corio_cli::demo
