// The Date header's value (RFC 9110 section 5.6.7), formatted once per
// second: a server answering 100k requests a second formats it once, not
// 100k times. One per loop (no shared mutable state between workers).
//
// It also keeps the two lines nearly every answer starts with, "Server:"
// (when the server has a name) and "Date:", as one block: the head writer
// then appends one string where it would append eight pieces.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

namespace corio::http::detail {

class DateCache {
 public:
  // server_name: the Server line's value; empty: the block has no Server line.
  explicit DateCache(std::string_view server_name = {});

  // "Sun, 06 Nov 1994 08:49:37 GMT" for the current second. Called in the
  // running loop: the wall clock is read once per value of its pass_time(),
  // that is once per iteration, not once per answer (perf: the read was
  // 0.3% of the server's CPU at 8 answers per iteration).
  std::string_view now() noexcept;
  // "Server: <name>\r\nDate: <now()>\r\n" (without the Server line when the
  // name is empty).
  std::string_view fields() noexcept;

 private:
  void refresh() noexcept;

  double pass_ = -1;  // the pass_time() second_ was read in
  std::time_t second_ = -1;
  std::string fields_;       // the block, its date part rewritten in place each second
  std::size_t date_at_ = 0;  // where in fields_ the date starts
};

}  // namespace corio::http::detail
