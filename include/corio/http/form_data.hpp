/// \file
/// corio::http::FormData: a multipart/form-data request body for the client
/// (aiohttp's FormData), fields and files, the files streamed from disk
/// when the request is sent (never read whole into memory).
///
/// <!-- doc: body (corio::http::ClientSession& session, std::string url) -->
///     corio::http::FormData form;
///     form.add_field("title", "holiday");
///     form.add_file("photo", "/tmp/beach.jpg", "beach.jpg", "image/jpeg");
///     corio::http::RequestOptions opts;
///     opts.multipart = std::move(form);
///     co_await session.post(url, std::move(opts));
///
/// The body has a Content-Length (the files' sizes, taken when the request
/// is prepared), so every server takes it; a file that is missing then is a
/// ClientError, one that changed size while sent a ClientPayloadError. Names
/// and filenames are escaped as browsers do (", CR, LF percent-encoded).
/// Copyable: a redirect (307/308) or a retry sends it again, the files
/// re-read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http {

/// A multipart/form-data body: text fields and files, in the order added.
class FormData {
 public:
  FormData();  ///< a random boundary

  /// A text field; content_type "" sends none (text/plain, RFC 7578).
  FormData& add_field(std::string name, std::string value, std::string content_type = {});
  /// A file from disk, read when the request is sent; filename "" uses the
  /// path's last component.
  FormData& add_file(std::string name, std::string path, std::string filename = {},
                     std::string content_type = "application/octet-stream");
  /// A file from memory.
  FormData& add_bytes(std::string name, std::string data, std::string filename,
                      std::string content_type = "application/octet-stream");

  const std::string& boundary() const noexcept { return boundary_; }  ///< between the parts
  std::string content_type() const;  ///< "multipart/form-data; boundary=..."

  /// The body's size in bytes; stat()s the files (ClientError if one is missing).
  std::uint64_t content_length() const;
  /// Writes the body to writer, draining as it goes (files in pieces), the
  /// files as long as the last content_length() found them.
  Coro<void> write_to(StreamWriter& writer) const;

 private:
  struct Part {
    std::string head;  ///< the delimiter line and the part's headers
    std::string data;  ///< inline content
    std::string path;  ///< or a file's
    mutable std::uint64_t size = 0;  ///< the file's, as content_length() found it
  };
  std::vector<Part> parts_;
  std::string boundary_;
};

}  // namespace corio::http
