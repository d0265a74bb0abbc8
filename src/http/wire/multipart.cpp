// MultipartReader and BodyPart (see multipart.hpp): the parser fed from
// Request::read_chunk(), and the few header parameters form-data needs.
#include <corio/http/multipart.hpp>

#include <corio/errors.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

// The value of parameter `name` in a header value such as
// `form-data; name="a"; filename="b.txt"` (RFC 9110 section 5.6.6: a token
// or a quoted-string, backslash escapes undone); nullopt if absent.
std::optional<std::string> parameter(std::string_view value, std::string_view name) {
  std::size_t i = value.find(';');
  while (i != std::string_view::npos && i < value.size()) {
    ++i;
    const std::size_t eq = value.find('=', i);
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = syntax::trim_ows(value.substr(i, eq - i));
    std::size_t j = eq + 1;
    while (j < value.size() && (value[j] == ' ' || value[j] == '\t')) ++j;
    std::string out;
    if (j < value.size() && value[j] == '"') {
      for (++j; j < value.size() && value[j] != '"'; ++j) {
        if (value[j] == '\\' && j + 1 < value.size()) ++j;
        out += value[j];
      }
      i = value.find(';', j);
    } else {
      i = value.find(';', j);
      out = std::string(syntax::trim_ows(value.substr(j, i == std::string_view::npos ? i : i - j)));
    }
    if (iequals(key, name)) return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> MultipartReader::boundary(std::string_view content_type) {
  return parameter(content_type, "boundary");
}

static MultipartParser make_parser(const Request& req, const MultipartLimits& limits) {
  const std::string_view type = req.headers().get_or("Content-Type", "");
  if (!iequals(syntax::trim_ows(type.substr(0, type.find(';'))), "multipart/form-data")) {
    throw HTTPException(415, "expected a multipart/form-data body");
  }
  const std::optional<std::string> b = MultipartReader::boundary(type);
  if (!b || !MultipartParser::valid_boundary(*b)) {
    throw HTTPException(400, "multipart/form-data without a valid boundary");
  }
  return MultipartParser(*b, limits);
}

MultipartReader::MultipartReader(Request& req, MultipartLimits limits)
    : req_(req), parser_(make_parser(req, limits)) {}

MultipartParser::Step MultipartReader::step() {
  MultipartParser::Step s = parser_.parse(std::string_view(buf_).substr(pos_));
  pos_ += s.used;
  return s;
}

Coro<void> MultipartReader::fill() {
  std::string piece = co_await req_.read_chunk();
  if (piece.empty()) parser_.finish();  // throws: the body ended inside the multipart
  buf_.erase(0, pos_);  // what is left is at most a delimiter's or a part head's bytes
  pos_ = 0;
  if (buf_.empty()) {
    buf_ = std::move(piece);
  } else {
    buf_ += piece;
  }
}

Coro<std::optional<BodyPart>> MultipartReader::next() {
  while (in_part_) co_await read_chunk(parts_);  // the rest of the current part, dropped
  for (;;) {
    const MultipartParser::Step s = step();
    if (s.event == MultipartParser::Event::done) co_return std::nullopt;
    if (s.event == MultipartParser::Event::part) {
      in_part_ = true;
      co_return BodyPart(*this, ++parts_, parser_.headers());
    }
    co_await fill();
  }
}

Coro<std::string> MultipartReader::read_chunk(std::size_t index) {
  if (!in_part_ || index != parts_) co_return std::string();
  for (;;) {
    const MultipartParser::Step s = step();
    if (s.event == MultipartParser::Event::data) co_return std::string(s.data);
    if (s.event == MultipartParser::Event::part_end) {
      in_part_ = false;
      co_return std::string();
    }
    co_await fill();
  }
}

BodyPart::BodyPart(MultipartReader& reader, std::size_t index, const Headers& headers)
    : reader_(&reader), index_(index), headers_(headers) {
  const std::string_view disposition = headers_.get_or("Content-Disposition", "");
  name_ = parameter(disposition, "name").value_or("");
  filename_ = parameter(disposition, "filename");
}

std::string_view BodyPart::content_type() const noexcept {
  return headers_.get_or("Content-Type", "text/plain");
}

Coro<std::string> BodyPart::read_chunk() { return reader_->read_chunk(index_); }

Coro<std::string> BodyPart::read(std::size_t max) {
  std::string body;
  for (;;) {
    std::string piece = co_await read_chunk();
    if (piece.empty()) co_return body;
    if (body.size() + piece.size() > max) throw MultipartError(413, "multipart part too large");
    body += piece;
  }
}

}  // namespace corio::http
