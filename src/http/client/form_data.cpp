// FormData (see form_data.hpp): each part's head prepared when added, the
// files' bytes read in pieces as the writer drains.
#include <corio/detail/entropy.hpp>
#include <corio/http/form_data.hpp>

#include <unistd.h>

#include <algorithm>

#include <corio/http/client_errors.hpp>

#include "http/wire/body_file.hpp"

namespace corio::http {

namespace {

// Read from a file, and written, per step: the writer's buffer stays near this.
constexpr std::size_t kFilePiece = 64 * 1024;

std::string random_boundary() {
  static constexpr std::string_view kChars =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string b = "----corio";
  for (int i = 0; i < 24; ++i) b += kChars[corio::detail::random_u64() % kChars.size()];
  return b;
}

// A name or filename in a quoted-string the way the HTML standard's
// multipart/form-data encoding does it.
std::string form_quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') {
      out += "%22";
    } else if (ch == '\r') {
      out += "%0D";
    } else if (ch == '\n') {
      out += "%0A";
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string part_head(const std::string& boundary, std::string_view name,
                      const std::string* filename, std::string_view content_type) {
  std::string head = "--" + boundary + "\r\nContent-Disposition: form-data; name=" + form_quoted(name);
  if (filename) head += "; filename=" + form_quoted(*filename);
  head += "\r\n";
  if (!content_type.empty()) {
    std::string type(content_type);
    std::erase_if(type, [](char ch) { return ch == '\r' || ch == '\n'; });  // no header injection
    head += "Content-Type: " + type + "\r\n";
  }
  return head + "\r\n";
}

// A file to send, open; ClientError if it is not a readable regular file.
struct SendFile : detail::OpenFile {
  explicit SendFile(const std::string& path) : OpenFile(path) {
    if (status() != 200) throw ClientError("cannot send " + path + ": not a readable file");
  }
};

}  // namespace

FormData::FormData() : boundary_(random_boundary()) {}

FormData& FormData::add_field(std::string name, std::string value, std::string content_type) {
  parts_.push_back({part_head(boundary_, name, nullptr, content_type), std::move(value), {}});
  return *this;
}

FormData& FormData::add_file(std::string name, std::string path, std::string filename,
                             std::string content_type) {
  if (filename.empty()) filename = path.substr(path.find_last_of('/') + 1);
  parts_.push_back({part_head(boundary_, name, &filename, content_type), {}, std::move(path)});
  return *this;
}

FormData& FormData::add_bytes(std::string name, std::string data, std::string filename,
                              std::string content_type) {
  parts_.push_back({part_head(boundary_, name, &filename, content_type), std::move(data), {}});
  return *this;
}

std::string FormData::content_type() const { return "multipart/form-data; boundary=" + boundary_; }

std::uint64_t FormData::content_length() const {
  std::uint64_t n = boundary_.size() + 6;  // "--" boundary "--\r\n"
  for (const Part& p : parts_) {
    n += p.head.size() + 2;  // and the CRLF that ends its content
    if (!p.path.empty()) p.size = SendFile(p.path).size();
    n += p.path.empty() ? p.data.size() : p.size;
  }
  return n;
}

Coro<void> FormData::write_to(StreamWriter& writer) const {
  for (const Part& p : parts_) {
    writer.write(p.head);
    if (p.path.empty()) {
      writer.write(p.data);
    } else {
      // The size Content-Length was computed with: a file that grew is cut
      // there, one that shrank fails.
      const std::uint64_t size = p.size;
      const SendFile file(p.path);
      std::string piece(kFilePiece, '\0');
      for (std::uint64_t sent = 0; sent < size;) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), size - sent));
        const ssize_t n = ::pread(file.fd(), piece.data(), want, static_cast<off_t>(sent));
        if (n <= 0) throw ClientPayloadError("file " + p.path + " shrank or failed while sent");
        writer.write(std::string_view(piece.data(), static_cast<std::size_t>(n)));
        sent += static_cast<std::uint64_t>(n);
        co_await writer.drain();
      }
    }
    writer.write("\r\n");
    co_await writer.drain();
  }
  writer.write("--" + boundary_ + "--\r\n");
}

}  // namespace corio::http
