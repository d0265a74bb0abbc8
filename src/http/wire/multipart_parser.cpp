// MultipartParser (see multipart_parser.hpp): one state per piece of the
// grammar; each call runs states until one yields an event or needs bytes.
#include <corio/http/multipart_parser.hpp>

#include <algorithm>

#include <corio/errors.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

constexpr std::string_view kCrlf = "\r\n";
// Spaces or tabs a boundary line may carry before its CRLF (RFC 2046's
// transport-padding); more than this is not padding.
constexpr std::size_t kMaxPadding = 256;

}  // namespace

bool MultipartParser::valid_boundary(std::string_view text) noexcept {
  static constexpr std::string_view kOther = "'()+_,-./:=? ";
  if (text.empty() || text.size() > 70 || text.back() == ' ') return false;
  return std::all_of(text.begin(), text.end(), [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           kOther.find(ch) != std::string_view::npos;
  });
}

MultipartParser::MultipartParser(std::string_view boundary, MultipartLimits limits)
    : limits_(limits) {
  if (!valid_boundary(boundary)) throw ValueError("invalid multipart boundary");
  delimiter_ = "\r\n--";
  delimiter_ += boundary;
}

void MultipartParser::finish() const {
  if (state_ != State::epilogue) throw MultipartError(400, "multipart body cut short");
}

void MultipartParser::count(std::size_t used) {
  total_ += used;
  if (limits_.max_total && total_ > *limits_.max_total) {
    throw MultipartError(413, "multipart body over its limit");
  }
}

MultipartParser::Step MultipartParser::parse(std::string_view in) {
  std::size_t used = 0;
  for (;;) {
    const std::string_view rest = in.substr(used);
    const bool epilogue = state_ == State::epilogue;  // dropped, and not counted
    Step s;
    switch (state_) {
      case State::preamble: s = preamble(rest); break;
      case State::delimiter_line: s = delimiter_line(rest); break;
      case State::head: s = head(rest); break;
      case State::body: s = body(rest); break;
      case State::epilogue: s = Step{Event::done, rest.size(), {}}; break;
    }
    if (!epilogue) count(s.used);
    used += s.used;
    if (s.used > 0) at_start_ = false;
    if (s.event != Event::need_more || s.used == 0 || used == in.size()) {
      s.used = used;
      return s;
    }
  }
}

// Skips to the first boundary: at the very start "--boundary", later only
// after a CRLF.
MultipartParser::Step MultipartParser::preamble(std::string_view in) {
  const std::string_view dash = std::string_view(delimiter_).substr(2);
  if (at_start_) {
    if (in.size() < dash.size() && dash.substr(0, in.size()) == in) return {};
    if (in.substr(0, dash.size()) == dash) {
      state_ = State::delimiter_line;
      return {Event::need_more, dash.size(), {}};
    }
  }
  const std::size_t at = in.find(delimiter_);
  if (at != std::string_view::npos) {
    state_ = State::delimiter_line;
    return {Event::need_more, at + delimiter_.size(), {}};
  }
  // All but a possible start of the delimiter is preamble, dropped.
  const std::size_t keep = std::min(in.size(), delimiter_.size() - 1);
  return {Event::need_more, in.size() - keep, {}};
}

// After a boundary: "--" ends the body; else padding and CRLF start a part.
MultipartParser::Step MultipartParser::delimiter_line(std::string_view in) {
  if (in.size() < 2) return {};
  if (in.substr(0, 2) == "--") {
    state_ = State::epilogue;
    return {Event::done, 2, {}};
  }
  std::size_t i = 0;
  while (i < in.size() && i <= kMaxPadding && (in[i] == ' ' || in[i] == '\t')) ++i;
  if (i > kMaxPadding) throw MultipartError(400, "multipart boundary line too long");
  if (in.size() < i + 2) return {};
  if (in.substr(i, 2) != kCrlf) throw MultipartError(400, "malformed multipart boundary line");
  state_ = State::head;
  return {Event::need_more, i + 2, {}};
}

MultipartParser::Step MultipartParser::head(std::string_view in) {
  std::size_t block = 0;                     // header bytes before the blank line
  std::size_t end = std::string_view::npos;  // past the blank line
  if (in.substr(0, 2) == kCrlf) {
    end = 2;
  } else if (const std::size_t at = in.find("\r\n\r\n"); at != std::string_view::npos) {
    block = at + 2;
    end = at + 4;
  }
  // Without its end within the limit, the head cannot end within it.
  const bool over = end == std::string_view::npos ? in.size() >= limits_.max_part_head
                                                  : end > limits_.max_part_head;
  if (over) throw MultipartError(413, "multipart part head over its limit");
  if (end == std::string_view::npos) return {};
  if (++parts_ > limits_.max_parts) throw MultipartError(413, "too many multipart parts");
  parse_head(in.substr(0, block));
  state_ = State::body;
  part_bytes_ = 0;
  return {Event::part, end, {}};
}

// "Name: value" lines, each ending in CRLF; no folding (RFC 7578 section 4.8
// forbids other header fields' tricks, and RFC 9112 obs-fold).
void MultipartParser::parse_head(std::string_view block) {
  headers_.clear();
  while (!block.empty()) {
    const std::size_t eol = block.find(kCrlf);
    const std::string_view line = block.substr(0, eol);
    block = eol == std::string_view::npos ? std::string_view() : block.substr(eol + 2);
    const std::size_t colon = line.find(':');
    const std::string_view name = line.substr(0, colon);
    if (colon == std::string_view::npos || !syntax::is_token(name)) {
      throw MultipartError(400, "malformed multipart header line");
    }
    const std::string_view value = syntax::trim_ows(line.substr(colon + 1));
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
      throw MultipartError(400, "malformed multipart header value");
    }
    headers_.add(std::string(name), std::string(value));
  }
}

MultipartParser::Step MultipartParser::body(std::string_view in) {
  const std::size_t at = in.find(delimiter_);
  if (at == 0) {
    state_ = State::delimiter_line;
    return {Event::part_end, delimiter_.size(), {}};
  }
  // Without a delimiter, all but its possible start is the part's.
  std::size_t n = at;
  if (at == std::string_view::npos) n = in.size() - std::min(in.size(), delimiter_.size() - 1);
  if (n == 0) return {};
  part_bytes_ += n;
  if (limits_.max_part_size && part_bytes_ > *limits_.max_part_size) {
    throw MultipartError(413, "multipart part over its limit");
  }
  return {Event::data, n, in.substr(0, n)};
}

}  // namespace corio::http
