// StreamWriter against a raw peer socket: flow control with drain() over
// 64 MiB, errors from a closed peer, EOF and half-close, flushing on close
// and when every handle is dropped, write buffer limits, extra info,
// wait_writable() for writes that bypass the buffer.
#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

// Byte i of the test stream: position-dependent, so order errors show.
char pattern(std::size_t i) { return static_cast<char>(i * 7 + i / 4096); }

unsigned checksum(unsigned sum, std::string_view bytes) {
  for (char c : bytes) sum = sum * 31 + static_cast<unsigned char>(c);
  return sum;
}

struct Received {
  std::size_t total = 0;
  unsigned sum = 0;
  bool in_order = true;
};

// Reads the raw socket to EOF, 16 KiB at a time, yielding to the loop
// after each read: a reader slower than the writer.
Coro<void> slow_reader(Socket* s, Received* got) {
  corio::EventLoop& loop = corio::get_running_loop();
  std::string buf(16 * 1024, '\0');
  for (;;) {
    const std::size_t n = co_await loop.sock_recv_into(*s, std::span<char>(buf));
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) got->in_order &= buf[i] == pattern(got->total + i);
    got->sum = checksum(got->sum, std::string_view(buf.data(), n));
    got->total += n;
    co_await corio::sleep(0s);
  }
}

Coro<void> sixty_four_mebibytes_with_drain() {
  RawPeer p = co_await connect_to_raw_peer();
  Received got;
  Task<void> reader = corio::create_task(slow_reader(&p.peer, &got));
  constexpr std::size_t kTotal = 64 << 20, kChunk = 256 << 10;
  const std::size_t high = p.writer.get_write_buffer_limits().second;
  std::string chunk(kChunk, '\0');
  unsigned sum = 0;
  int drain_waited = 0;
  for (std::size_t off = 0; off < kTotal; off += kChunk) {
    for (std::size_t i = 0; i < kChunk; ++i) chunk[i] = pattern(off + i);
    sum = checksum(sum, chunk);
    p.writer.write(chunk);
    EXPECT_LE(p.writer.get_write_buffer_size(), high + kChunk);
    if (p.writer.get_write_buffer_size() > high) ++drain_waited;
    co_await p.writer.drain();
    EXPECT_LE(p.writer.get_write_buffer_size(), high) << "drain() returned above the high mark";
  }
  p.writer.close();
  co_await p.writer.wait_closed();
  co_await reader;
  EXPECT_EQ(got.total, kTotal);
  EXPECT_TRUE(got.in_order);
  EXPECT_EQ(got.sum, sum);
  EXPECT_GT(drain_waited, 0) << "the reader never fell behind: flow control untested";
}

TEST(StreamWriter, SixtyFourMebibytesWithDrainArriveInOrder) {
  run_bounded(sixty_four_mebibytes_with_drain(), 120s);
}

// Writing to a peer that is gone: EPIPE or ECONNRESET from drain(), no
// SIGPIPE; later writes are dropped and wait_closed() reports the error.
Coro<void> write_to_closed_peer() {
  RawPeer p = co_await connect_to_raw_peer();
  p.peer.close();
  const std::string chunk(64 << 10, 'x');
  int err = 0;
  for (int i = 0; i < 1000 && err == 0; ++i) {
    p.writer.write(chunk);
    err = co_await errno_of(p.writer.drain());
  }
  EXPECT_TRUE(err == EPIPE || err == ECONNRESET) << "errno " << err;
  EXPECT_TRUE(p.writer.is_closing()) << "a failed send closes, as asyncio's transport";
  p.writer.write(chunk);  // dropped, as asyncio does
  EXPECT_EQ(co_await errno_of(p.writer.drain()), err) << "the error sticks";
  p.writer.close();
  EXPECT_EQ(co_await errno_of(p.writer.wait_closed()), err);
}

TEST(StreamWriter, WritingToAClosedPeerFailsDrain) { run_bounded(write_to_closed_peer()); }

// Reads the raw socket to EOF into *out.
Coro<void> read_all_raw(Socket* s, std::string* out) {
  corio::EventLoop& loop = corio::get_running_loop();
  for (;;) {
    std::string part = co_await loop.sock_recv(*s, 1 << 16);
    if (part.empty()) break;
    *out += part;
  }
}

Coro<void> half_close() {
  RawPeer p = co_await connect_to_raw_peer();
  p.writer.write("request");
  EXPECT_TRUE(p.writer.can_write_eof());
  p.writer.write_eof();
  EXPECT_THROW(p.writer.write("more"), corio::RuntimeError);
  std::string request;
  co_await read_all_raw(&p.peer, &request);  // ends: the peer saw EOF
  EXPECT_EQ(request, "request");
  co_await raw_send(p.peer, "reply");
  p.peer.close();
  EXPECT_EQ(co_await p.reader.read(), "reply") << "reading goes on after write_eof";
}

TEST(StreamWriter, WriteEofHalfClosesAndReadingGoesOn) { run_bounded(half_close()); }

// Bytes the socket did not take go out without drain(), before the close.
Coro<void> close_flushes() {
  RawPeer p = co_await connect_to_raw_peer();
  cap_socket_buffers(p);
  const std::string big(4 << 20, 'b');
  p.writer.write(big);
  EXPECT_GT(p.writer.get_write_buffer_size(), 0u) << "4 MiB should not fit the socket";
  p.writer.close();
  EXPECT_TRUE(p.writer.is_closing());
  EXPECT_THROW(p.writer.write("late"), corio::RuntimeError);
  std::string got;
  Task<void> reader = corio::create_task(read_all_raw(&p.peer, &got));
  co_await p.writer.wait_closed();
  co_await reader;
  EXPECT_EQ(got.size(), big.size());
}

TEST(StreamWriter, CloseFlushesTheBufferFirst) { run_bounded(close_flushes()); }

void write_and_forget(StreamWriter writer, std::size_t n) { writer.write(std::string(n, 'f')); }

Coro<void> dropped_handles_flush() {
  Socket lst = raw_listener();
  std::string got;
  {
    auto [reader, writer] = co_await corio::open_connection("127.0.0.1", lst.local_address().port());
    write_and_forget(std::move(writer), 4 << 20);
  }  // every handle is gone; the flusher still holds the connection
  auto accepted = co_await corio::get_running_loop().sock_accept(lst);
  co_await read_all_raw(&accepted.first, &got);
  EXPECT_EQ(got.size(), std::size_t{4} << 20) << "then EOF: the connection closed itself";
}

TEST(StreamWriter, DroppingEveryHandleFlushesThenCloses) { run_bounded(dropped_handles_flush()); }

Coro<void> extra_info() {
  RawPeer p = co_await connect_to_raw_peer();
  EXPECT_EQ(p.writer.get_extra_info("peername"), p.peer.local_address().to_string());
  EXPECT_EQ(p.writer.get_extra_info("sockname"), p.peer.peer_address().to_string());
  EXPECT_EQ(p.writer.peername().port(), p.peer.local_address().port());
  EXPECT_EQ(p.writer.get_extra_info("no such thing"), "");
  EXPECT_GE(p.writer.fileno(), 0);
  p.writer.close();
  EXPECT_EQ(p.writer.fileno(), -1);
  EXPECT_EQ(p.writer.get_extra_info("peername"), p.peer.local_address().to_string())
      << "known after close, as asyncio's";
}

TEST(StreamWriter, ExtraInfoNamesTheAddresses) { run_bounded(extra_info()); }

Coro<void> buffer_limits() {
  RawPeer p = co_await connect_to_raw_peer();
  using Limits = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(p.writer.get_write_buffer_limits(), Limits(16 << 10, 64 << 10));
  p.writer.set_write_buffer_limits(100);
  EXPECT_EQ(p.writer.get_write_buffer_limits(), Limits(25, 100));
  p.writer.set_write_buffer_limits(std::nullopt, 10);
  EXPECT_EQ(p.writer.get_write_buffer_limits(), Limits(10, 40));
  EXPECT_THROW(p.writer.set_write_buffer_limits(5, 10), corio::ValueError);
}

TEST(StreamWriter, WriteBufferLimitsAsAsyncio) { run_bounded(buffer_limits()); }

Coro<void> abort_drops_the_buffer() {
  RawPeer p = co_await connect_to_raw_peer();
  p.writer.write(std::string(4 << 20, 'a'));
  p.writer.abort();
  EXPECT_TRUE(p.writer.is_closing());
  EXPECT_EQ(p.writer.get_write_buffer_size(), 0u);
  co_await p.writer.wait_closed();
  EXPECT_EQ(co_await errno_of(p.writer.drain()), ECONNRESET) << "asyncio: 'Connection lost'";
}

TEST(StreamWriter, AbortClosesAtOnce) { run_bounded(abort_drops_the_buffer()); }

// Bytes sent on fileno() behind the writer's back (as sendfile does) come
// after the buffered ones, and EAGAIN waits instead of spinning.
Coro<void> writes_past_the_buffer() {
  RawPeer p = co_await connect_to_raw_peer();
  cap_socket_buffers(p);
  Received got;
  Task<void> reader = corio::create_task(slow_reader(&p.peer, &got));
  constexpr std::size_t kBuffered = 4 << 20, kTotal = 32 << 20;
  std::string bytes(kTotal, '\0');
  for (std::size_t i = 0; i < kTotal; ++i) bytes[i] = pattern(i);
  p.writer.write(std::string_view(bytes).substr(0, kBuffered));
  EXPECT_GT(p.writer.get_write_buffer_size(), 0u) << "4 MiB should not fit the socket";
  co_await p.writer.wait_writable();
  EXPECT_EQ(p.writer.get_write_buffer_size(), 0u) << "the buffered bytes go first";
  EXPECT_TRUE(p.writer.is_flushed()) << "none left in the loop's send queue either";
  int waits = 0;
  for (std::size_t off = kBuffered; off < kTotal;) {
    const ssize_t n = ::send(p.writer.fileno(), bytes.data() + off, kTotal - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << "errno " << errno;
    ++waits;
    co_await p.writer.wait_writable();
  }
  p.writer.close();
  co_await p.writer.wait_closed();
  co_await reader;
  EXPECT_EQ(got.total, kTotal);
  EXPECT_TRUE(got.in_order);
  EXPECT_GT(waits, 0) << "the socket never filled: the wait is untested";
  EXPECT_LT(waits, 100'000) << "woken without room: a spin";
}

TEST(StreamWriter, WaitWritableOrdersWritesPastTheBuffer) { run_bounded(writes_past_the_buffer(), 120s); }

// A connection that failed has nothing to wait for: wait_writable() raises
// what drain() raises.
Coro<void> wait_writable_after_failure() {
  RawPeer p = co_await connect_to_raw_peer();
  p.writer.abort();
  EXPECT_EQ(co_await errno_of(p.writer.wait_writable()), ECONNRESET);
}

TEST(StreamWriter, WaitWritableRaisesOnAClosedConnection) {
  run_bounded(wait_writable_after_failure());
}

}  // namespace
}  // namespace corio_net_test
