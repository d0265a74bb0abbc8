#include "fetch_progress.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/core.h>

namespace corio_cli::fetch {

namespace {

// On a terminal with many URLs, only the failures get a row: the summary
// counts the rest.
constexpr std::size_t kAllRows = 50;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void print_row(const std::string& url, const Outcome& o) {
  std::string note;
  if (!o.error.empty()) note = o.error;
  if (o.attempts > 1) note += (note.empty() ? "" : ", ") + fmt::format("{} attempts", o.attempts);
  fmt::print("{:>6}  {:>10}  {:>8.3f}  {}{}\n", o.status != 0 ? std::to_string(o.status) : "-",
             o.bytes, o.seconds, url, note.empty() ? "" : "  (" + note + ")");
}

void print_header() { fmt::print("{:>6}  {:>10}  {:>8}  {}\n", "status", "bytes", "seconds", "url"); }

}  // namespace

Progress::Progress(const std::vector<std::string>& urls, bool tty)
    : urls_(urls), tty_(tty), start_(now()) {
  if (!tty_) print_header();
}

double Progress::elapsed() const { return now() - start_; }

void Progress::finished(std::size_t index, const Outcome& outcome) {
  --in_flight_;
  ++done_;
  failed_ += !outcome.ok();
  bytes_ += outcome.bytes;
  if (tty_) {
    redraw();
  } else {
    print_row(urls_[index], outcome);
  }
}

void Progress::redraw() {
  constexpr std::size_t kWidth = 24;
  constexpr double kRedrawEvery = 0.1;  // seconds: a terminal need not draw 50,000 lines a second
  const std::size_t total = urls_.size();
  if (done_ < total && now() - drawn_ < kRedrawEvery) return;
  drawn_ = now();
  const std::size_t filled = kWidth * done_ / std::max<std::size_t>(total, 1);
  const double seconds = elapsed();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
  std::string eta;
  if (done_ < total && rate > 0) eta = fmt::format(", ETA {:.0f} s", (total - done_) / rate);
  // \x1b[K clears what a longer previous line left behind.
  fmt::print("\r[{}{}] {}/{} done, {} failed, {} in flight, {:.1f} MB, {:.0f} req/s{}\x1b[K",
             std::string(filled, '#'), std::string(kWidth - filled, '.'), done_, total, failed_,
             in_flight_, bytes_ / 1e6, rate, eta);
  if (done_ == total) fmt::print("\n");
  std::fflush(stdout);
}

int Progress::summary(const std::vector<Outcome>& outcomes) const {
  const std::size_t ok = static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return o.ok(); }));
  if (tty_ && !outcomes.empty()) {
    const bool all = outcomes.size() <= kAllRows;
    if (all || ok < outcomes.size()) print_header();
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      if (all || !outcomes[i].ok()) print_row(urls_[i], outcomes[i]);
    }
    if (!all) fmt::print("({} succeeded, not listed)\n", ok);
  }
  const double seconds = elapsed();
  const std::size_t failed = outcomes.size() - ok;
  if (ok == 0) {
    fmt::print("0 of {} succeeded, {} failed, in {:.2f} s\n", outcomes.size(), failed, seconds);
  } else {
    fmt::print("{} of {} succeeded, {} failed, {:.1f} MB in {:.2f} s ({:.0f} requests/s, {:.1f} MB/s)\n",
               ok, outcomes.size(), failed, bytes_ / 1e6, seconds, ok / seconds, bytes_ / 1e6 / seconds);
  }
  return ok == outcomes.size() ? 0 : 1;
}

}  // namespace corio_cli::fetch
