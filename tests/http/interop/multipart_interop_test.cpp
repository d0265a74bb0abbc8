// multipart/form-data with other implementations: curl -F uploading to a
// corio server (MultipartReader), and corio's FormData posted to Python's
// MIME parser (peers/multipart_server.py). Part of the interop suite
// (corio_http_interop_tests, label interop: the release pass only).
#include <zlib.h>

#include <corio/http/client.hpp>
#include <corio/http/multipart.hpp>

#include "http/client_support.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::BodyPart;
using corio::http::MultipartReader;

std::string crc(std::string_view bytes) {
  return std::to_string(::crc32(0, reinterpret_cast<const Bytef*>(bytes.data()),
                                static_cast<uInt>(bytes.size())));
}

// One line per part, "name|filename|type|size|crc32", as the Python peer answers.
Coro<Response> describe(Request& req) {
  MultipartReader form(req);
  std::string out;
  while (std::optional<BodyPart> part = co_await form.next()) {
    uLong sum = ::crc32(0, nullptr, 0);
    std::size_t size = 0;
    for (std::string piece; !(piece = co_await part->read_chunk()).empty();) {
      sum = ::crc32(sum, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(piece.size()));
      size += piece.size();
    }
    out += part->name() + "|" + part->filename().value_or("-") + "|" +
           std::string(part->content_type()) + "|" + std::to_string(size) + "|" + std::to_string(sum) + "\n";
  }
  co_return Response::text(out);
}

std::string sample(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += std::to_string(i * 2654435761u % 1000003) + ",";
  s.resize(n);
  return s;
}

Coro<void> curl_body(const TempDir* dir) {
  const std::string file = sample(700'000);
  write_file(dir->path() / "data.csv", file);
  Server server(quiet());
  server.post("/upload", describe);
  co_await server.start("127.0.0.1", 0);
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  const std::vector<std::string> args = {
      "-s", "-F", "title=hello world", "-F",
      "doc=@" + (dir->path() / "data.csv").string() + ";type=text/csv",
      "http://127.0.0.1:" + std::to_string(server.port()) + "/upload"};
  corio::Process curl = co_await corio::create_subprocess_exec("curl", args, opts);
  const std::pair<std::string, std::string> output = co_await curl.communicate();
  EXPECT_EQ(co_await curl.wait(), 0);
  EXPECT_EQ(output.first, "title|-|text/plain|11|" + crc("hello world") + "\n" +
                              "doc|data.csv|text/csv|700000|" + crc(file) + "\n");
  co_await server.shutdown(1s);
}

TEST(MultipartInterop, CurlUploadsToTheServer) {
  TempDir dir;
  run_bounded(curl_body(&dir), 30s);
}

Coro<void> python_body(const TempDir* dir, std::uint16_t port) {
  const std::string file = sample(300'000);
  write_file(dir->path() / "blob.bin", file);
  corio::http::FormData form;
  form.add_field("title", "caf\xc3\xa9 \"menu\"");
  form.add_file("blob", (dir->path() / "blob.bin").string(), "", "application/x-blob");
  form.add_bytes("note", "short", "note.txt", "text/plain");
  corio::http::RequestOptions opts;
  opts.multipart = std::move(form);
  corio::http::ClientSession s;
  corio::http::ClientResponse r =
      co_await s.post("http://127.0.0.1:" + std::to_string(port) + "/", std::move(opts));
  EXPECT_EQ(co_await r.text(),
            "title|-|text/plain|12|" + crc("caf\xc3\xa9 \"menu\"") + "\n" +
                "blob|blob.bin|application/x-blob|300000|" + crc(file) + "\n" +
                "note|note.txt|text/plain|5|" + crc("short") + "\n");
  co_await s.close();
}

TEST(MultipartInterop, FormDataIsReadByPythonsMimeParser) {
  PeerProcess peer({python(), "-u", (peers_dir() / "multipart_server.py").string()});
  const std::uint16_t port = peer.read_port();
  ASSERT_NE(port, 0) << "the Python peer did not start";
  TempDir dir;
  run_bounded(python_body(&dir, port), 30s);
}

}  // namespace
}  // namespace corio_http_test
