// The answers written once for every protocol (see answer_sink.hpp): files,
// with their conditional requests and ranges (file_ranges.hpp decides),
// and streamed bodies.
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <corio/event_loop.hpp>

#include "http/server/answer_sink.hpp"
#include "http/wire/body_file.hpp"

namespace corio::http::detail {

namespace {

// The file's validators, added to the answer unless the handler set them;
// a handler's own ETag is the one requests are compared with.
FileValidators validate(Response& resp, const OpenFile& file) {
  FileValidators v = validators_for(file.size(), file.mtime());
  if (const std::optional<std::string_view> etag = resp.headers.get("ETag")) {
    v.etag = std::string(*etag);
  } else {
    resp.headers.add("ETag", v.etag);
  }
  if (!resp.headers.contains("Last-Modified")) resp.headers.add("Last-Modified", v.last_modified);
  if (!resp.headers.contains("Accept-Ranges")) resp.headers.add("Accept-Ranges", "bytes");
  return v;
}

// A 304 carries what a 200 would, for caches to update, but no body and
// (RFC 9110 section 15.4.5) no representation metadata such as its type.
std::uint64_t not_modified(AnswerSink& sink, Response& resp) {
  resp.status = 304;
  resp.headers.remove("Content-Type");
  resp.headers.remove("Accept-Ranges");
  sink.head(resp, std::nullopt);
  return 0;
}

std::uint64_t send_refusal(AnswerSink& sink, int status, std::string content_range) {
  Response refusal = Response::text(std::string(reason_phrase(status)), status);
  if (!content_range.empty()) refusal.headers.add("Content-Range", std::move(content_range));
  return sink.whole(refusal);
}

// A 206: one range with its Content-Range, or several as
// multipart/byteranges, each part's head appended before its bytes.
Coro<std::uint64_t> send_ranges(AnswerSink& sink, Response& resp, const OpenFile& file,
                                const std::vector<ByteRange>& ranges) {
  resp.status = 206;
  if (ranges.size() == 1) {
    resp.headers.set("Content-Range", content_range(ranges[0], file.size()));
    sink.head(resp, ranges[0].length());
    co_await sink.file_range(file.fd(), ranges[0]);
    co_return ranges[0].length();
  }
  const ByterangesBody body =
      byteranges_body(ranges, resp.headers.get_or("Content-Type", ""), file.size());
  resp.headers.set("Content-Type", "multipart/byteranges; boundary=" + body.boundary);
  sink.head(resp, body.length);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    sink.append(body.heads[i]);
    co_await sink.file_range(file.fd(), ranges[i]);
  }
  sink.append(body.tail);
  co_return body.length;
}

// The StreamResponseWriter a producer writes to.
class BodyStream final : public StreamResponseWriter {
 public:
  explicit BodyStream(AnswerSink& sink) : sink_(sink) {}
  Coro<void> write(std::string_view piece) override {
    if (piece.empty()) co_return;  // an empty chunk would end an HTTP/1.1 body
    bytes += piece.size();
    co_await sink_.piece(piece);
  }
  std::uint64_t bytes = 0;

 private:
  AnswerSink& sink_;
};

}  // namespace

bool has_no_body(int status) noexcept { return status < 200 || status == 204 || status == 304; }

void refuse_bad_fields(Response& resp, std::string_view target, std::optional<TaskRef> task) {
  get_running_loop().call_exception_handler(
      {"A handler set a header field with a line break or a bad name (" + std::string(target) + ")",
       nullptr, std::move(task)});
  resp = Response::text("Internal Server Error", 500);
}

// Into a recycled buffer (body_file.hpp): its owner gives it back once the
// bytes went out.
std::string read_piece(int fd, std::uint64_t offset, std::uint64_t left) {
  std::string piece = take_piece_buffer();
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, kFilePiece));
  const ssize_t n = ::pread(fd, piece.data(), want, static_cast<off_t>(offset));
  if (n < 0) throw std::system_error(errno, std::generic_category(), "pread");
  if (n == 0) throw std::system_error(EIO, std::generic_category(), "file shrank while sent");
  piece.resize(static_cast<std::size_t>(n));
  return piece;
}

Coro<std::uint64_t> send_file(AnswerSink& sink, Response& resp) {
  const OpenFile file(resp.file_path);
  if (file.status() != 200) {
    Response error = Response::text(std::string(reason_phrase(file.status())), file.status());
    co_return sink.whole(error);
  }
  if (!resp.headers.contains("Content-Type")) {
    resp.headers.set("Content-Type", std::string(content_type_for(resp.file_path)));
  }
  // A handler's own status (a 404 page from a file) is sent whole, as is.
  const FileAnswer answer = resp.status == 200 ? answer_for(sink.request(), validate(resp, file))
                                               : FileAnswer{resp.status, {}};
  switch (answer.status) {
    case 304:
      co_return not_modified(sink, resp);
    case 412:
      co_return send_refusal(sink, 412, {});
    case 416:
      co_return send_refusal(sink, 416, "bytes */" + std::to_string(file.size()));
    case 206:
      co_return co_await send_ranges(sink, resp, file, answer.ranges);
    default:
      break;
  }
  sink.head(resp, file.size());
  if (sink.head_only() || file.size() == 0 || has_no_body(resp.status)) co_return 0;
  co_await sink.file_range(file.fd(), ByteRange{0, file.size() - 1});
  co_return file.size();
}

Coro<std::uint64_t> send_stream(AnswerSink& sink, Response& resp, std::optional<TaskRef> task) {
  if (!resp.headers.contains("Content-Type")) {
    resp.headers.set("Content-Type", "application/octet-stream");
  }
  sink.head(resp, std::nullopt);
  if (sink.head_only() || has_no_body(resp.status)) co_return 0;
  BodyStream stream(sink);
  try {
    co_await resp.producer(stream);
  } catch (const std::system_error&) {
    sink.abort_stream();  // the peer went away mid-body: nothing to report
    co_return stream.bytes;
  } catch (const std::exception&) {
    // The head is out: too late for a 500. Cut the body off, so the peer
    // sees a truncated body rather than a complete-looking one.
    get_running_loop().call_exception_handler({"Error producing the body of " +
                                                   sink.request().target,
                                               std::current_exception(), std::move(task)});
    sink.abort_stream();
    co_return stream.bytes;
  }
  sink.end_stream();
  co_return stream.bytes;
}

}  // namespace corio::http::detail
