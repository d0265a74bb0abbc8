// Files over HTTP/2, frame by frame: their bytes are read a piece at a
// time, no further ahead than the peer's windows let them go
// (H2FileReader), so how a file's answer ends, and what a file that
// changes under it does, are seen on the wire here.
#include <filesystem>
#include <map>

#include "http/client_support.hpp"
#include "http/h2_frames.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

// Bytes whose every offset is told apart from its neighbours'.
std::string counting(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

// Stream `id`'s DATA frames, until its END_STREAM or RST_STREAM (kept last).
Coro<std::vector<h2::Frame>> data_of(StreamReader& r, std::uint32_t id) {
  std::vector<h2::Frame> frames;
  while (std::optional<h2::Frame> f = co_await h2::read_frame(r)) {
    if (f->stream != id) continue;
    const bool ends = f->type == h2::kRst || (f->flags & h2::kEndStream) != 0;
    if (f->type == h2::kData || f->type == h2::kRst) frames.push_back(std::move(*f));
    if (ends) break;
  }
  co_return frames;
}

std::string body_of(const std::vector<h2::Frame>& frames) {
  std::string body;
  for (const h2::Frame& f : frames) {
    if (f.type == h2::kData) body += f.payload;
  }
  return body;
}

void expect_ended_by_bytes(const std::vector<h2::Frame>& frames) {
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().type, h2::kData);
  EXPECT_NE(frames.back().flags & h2::kEndStream, 0);
  EXPECT_FALSE(frames.back().payload.empty());
}

// A file's answer, whole or one range, ends with the frame that carries
// its last bytes: no empty DATA frame follows them. (Both within the
// connection's first window: this client sends no WINDOW_UPDATE.)
Coro<void> last_frame_body(const corio_testing::TempDir* dir) {
  write_file(dir->path() / "f.bin", counting(20'000));
  Server server(quiet());
  server.add_static("/files", dir->path().string());
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(h2::opening() + h2::get(1, "/files/f.bin"));
  const std::vector<h2::Frame> whole = co_await data_of(c.reader, 1);
  c.writer.write(h2::frame(h2::kHeaders, h2::kEndHeaders | h2::kEndStream, 3,
                           h2::get_block("/files/f.bin") + h2::literal("range", "bytes=100-15099")));
  const std::vector<h2::Frame> range = co_await data_of(c.reader, 3);
  expect_ended_by_bytes(whole);
  expect_ended_by_bytes(range);
  EXPECT_TRUE(body_of(whole) == counting(20'000));
  EXPECT_TRUE(body_of(range) == counting(20'000).substr(100, 15'000));
  c.writer.close();
  server.close();
}

TEST(ServerH2Files, AnswerEndsWithTheFramesLastBytes) {
  corio_testing::TempDir dir;
  run_bounded(last_frame_body(&dir), 10s);
}

// Serves f.bin (200,000 bytes) to a client whose stream window is 1,000
// bytes: those come (into *first), then `change` alters the file, the
// windows open, and the stream's remaining frames are returned (to its
// END_STREAM or RST_STREAM).
Coro<std::vector<h2::Frame>> after_change(const corio_testing::TempDir* dir,
                                          void (*change)(const std::filesystem::path&),
                                          std::string* first) {
  const std::filesystem::path file = dir->path() / "f.bin";
  write_file(file, counting(200'000));
  Server server(quiet());
  server.add_static("/files", dir->path().string());
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(std::string(h2::kPreface) +
                 h2::settings({{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1000}}) +
                 h2::get(1, "/files/f.bin"));
  while (first->size() < 1000) {
    std::optional<h2::Frame> f = co_await h2::read_frame(c.reader);
    if (!f) {
      ADD_FAILURE() << "the connection ended within the window's bytes";
      co_return std::vector<h2::Frame>();
    }
    if (f->stream == 1 && f->type == h2::kData) *first += f->payload;
  }
  change(file);
  c.writer.write(h2::window_update(0, 200'000) + h2::window_update(1, 200'000));
  std::vector<h2::Frame> rest = co_await data_of(c.reader, 1);
  c.writer.close();
  server.close();
  co_return rest;
}

// A file cut short after its head went out cannot be answered whole: the
// stream is reset, never ended as if the body were complete. The stream's
// window holds the rest back until the file was cut.
Coro<void> shrinking_body(const corio_testing::TempDir* dir) {
  std::string first;
  const std::vector<h2::Frame> rest = co_await after_change(
      dir, [](const std::filesystem::path& file) { std::filesystem::resize_file(file, 500); },
      &first);
  CO_ASSERT(!rest.empty());
  EXPECT_EQ(rest.back().type, h2::kRst);
  EXPECT_EQ(rest.back().u32(0), NGHTTP2_INTERNAL_ERROR);
  EXPECT_TRUE(first == counting(1000));
}

TEST(ServerH2Files, FileCutShortResetsTheStream) {
  corio_testing::TempDir dir;
  run_bounded(shrinking_body(&dir), 10s);
}

// Bytes past the stream's window are read only once it opens: a file
// rewritten (same size) while the window is shut sends its new bytes from
// there on, as a read per frame did, not a piece read ahead before.
std::string rewritten() { return counting(1000) + std::string(199'000, 'z'); }

Coro<void> window_bound_body(const corio_testing::TempDir* dir) {
  std::string first;
  const std::vector<h2::Frame> rest = co_await after_change(
      dir, [](const std::filesystem::path& file) { write_file(file, rewritten()); }, &first);
  expect_ended_by_bytes(rest);
  EXPECT_TRUE(first + body_of(rest) == rewritten());
}

TEST(ServerH2Files, ReadsNoFurtherAheadThanTheWindow) {
  corio_testing::TempDir dir;
  run_bounded(window_bound_body(&dir), 10s);
}

// Ten answers larger than a piece, whole files and ranges (odd streams'
// requests alternate), with wide stream windows and a connection window
// that opens only as the client reads: the streams' read-ahead shares
// that window and the pass's room, and every body still arrives whole and
// in order, each ended by its last frame.
Coro<void> shared_window_body(const corio_testing::TempDir* dir) {
  constexpr std::size_t kSize = 300'000;
  write_file(dir->path() / "f.bin", counting(kSize));
  Server server(quiet());
  server.add_static("/files", dir->path().string());
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  constexpr std::uint32_t kStreams = 10;
  std::string requests =
      std::string(h2::kPreface) + h2::settings({{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 30}});
  for (std::uint32_t i = 0; i < kStreams; ++i) {
    const std::string range =
        i % 2 == 0 ? std::string() : h2::literal("range", "bytes=1000-250999");
    requests += h2::frame(h2::kHeaders, h2::kEndHeaders | h2::kEndStream, 2 * i + 1,
                          h2::get_block("/files/f.bin") + range);
  }
  c.writer.write(requests);
  std::map<std::uint32_t, std::vector<h2::Frame>> frames;
  std::size_t ended = 0;
  while (ended < kStreams) {
    std::optional<h2::Frame> f = co_await h2::read_frame(c.reader);
    CO_ASSERT(f.has_value());
    if (f->type != h2::kData && f->type != h2::kRst) continue;
    if (!f->payload.empty() && f->type == h2::kData) {
      c.writer.write(h2::window_update(0, static_cast<std::uint32_t>(f->payload.size())));
    }
    ended += f->type == h2::kRst || (f->flags & h2::kEndStream) != 0 ? 1 : 0;
    frames[f->stream].push_back(std::move(*f));
  }
  EXPECT_EQ(frames.size(), kStreams);
  for (const auto& [id, got] : frames) {
    const bool ranged = (id - 1) / 2 % 2 == 1;
    expect_ended_by_bytes(got);
    EXPECT_TRUE(body_of(got) == (ranged ? counting(kSize).substr(1000, 250'000) : counting(kSize)))
        << "stream " << id;
  }
  c.writer.close();
  server.close();
}

TEST(ServerH2Files, StreamsSharingAConnectionWindowGetWholeFilesAndRanges) {
  corio_testing::TempDir dir;
  run_bounded(shared_window_body(&dir), 10s);
}

}  // namespace
}  // namespace corio_http_test
