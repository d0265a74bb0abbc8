// Where an answer's head and body reach the wire: an HTTP/1.1 connection
// (server_response.cpp) or an HTTP/2 stream (src/http/h2/). The answers
// that take more than one step, a file (whole, its ranges, its 304 and
// 412 and 416) and a stream, are written once against it (file_answer.cpp);
// HTTP/1.1's plain body, the hot path, goes out without it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/response.hpp>
#include <corio/task.hpp>

#include "http/server/file_ranges.hpp"

namespace corio::http::detail {

class AnswerSink {
 public:
  virtual const RequestHead& request() const noexcept = 0;
  virtual bool head_only() const noexcept = 0;  // a HEAD request: the head alone goes out
  // The answer's head; length is its body's when known, else the body is
  // streamed (HTTP/1.1: chunked). The protocol adds its own fields (Date,
  // Server, framing).
  virtual void head(const Response& resp, std::optional<std::uint64_t> length) = 0;
  // Body bytes behind the head, buffered: no wait.
  virtual void append(std::string_view bytes) = 0;
  // A range of fd as the body's next bytes.
  virtual Coro<void> file_range(int fd, ByteRange range) = 0;
  // A streamed body's next piece (not empty), once there is room for it.
  virtual Coro<void> piece(std::string_view bytes) = 0;
  // A streamed body ends (end_stream) or breaks off (abort_stream: its
  // producer failed, or the peer went away).
  virtual void end_stream() = 0;
  virtual void abort_stream() noexcept = 0;
  // An answer with its body in memory, sent at once; its body's size.
  virtual std::uint64_t whole(Response& resp) = 0;

 protected:
  ~AnswerSink() = default;
};

// The answer for Response::file() (docs/http-server.md: conditional
// requests, ranges) and for Response::stream(); the body bytes sent. A
// file's answer does not call end_stream() (on HTTP/1.1 its length ends
// it): a sink whose protocol ends a body explicitly does so after it.
Coro<std::uint64_t> send_file(AnswerSink& sink, Response& resp);
Coro<std::uint64_t> send_stream(AnswerSink& sink, Response& resp, std::optional<TaskRef> task);

// The next piece (at most 64 KiB) of a file at offset, left bytes to go.
std::string read_piece(int fd, std::uint64_t offset, std::uint64_t left);

bool has_no_body(int status) noexcept;

// What may not be in a field name a handler set: what would end the name
// or split the head. A table, not find_first_of, which calls memchr once
// per character of the name.
inline constexpr std::array<bool, 256> kNotInName = [] {
  std::array<bool, 256> t{};
  for (char c : std::string_view(":\r\n \t")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

inline bool valid_name(std::string_view name) noexcept {
  return !name.empty() && std::none_of(name.begin(), name.end(), [](char c) {
    return kNotInName[static_cast<unsigned char>(c)];
  });
}

// A field a handler set that would split the head (response splitting),
// or that HTTP/2 forbids (RFC 9113 section 8.2.1). Inline: HTTP/1.1 checks
// every answer.
inline bool valid_fields(const Headers& headers) {
  return std::all_of(headers.begin(), headers.end(), [](const Header& h) {
    return valid_name(h.name) && h.value.find('\r') == std::string::npos &&
           h.value.find('\n') == std::string::npos;
  });
}

// An answer with a field valid_fields() refused: reported through the
// loop's exception handler for task, and replaced by a 500.
void refuse_bad_fields(Response& resp, std::string_view target, std::optional<TaskRef> task);

}  // namespace corio::http::detail
