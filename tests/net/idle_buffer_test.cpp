// Memory while idle (issue 28): the streams' buffers take their storage from
// a bounded per-thread pool and give it back the moment they are drained, so
// a connection that waits for its peer holds no buffer; try_fill() and
// readable() wait for a quiet peer without a frame or a buffer.
#include "net/byte_buffer.hpp"
#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

using corio::detail::BufferPool;
using corio::detail::ByteBuffer;
using corio::detail::buffer_storage;

Coro<void> send_later(Socket* s, std::string data) {
  co_await corio::sleep(5ms);
  co_await raw_send(*s, data);
}

Coro<void> close_soon(StreamWriter writer) {
  co_await corio::sleep(5ms);
  writer.close();
}

// Reads n bytes from a raw socket.
Coro<void> read_raw(Socket* s, std::string* out, std::size_t n) {
  corio::EventLoop& loop = corio::get_running_loop();
  while (out->size() < n) {
    std::string part = co_await loop.sock_recv(*s, 1 << 16);
    if (part.empty()) break;
    *out += part;
  }
}

TEST(BufferPool, RoundsUpToPowersOfTwoFrom4KiB) {
  std::size_t n = 100;
  char* small = BufferPool::take(n);
  EXPECT_EQ(n, std::size_t{4096});
  std::size_t m = 5000;
  char* bigger = BufferPool::take(m);
  EXPECT_EQ(m, std::size_t{8192});
  std::size_t huge = BufferPool::kMaxPooledBlock + 1;
  char* unpooled = BufferPool::take(huge);
  EXPECT_EQ(huge, BufferPool::kMaxPooledBlock + 1) << "past the largest block: as asked";
  BufferPool::give_back(small, n);
  BufferPool::give_back(bigger, m);
  BufferPool::give_back(unpooled, huge);
}

TEST(BufferPool, KeepsAtMostItsCapPerBlockSize) {
  const std::size_t out_before = BufferPool::blocks_out();
  // Other sizes' lists may hold blocks already (an earlier test in this process).
  const std::size_t cached_before = BufferPool::cached_bytes();
  std::vector<char*> blocks;
  const std::size_t burst = 2 * BufferPool::kCachedBytes / BufferPool::kMinBlock;
  for (std::size_t i = 0; i < burst; ++i) {
    std::size_t n = BufferPool::kMinBlock;
    blocks.push_back(BufferPool::take(n));
  }
  EXPECT_EQ(BufferPool::blocks_out(), out_before + burst);
  for (char* b : blocks) BufferPool::give_back(b, BufferPool::kMinBlock);
  EXPECT_EQ(BufferPool::blocks_out(), out_before);
  EXPECT_LE(BufferPool::cached_bytes(), cached_before + BufferPool::kCachedBytes)
      << "a burst does not pin its peak: the rest went back to the heap";
  EXPECT_GE(BufferPool::cached_bytes(), BufferPool::kCachedBytes / 2) << "the cap's worth is kept";
}

TEST(ByteBuffer, HoldsNoStorageOnceDrained) {
  ByteBuffer b;
  EXPECT_EQ(b.capacity(), 0u);
  b.append("hello");
  EXPECT_GE(b.capacity(), 5u);
  b.consume(2);
  EXPECT_EQ(b.view(), "llo");
  EXPECT_EQ(b.take(3), "llo");
  EXPECT_EQ(b.capacity(), 0u) << "empty: the block went back";
  b.append("x");
  b.clear();
  EXPECT_EQ(b.capacity(), 0u);
}

TEST(ByteBuffer, APreparedSpanSurvivesConsumingNothing) {
  ByteBuffer b;
  const std::span<char> room = b.prepare(16);
  b.consume(0);
  std::memcpy(room.data(), "abc", 3);
  b.commit(3);
  EXPECT_EQ(b.view(), "abc");
  b.consume(3);
  b.prepare(16);
  b.trim();
  EXPECT_EQ(b.capacity(), 0u) << "a read that found nothing gives its room back";
}

TEST(ByteBuffer, GrowsKeepingItsBytes) {
  ByteBuffer b;
  b.append(std::string(3000, 'a'));
  b.consume(1000);
  b.append(std::string(10000, 'b'));
  EXPECT_EQ(b.size(), 12000u);
  EXPECT_EQ(b.view().substr(0, 2000), std::string(2000, 'a'));
  EXPECT_EQ(b.view().substr(2000), std::string(10000, 'b'));
}

Coro<void> drained_reader_holds_nothing() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "line1\nline2\n");
  EXPECT_EQ(co_await p.reader.readline(), "line1\n");
  EXPECT_GT(buffer_storage(p.reader), 0u) << "line2 is still buffered";
  EXPECT_EQ(co_await p.reader.readline(), "line2\n");
  EXPECT_EQ(buffer_storage(p.reader), 0u);
  // Waiting for a quiet peer: the read holds no buffer while it waits.
  Task<std::string> waiting = corio::create_task(p.reader.readline());
  co_await corio::sleep(0s);
  co_await corio::sleep(0s);
  EXPECT_FALSE(waiting.done());
  EXPECT_EQ(buffer_storage(p.reader), 0u) << "parked on readability, not on a buffer";
  co_await raw_send(p.peer, "line3\n");
  EXPECT_EQ(co_await waiting, "line3\n");
  EXPECT_EQ(buffer_storage(p.reader), 0u);
}

TEST(IdleStreams, ADrainedReaderHoldsNoBuffer) { run_bounded(drained_reader_holds_nothing()); }

Coro<void> flushed_writer_holds_nothing() {
  RawPeer p = co_await connect_to_raw_peer();
  p.writer.write(std::string(8 << 20, 'x'));  // more than the socket takes at once
  EXPECT_GT(buffer_storage(p.reader), 0u);
  std::string got;
  Task<void> reading = corio::create_task(read_raw(&p.peer, &got, std::size_t{8} << 20));
  co_await p.writer.drain();
  co_await reading;
  co_await corio::sleep(0s);  // the flusher's last step
  EXPECT_EQ(got.size(), std::size_t{8} << 20);
  EXPECT_EQ(buffer_storage(p.reader), 0u) << "flushed: the write buffer went back";
}

TEST(IdleStreams, AFlushedWriterHoldsNoBuffer) { run_bounded(flushed_writer_holds_nothing()); }

Coro<void> try_fill_then_readable() {
  RawPeer p = co_await connect_to_raw_peer();
  EXPECT_EQ(p.reader.try_fill(), std::nullopt) << "nothing sent yet";
  EXPECT_EQ(buffer_storage(p.reader), 0u);
  Task<void> later = corio::create_task(send_later(&p.peer, "ping"));
  std::optional<std::size_t> got;
  while (!(got = p.reader.try_fill())) co_await p.reader.readable();
  co_await later;
  EXPECT_EQ(*got, 4u);
  EXPECT_EQ(p.reader.buffered(), "ping");
  p.reader.consume(4);
  EXPECT_EQ(buffer_storage(p.reader), 0u);
  p.peer.shutdown(SHUT_WR);
  while (!(got = p.reader.try_fill())) co_await p.reader.readable();
  EXPECT_EQ(*got, 0u) << "EOF";
  EXPECT_TRUE(p.reader.at_eof());
}

TEST(IdleStreams, TryFillThenReadableReadsWhatComes) { run_bounded(try_fill_then_readable()); }

Coro<void> close_ends_readable() {
  RawPeer p = co_await connect_to_raw_peer();
  EXPECT_EQ(p.reader.try_fill(), std::nullopt);
  Task<void> closing = corio::create_task(close_soon(p.writer));
  co_await p.reader.readable();  // woken by our own close: EOF, no error
  co_await closing;
  EXPECT_EQ(p.reader.try_fill(), std::optional<std::size_t>(0));
  EXPECT_TRUE(p.reader.at_eof());
  co_await p.reader.readable();  // closed: nothing to wait for
  EXPECT_EQ(p.reader.try_fill(), std::optional<std::size_t>(0));
}

TEST(IdleStreams, OwnCloseEndsTheWaitAsEof) { run_bounded(close_ends_readable()); }

// On a backend that lends its receive buffers (io_uring), try_fill() with
// nothing buffered borrows them: buffered() is the bytes in place, with no
// storage taken, and each byte is read exactly once, whether it was
// consumed in place, read by a later read, or outlived our close.
Coro<std::optional<std::size_t>> fill_when_ready(StreamReader reader) {
  std::optional<std::size_t> got;
  while (!(got = reader.try_fill())) co_await reader.readable();
  co_return got;
}

Coro<void> borrowed_bytes_read_once() {
  const bool lends = std::string_view(corio::get_running_loop().backend_name()) == "io_uring";
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "GET / HTTP/1.1\r\n");
  EXPECT_EQ(co_await fill_when_ready(p.reader), std::optional<std::size_t>(16));
  EXPECT_EQ(p.reader.buffered(), "GET / HTTP/1.1\r\n");
  if (lends) {
    EXPECT_EQ(buffer_storage(p.reader), 0u) << "borrowed, not copied";
  }
  p.reader.consume(4);
  EXPECT_EQ(p.reader.buffered(), "/ HTTP/1.1\r\n");
  // A read that needs more than is borrowed: the rest first, then what comes.
  co_await raw_send(p.peer, "Host: x\r\n\r\n");
  EXPECT_EQ(co_await p.reader.readuntil("\r\n\r\n"), "/ HTTP/1.1\r\nHost: x\r\n\r\n");
  // Consumed whole in place: nothing is left for the next read.
  co_await raw_send(p.peer, "abc");
  EXPECT_EQ(co_await fill_when_ready(p.reader), std::optional<std::size_t>(3));
  p.reader.consume(3);
  EXPECT_EQ(buffer_storage(p.reader), 0u);
  co_await raw_send(p.peer, "def");
  EXPECT_EQ(co_await p.reader.read(100), "def");
  // Borrowed when we close: still read once, after the close.
  co_await raw_send(p.peer, "ghi");
  EXPECT_EQ(co_await fill_when_ready(p.reader), std::optional<std::size_t>(3));
  p.writer.close();
  if (lends) {
    EXPECT_GT(buffer_storage(p.reader), 0u) << "copied before the socket's buffers went back";
  }
  co_await corio::sleep(0s);
  EXPECT_EQ(co_await p.reader.read(100), "ghi");
  EXPECT_EQ(co_await p.reader.read(100), "") << "then EOF";
}

TEST(IdleStreams, BorrowedBytesAreReadExactlyOnce) { run_bounded(borrowed_bytes_read_once()); }

}  // namespace
}  // namespace corio_net_test
