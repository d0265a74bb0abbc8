// Client multipart uploads (FormData) into a corio server that reads them
// with MultipartReader: fields, a file streamed from disk, bytes, escaping,
// Content-Length, a 307 redirect sending the body again, a missing file.
#include <corio/http/client.hpp>
#include <corio/http/multipart.hpp>

#include "http/client_support.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::BodyPart;
using corio::http::ClientSession;
using corio::http::FormData;
using corio::http::MultipartReader;
using corio::http::RequestOptions;

// Each part as "name|filename|type|size|sum" lines; the sum is of the bytes.
Coro<Response> summarize(Request& req) {
  MultipartReader form(req);
  std::string out = std::string(req.headers().get_or("Content-Length", "none")) + "\n";
  while (std::optional<BodyPart> part = co_await form.next()) {
    std::uint64_t size = 0, sum = 0;
    for (std::string piece; !(piece = co_await part->read_chunk()).empty();) {
      size += piece.size();
      for (unsigned char ch : piece) sum = sum * 31 + ch;
    }
    out += part->name() + "|" + part->filename().value_or("-") + "|" +
           std::string(part->content_type()) + "|" + std::to_string(size) + "|" +
           std::to_string(sum) + "\n";
  }
  co_return Response::text(out);
}

Coro<Response> moved(Request&) {
  Response r(307);
  r.headers.set("Location", "/upload");
  co_return r;
}

std::uint64_t sum_of(std::string_view bytes) {
  std::uint64_t sum = 0;
  for (unsigned char ch : bytes) sum = sum * 31 + ch;
  return sum;
}

Coro<void> upload_body(const TempDir* dir) {
  std::string big;
  for (std::size_t i = 0; big.size() < 3'000'000; ++i) big += std::to_string(i * 7919) + ";";
  write_file(dir->path() / "big.bin", big);
  ServerOptions so = quiet();
  so.limits.max_body = 64 * 1024 * 1024;
  Server server(so);
  server.post("/upload", summarize);
  server.post("/moved", moved);
  co_await server.start("127.0.0.1", 0);
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());

  FormData form;
  form.add_field("title", "summer \"trip\"\r\n");
  form.add_file("photo", (dir->path() / "big.bin").string(), "", "image/x-test");
  form.add_bytes("note", "in memory", "note.txt", "text/plain");
  const std::uint64_t length = form.content_length();
  const std::string title = "summer \"trip\"\r\n";
  const std::string expected = std::to_string(length) + "\n" +
      "title|-|text/plain|" + std::to_string(title.size()) + "|" + std::to_string(sum_of(title)) + "\n" +
      "photo|big.bin|image/x-test|" + std::to_string(big.size()) + "|" + std::to_string(sum_of(big)) + "\n" +
      "note|note.txt|text/plain|9|" + std::to_string(sum_of("in memory")) + "\n";
  ClientSession s;
  RequestOptions opts;
  opts.multipart = form;
  corio::http::ClientResponse r = co_await s.post(base + "/upload", std::move(opts));
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(co_await r.text(), expected);

  RequestOptions again;
  again.multipart = form;
  r = co_await s.post(base + "/moved", std::move(again));
  EXPECT_EQ(r.history().size(), 1u);
  EXPECT_EQ(co_await r.text(), expected) << "a 307 sends the form again, the file re-read";

  FormData escaped;
  escaped.add_field("a\"b\r\nc", "v");
  RequestOptions esc;
  esc.multipart = std::move(escaped);
  r = co_await s.post(base + "/upload", std::move(esc));
  const std::string text = co_await r.text();
  EXPECT_NE(text.find("a%22b%0D%0Ac|-|"), std::string::npos) << text;

  FormData missing;
  missing.add_file("f", (dir->path() / "nope.bin").string());
  RequestOptions bad;
  bad.multipart = std::move(missing);
  bool refused = false;
  try {
    co_await s.post(base + "/upload", std::move(bad));
  } catch (const corio::http::ClientError& e) {
    refused = std::string(e.what()).find("nope.bin") != std::string::npos;
  }
  EXPECT_TRUE(refused);
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(ClientFormData, UploadsFieldsAndFilesStreamed) {
  TempDir dir;
  run_bounded(upload_body(&dir), 30s);
}

}  // namespace
}  // namespace corio_http_test
