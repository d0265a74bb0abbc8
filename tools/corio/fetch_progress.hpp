// What `corio fetch` reports (internal to the tool): each URL's outcome,
// the live progress line, the per-URL rows and the closing summary.
//
// On a terminal one line is redrawn as requests complete, whatever their
// order (done, failed, in flight, bytes, rate, ETA; ten times a second at
// most), and the rows come at the end, in URL order; off a terminal there is
// no live line and each URL's row is printed once, when it finishes, so that
// a log shows progress without carriage returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace corio_cli::fetch {

struct Outcome {
  int status = 0;  // 0: no response came
  std::uint64_t bytes = 0;
  double seconds = 0;  // all attempts, the waits between them included
  int attempts = 0;
  std::string error;  // empty unless the request failed before a whole response
  // A 2xx whose body came whole: a body cut short or malformed after a 200
  // head is a failure, or a downloader would report saved what it did not.
  bool ok() const { return error.empty() && status >= 200 && status <= 299; }
};

class Progress {
 public:
  Progress(const std::vector<std::string>& urls, bool tty);

  void started() { ++in_flight_; }
  // A request is over (index into the URLs): counts it, redraws or prints.
  void finished(std::size_t index, const Outcome& outcome);
  // The rows still to print (a terminal's) and the summary; returns the exit
  // code: 0 only when every URL succeeded.
  int summary(const std::vector<Outcome>& outcomes) const;

 private:
  void redraw();
  double elapsed() const;

  const std::vector<std::string>& urls_;
  bool tty_;
  double start_;
  double drawn_ = 0;  // when the live line was last drawn
  std::size_t done_ = 0, failed_ = 0, in_flight_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace corio_cli::fetch
