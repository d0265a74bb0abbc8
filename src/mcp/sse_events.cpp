// SseEvents (see sse_events.hpp): line by line, an empty line ending the
// event. Then the server's half: writing events.
#include "mcp/sse_events.hpp"

#include <charconv>

namespace corio::mcp::detail {

std::vector<std::string> SseEvents::feed(std::string_view piece) {
  buf_.append(piece);
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t eol = buf_.find_first_of("\r\n", at);
    if (eol == std::string::npos) break;
    // A CR at the very end may be the first half of a CRLF: wait for more.
    if (buf_[eol] == '\r' && eol + 1 == buf_.size()) break;
    const std::string_view line(buf_.data() + at, eol - at);
    at = eol + (buf_[eol] == '\r' && buf_[eol + 1] == '\n' ? 2 : 1);
    if (!line.empty()) {
      field(line);
      continue;
    }
    if (!data_.empty()) out.push_back(std::move(data_));  // empty data: nothing to dispatch
    data_.clear();
    has_data_ = false;
  }
  buf_.erase(0, at);
  return out;
}

void SseEvents::field(std::string_view line) {
  if (line.starts_with(':')) return;  // a comment (keep-alives)
  const std::size_t colon = line.find(':');
  const std::string_view name = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (name == "data") {
    if (has_data_) data_ += '\n';
    data_ += value;
    has_data_ = true;
  } else if (name == "id" && value.find('\0') == std::string_view::npos) {
    last_id_ = std::string(value);
  } else if (name == "retry") {
    unsigned long ms = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (ec == std::errc() && end == value.data() + value.size() && !value.empty()) {
      retry_ = std::chrono::milliseconds(ms);
    }
  }
}

namespace {

// "<stream>-<n>", appended to out (by hand: it is on every event's path).
void append_event_id(std::string& out, std::uint64_t stream, std::uint64_t n) {
  char buf[2 * 20 + 1];
  char* end = std::to_chars(buf, buf + 20, stream).ptr;
  *end++ = '-';
  end = std::to_chars(end, buf + sizeof buf, n).ptr;
  out.append(buf, end);
}

}  // namespace

void append_sse_event(std::string& out, std::uint64_t stream, std::uint64_t n, std::string_view message) {
  out.reserve(out.size() + message.size() + 64);
  out += "id: ";
  append_event_id(out, stream, n);
  out += "\nevent: message\ndata: ";
  out += message;
  out += "\n\n";
}

std::string sse_priming_event(std::uint64_t stream, std::chrono::milliseconds retry) {
  std::string event = "id: ";
  append_event_id(event, stream, 0);
  event += "\nretry: ";
  event += std::to_string(retry.count());
  event += "\ndata: \n\n";
  return event;
}

}  // namespace corio::mcp::detail
