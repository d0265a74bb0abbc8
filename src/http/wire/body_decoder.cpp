// BodyDecoder (see parser.hpp): a state machine over the pieces of a body
// as they arrive. Body bytes are copied straight to the caller's string;
// chunk-size and trailer lines are used only once complete, and the part
// of such a line already searched for its LF is not searched again
// (line_scanned_), so a peer sending a byte at a time costs O(n).
#include <algorithm>
#include <cstring>

#include <corio/http/parser.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// chunk-size [ chunk-ext ]: hex digits only (no sign, no "0x", no
// whitespace inside), at most 2^64 - 1; the extensions are checked against
// their grammar (syntax.hpp) and skipped.
std::uint64_t parse_chunk_size(std::string_view line) {
  std::uint64_t size = 0;
  std::size_t i = 0;
  for (int v; i < line.size() && (v = hex_value(line[i])) >= 0; ++i) {
    if (size >> 60) throw ParseError(400, "the chunk size overflows");
    size = size << 4 | static_cast<std::uint64_t>(v);
  }
  if (i == 0) throw ParseError(400, "a chunk size that is not a hex number");
  syntax::check_chunk_extensions(line.substr(i));
  return size;
}

}  // namespace

BodyDecoder::BodyDecoder(BodyFraming framing, const Limits& limits)
    : framing_(framing), limits_(limits), state_(State::data) {
  switch (framing.kind) {
    case BodyFraming::Kind::none:
      state_ = State::done;
      break;
    case BodyFraming::Kind::length:
      // Refused before a byte of it is read: the server answers 413 at once.
      if (framing.length > limits.max_body) throw ParseError(413, "the body is over the size limit");
      remaining_ = framing.length;
      if (remaining_ == 0) state_ = State::done;
      break;
    case BodyFraming::Kind::chunked:
      state_ = State::size_line;
      break;
    case BodyFraming::Kind::until_close:
      break;
  }
}

bool BodyDecoder::done() const noexcept { return state_ == State::done; }

void BodyDecoder::finish_at_eof() {
  if (framing_.kind == BodyFraming::Kind::until_close) state_ = State::done;
  if (state_ != State::done) throw ParseError(400, "truncated body: the connection closed before its end");
}

std::size_t BodyDecoder::decode(std::string_view in, std::string& out) {
  std::size_t pos = 0;
  while (state_ != State::done && pos < in.size()) {
    std::size_t used = 0;
    switch (state_) {
      case State::data:
        used = take_data(in.substr(pos), out);
        break;
      case State::data_end:
        used = take_chunk_end(in.substr(pos));
        break;
      case State::size_line:
      case State::trailers:
        used = take_line(in.substr(pos));
        break;
      case State::done:
        break;
    }
    if (used == 0) break;
    pos += used;
  }
  return pos;
}

std::size_t BodyDecoder::take_data(std::string_view in, std::string& out) {
  std::size_t n = in.size();
  if (framing_.kind == BodyFraming::Kind::until_close) {
    if (n > limits_.max_body - decoded_) throw ParseError(413, "the body is over the size limit");
  } else {
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, remaining_));
    remaining_ -= n;
    if (remaining_ == 0) state_ = framing_.kind == BodyFraming::Kind::length ? State::done : State::data_end;
  }
  out.append(in.data(), n);
  decoded_ += n;
  return n;
}

std::size_t BodyDecoder::take_chunk_end(std::string_view in) {
  if (in[0] != '\r' || (in.size() > 1 && in[1] != '\n')) {
    throw ParseError(400, "chunk data not followed by CRLF");
  }
  if (in.size() < 2) return 0;
  state_ = State::size_line;
  return 2;
}

std::size_t BodyDecoder::take_line(std::string_view in) {
  bool trailer = state_ == State::trailers;
  // The line, its CR and its LF, within what its limit allows.
  std::size_t max_line = trailer ? limits_.max_head_bytes - std::min(trailer_bytes_, limits_.max_head_bytes)
                                 : std::min(limits_.max_chunk_line, SIZE_MAX - 2) + 2;
  std::size_t end = std::min(in.size(), max_line);
  const void* lf = line_scanned_ < end ? std::memchr(in.data() + line_scanned_, '\n', end - line_scanned_)
                                       : nullptr;
  if (lf == nullptr) {
    line_scanned_ = end;
    if (in.size() > end) {
      if (trailer) throw ParseError(431, "the trailer section is over the size limit");
      throw ParseError(400, "a chunk-size line over the size limit");
    }
    return 0;
  }
  std::size_t used = static_cast<std::size_t>(static_cast<const char*>(lf) - in.data()) + 1;
  line_scanned_ = 0;
  std::string_view line = in.substr(0, used - 1);
  if (line.empty() || line.back() != '\r') throw ParseError(400, "a bare LF ends a line (CRLF required)");
  line.remove_suffix(1);
  if (trailer) {
    trailer_bytes_ += used;
    take_trailer(line);
  } else {
    take_chunk_size(parse_chunk_size(line));
  }
  return used;
}

void BodyDecoder::take_chunk_size(std::uint64_t size) {
  if (size == 0) {
    state_ = State::trailers;
    return;
  }
  if (size > limits_.max_body - decoded_) throw ParseError(413, "the body is over the size limit");
  remaining_ = size;
  state_ = State::data;
}

void BodyDecoder::take_trailer(std::string_view line) {
  if (line.empty()) {
    state_ = State::done;
    return;
  }
  if (trailers_.size() >= limits_.max_headers) throw ParseError(431, "too many trailer fields");
  syntax::check_field_line(line);
  auto [name, value] = syntax::split_field_line(line);
  trailers_.add(std::string(name), std::string(value));
}

}  // namespace corio::http
