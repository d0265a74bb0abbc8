// One conformance suite for every kind of stream (Trio's check_stream): the
// same tests of EOF, half-close, a peer's reset, partial writes,
// backpressure, cancellation mid-read and close-while-writing, run over TCP,
// Unix sockets, TLS (over a socket, and started over a connection) and a
// pair of pipes. A kind is a make_pair factory: two
// connected ends, a and b, each a StreamReader and a StreamWriter.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "net/tls_support.hpp"

namespace corio_net_test {
namespace {

struct End {
  StreamReader reader;
  StreamWriter writer;
};

struct StreamPair {
  End a, b;
  std::optional<Server> server;  // the listener of a socket kind
};

using MakePair = Coro<StreamPair> (*)();

// The server side's streams go from the handler to the factory.
using Accepted = corio::Queue<End>;

Coro<void> hand_over(StreamReader reader, StreamWriter writer, std::shared_ptr<Accepted> to) {
  to->put_nowait(End{std::move(reader), std::move(writer)});
  co_return;
}

corio::ClientConnected handing_over(std::shared_ptr<Accepted> to) {
  return [to](StreamReader r, StreamWriter w) { return hand_over(std::move(r), std::move(w), to); };
}

// The client's end as a, the server's as b.
Coro<StreamPair> joined(Server server, std::pair<StreamReader, StreamWriter> client,
                        std::shared_ptr<Accepted> accepted) {
  StreamPair p;
  p.a = End{client.first, client.second};
  p.b = co_await accepted->get();
  p.server = std::move(server);
  co_return p;
}

Coro<StreamPair> tcp_pair() {
  auto accepted = std::make_shared<Accepted>();
  corio::ClientConnected handler = handing_over(accepted);
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  auto client = co_await corio::open_connection("127.0.0.1", server.port());
  co_return co_await joined(std::move(server), std::move(client), accepted);
}

Coro<StreamPair> unix_pair() {
  static std::atomic<int> serial{0};
  const std::string path = "/tmp/corio-conformance-" + std::to_string(::getpid()) + "-" +
                           std::to_string(serial++) + ".sock";
  auto accepted = std::make_shared<Accepted>();
  corio::ClientConnected handler = handing_over(accepted);
  Server server = co_await corio::start_unix_server(handler, path);
  auto client = co_await corio::open_unix_connection(path);
  co_return co_await joined(std::move(server), std::move(client), accepted);
}

Coro<StreamPair> tls_pair() {
  auto accepted = std::make_shared<Accepted>();
  corio::ClientConnected handler = handing_over(accepted);
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0, tls_server_options());
  auto client = co_await corio::open_connection("127.0.0.1", server.port(), tls_options());
  co_return co_await joined(std::move(server), std::move(client), accepted);
}

// TLS started over a plain connection (start_tls: a transport over another
// connection's streams) to a TLS server.
Coro<StreamPair> start_tls_pair() {
  auto accepted = std::make_shared<Accepted>();
  corio::ClientConnected handler = handing_over(accepted);
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0, tls_server_options());
  auto plain = co_await corio::open_connection("127.0.0.1", server.port());
  auto client = co_await corio::start_tls(std::move(plain.first), std::move(plain.second),
                                          "127.0.0.1", tls_options());
  co_return co_await joined(std::move(server), std::move(client), accepted);
}

// Two pipes, one each way. The streams work on duplicates: closing the
// originals leaves each pipe end open exactly once.
Coro<StreamPair> pipe_pair() {
  int ab[2], ba[2];
  if (::pipe2(ab, O_CLOEXEC) != 0 || ::pipe2(ba, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  StreamPair p;
  p.a = End{corio::connect_read_pipe(ba[0]), corio::connect_write_pipe(ab[1])};
  p.b = End{corio::connect_read_pipe(ab[0]), corio::connect_write_pipe(ba[1])};
  for (int fd : {ab[0], ab[1], ba[0], ba[1]}) ::close(fd);
  co_return p;
}

struct Kind {
  const char* name;
  MakePair make;
};

// More than a socket pair's kernel buffers take while nobody reads (a
// pipe holds 64 KiB, fresh loopback TCP some hundred KiB): drain() waits.
constexpr std::size_t kMoreThanBuffers = 16u << 20;

// Bytes that show a reordering or a lost piece (251 is prime).
std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i % 251);
  return s;
}

// Closes both ends and waits for both (a TLS close waits for the peer's
// close_notify, so both go first); a connection that failed is closed all
// the same.
Coro<void> close_both(StreamPair& p) {
  p.a.writer.close();
  p.b.writer.close();
  for (StreamWriter* w : {&p.a.writer, &p.b.writer}) {
    try {
      co_await w->wait_closed();
    } catch (const std::system_error&) {
    }
  }
}

class StreamConformance : public ::testing::TestWithParam<Kind> {};

Coro<void> eof_after_data(MakePair make) {
  StreamPair p = co_await make();
  p.b.writer.write("hello");
  p.b.writer.close();
  EXPECT_EQ(co_await p.a.reader.read(), "hello");
  EXPECT_TRUE(p.a.reader.at_eof());
  EXPECT_EQ(co_await p.a.reader.read(100), "") << "EOF stays EOF";
  EXPECT_EQ(co_await p.a.reader.readline(), "");
  co_await close_both(p);
}

Coro<std::string> partial_of_readexactly(StreamReader reader, std::size_t n) {
  try {
    co_await reader.readexactly(n);
  } catch (const corio::IncompleteReadError& e) {
    EXPECT_EQ(e.expected, n);
    co_return e.partial;
  }
  ADD_FAILURE() << "readexactly() past EOF returned";
  co_return "";
}

Coro<void> eof_mid_read(MakePair make) {
  StreamPair p = co_await make();
  Task<std::string> reading = corio::create_task(partial_of_readexactly(p.a.reader, 10));
  p.b.writer.write("hel");
  co_await p.b.writer.drain();
  p.b.writer.close();
  EXPECT_EQ(co_await reading, "hel") << "a pending read ends at EOF with what came";
  co_await close_both(p);
}

TEST_P(StreamConformance, EofEndsAPendingReadWithItsPartial) {
  run_bounded(eof_mid_read(GetParam().make));
}

TEST_P(StreamConformance, DataThenEof) { run_bounded(eof_after_data(GetParam().make)); }

Coro<void> half_close(MakePair make) {
  StreamPair p = co_await make();
  EXPECT_TRUE(p.a.writer.can_write_eof());
  p.a.writer.write("request");
  p.a.writer.write_eof();
  EXPECT_EQ(co_await p.b.reader.read(), "request") << "the peer reads to EOF";
  p.b.writer.write("answer after EOF");
  co_await p.b.writer.drain();
  EXPECT_EQ(co_await p.a.reader.readexactly(16), "answer after EOF")
      << "the half-closed side still reads";
  co_await close_both(p);
}

TEST_P(StreamConformance, HalfCloseLeavesTheOtherDirectionOpen) {
  run_bounded(half_close(GetParam().make));
}

bool is_peer_gone(int err) { return err == ECONNRESET || err == EPIPE; }

// How a read that the peer's reset ends ends: "" for EOF or the reset
// (ECONNRESET; over TLS an EOF without close_notify), else the error.
Coro<std::string> read_until_gone(StreamReader reader) {
  try {
    while (!(co_await reader.read(65536)).empty()) {
    }
  } catch (const corio::SslEofError&) {
  } catch (const std::system_error& e) {
    if (!is_peer_gone(e.code().value())) co_return e.what();
  }
  co_return "";
}

// `chunk`: the size of each write after the reset; small ones may wait in a
// completion backend's send queue (io_uring's below 16 KiB), big ones go
// straight to the socket: the error must reach drain() either way.
Coro<void> peer_reset(MakePair make, std::size_t chunk_size) {
  StreamPair p = co_await make();
  Task<std::string> reading = corio::create_task(read_until_gone(p.a.reader));
  p.a.writer.write("unread by the peer");
  co_await p.a.writer.drain();
  // The peer vanishes with bytes unread: a socket resets, a pipe's reader
  // is gone (a pipe's reader closes with its last handle).
  p.b.writer.abort();
  p.b = End{};
  EXPECT_EQ(co_await reading, "") << "a pending read ends with EOF or the reset, nothing else";
  const std::string chunk(chunk_size, 'r');
  int err = 0;
  for (int i = 0; i < 64000 && err == 0; ++i) {
    p.a.writer.write(chunk);
    err = co_await errno_of(p.a.writer.drain());
  }
  EXPECT_TRUE(is_peer_gone(err)) << "drain() after the peer went: " << std::strerror(err);
  EXPECT_TRUE(p.a.writer.is_closing());
  EXPECT_EQ(co_await errno_of(p.a.writer.drain()), err) << "the error sticks";
  p.a.writer.close();
  // The write's own error (EPIPE after a read saw ECONNRESET, say).
  const int closed_err = co_await errno_of(p.a.writer.wait_closed());
  EXPECT_TRUE(is_peer_gone(closed_err)) << std::strerror(closed_err);
}

TEST_P(StreamConformance, PeerResetFailsWritesWithoutSignal) {
  run_bounded(peer_reset(GetParam().make, 64 * 1024));
}

TEST_P(StreamConformance, PeerResetFailsSmallWritesToo) {
  run_bounded(peer_reset(GetParam().make, 1024));
}

Coro<std::string> read_exactly(StreamReader reader, std::size_t n) {
  co_return co_await reader.readexactly(n);
}

Coro<void> partial_writes(MakePair make) {
  StreamPair p = co_await make();
  // Far more than any socket or pipe takes at once: write() keeps the rest.
  const std::string big = pattern(4 << 20);
  p.a.writer.write(big);
  Task<std::string> reading = corio::create_task(read_exactly(p.b.reader, big.size()));
  co_await p.a.writer.drain();
  EXPECT_TRUE((co_await reading) == big) << "every byte, in order";
  std::string small;
  for (int i = 0; i < 5000; ++i) {
    const std::string piece = std::to_string(i) + ",";
    p.a.writer.write(piece);
    small += piece;
  }
  co_await p.a.writer.drain();
  EXPECT_EQ(co_await p.b.reader.readexactly(small.size()), small);
  co_await close_both(p);
}

TEST_P(StreamConformance, PartialWritesArriveWholeAndInOrder) {
  run_bounded(partial_writes(GetParam().make));
}

// Consecutive slices of bytes, of sizes an HTTP/2 pass gathers (a 9-byte
// frame header, a 16 KiB payload, a byte, more than a socket takes).
std::vector<std::string_view> slices(std::string_view bytes) {
  constexpr std::size_t kSizes[] = {9, 16384, 1, 300000, 4096};
  std::vector<std::string_view> out;
  for (std::size_t i = 0; !bytes.empty(); ++i) {
    out.push_back(bytes.substr(0, kSizes[i % std::size(kSizes)]));
    bytes.remove_prefix(out.back().size());
  }
  return out;
}

// writelines() with nothing buffered (the transport takes what it can, and
// the rest is kept from inside a piece on), then behind the bytes it kept.
Coro<void> gathered_writes(MakePair make) {
  StreamPair p = co_await make();
  const std::string big = pattern(3 << 20);
  const std::vector<std::string_view> pieces = slices(big);
  p.a.writer.writelines(pieces);
  p.a.writer.writelines(pieces);
  const std::string_view few[] = {"a", "", "bc"};
  p.a.writer.writelines(few);
  Task<std::string> reading = corio::create_task(read_exactly(p.b.reader, 2 * big.size() + 3));
  co_await p.a.writer.drain();
  EXPECT_TRUE((co_await reading) == big + big + "abc") << "every byte, in order";
  co_await close_both(p);
}

TEST_P(StreamConformance, GatheredWritesArriveWholeAndInOrder) {
  run_bounded(gathered_writes(GetParam().make));
}

struct Progress {
  std::size_t written = 0;
  std::size_t peak_buffered = 0;
};

Coro<void> write_drained(StreamWriter writer, std::size_t total, Progress* progress) {
  const std::string chunk(64 * 1024, 'p');
  while (progress->written < total) {
    writer.write(chunk);
    progress->written += chunk.size();
    progress->peak_buffered = std::max(progress->peak_buffered, writer.get_write_buffer_size());
    co_await writer.drain();
  }
}

Coro<std::size_t> count_until(StreamReader reader, std::size_t total) {
  std::size_t n = 0;
  while (n < total) {
    const std::string piece = co_await reader.read(256 * 1024);
    if (piece.empty()) break;
    n += piece.size();
  }
  co_return n;
}

Coro<void> backpressure(MakePair make) {
  StreamPair p = co_await make();
  // More than the kernel's buffers on both sides hold (loopback TCP grows
  // them to some MiB): the writer must wait for the reader.
  constexpr std::size_t kTotal = 32u << 20;
  Progress progress;
  Task<void> writing = corio::create_task(write_drained(p.a.writer, kTotal, &progress));
  // Nobody reads for a while: a lower bound, so a slow machine cannot fail it.
  co_await corio::sleep(200ms);
  EXPECT_FALSE(writing.done()) << "drain() suspends while the peer does not read";
  EXPECT_LT(progress.written, kTotal);
  const std::size_t high = p.a.writer.get_write_buffer_limits().second;
  EXPECT_LE(progress.peak_buffered, high + 64 * 1024) << "memory stays bounded";
  EXPECT_LE(p.b.reader.buffered().size(), 2 * p.b.reader.limit()) << "on the reader's side too";
  EXPECT_EQ(co_await count_until(p.b.reader, kTotal), kTotal);
  co_await writing;
  co_await close_both(p);
}

TEST_P(StreamConformance, DrainSuspendsWhileThePeerDoesNotRead) {
  run_bounded(backpressure(GetParam().make), 30s);
}

Coro<void> cancel_mid_read(MakePair make) {
  StreamPair p = co_await make();
  Task<std::string> reading = corio::create_task(read_exactly(p.a.reader, 10));
  p.b.writer.write("01234");
  co_await p.b.writer.drain();
  // Until the reader holds the first half (decrypted, for TLS).
  while (p.a.reader.buffered().size() < 5) co_await corio::sleep(1ms);
  EXPECT_FALSE(reading.done());
  reading.cancel();
  EXPECT_THROW(co_await reading, corio::CancelledError);
  p.b.writer.write("56789abc");
  EXPECT_EQ(co_await p.a.reader.readexactly(10), "0123456789") << "the cancelled read lost nothing";
  EXPECT_EQ(co_await p.a.reader.readexactly(3), "abc");
  co_await close_both(p);
}

TEST_P(StreamConformance, ACancelledReadLosesNothing) {
  run_bounded(cancel_mid_read(GetParam().make));
}

Coro<void> drain_of(StreamWriter writer) { co_await writer.drain(); }

// Writes big to a, which the peer does not read yet: a task waits in drain().
Coro<Task<void>> write_with_pending_drain(StreamWriter writer, const std::string& big) {
  writer.write(big);
  Task<void> draining = corio::create_task(drain_of(writer));
  co_await corio::sleep(0s);  // the task is now waiting in drain()
  EXPECT_FALSE(draining.done()) << "the peer reads nothing yet";
  co_return draining;
}

Coro<void> close_while_writing(MakePair make) {
  StreamPair p = co_await make();
  const std::string big = pattern(kMoreThanBuffers);
  Task<void> draining = co_await write_with_pending_drain(p.a.writer, big);
  p.a.writer.close();
  EXPECT_TRUE(p.a.writer.is_closing());
  const std::string got = co_await p.b.reader.read();
  EXPECT_EQ(got.size(), big.size());
  EXPECT_TRUE(got == big) << "close() sends the buffer first";
  co_await draining;  // the pending drain() ends with the clean close
  co_await close_both(p);
}

TEST_P(StreamConformance, CloseWhileWritingFlushesThenEnds) {
  run_bounded(close_while_writing(GetParam().make));
}

// What b received until its end: EOF, or the reset an abort may cause.
Coro<std::string> read_to_end(StreamReader reader) {
  std::string got;
  try {
    for (std::string piece; !(piece = co_await reader.read(256 * 1024)).empty();) got += piece;
  } catch (const std::system_error&) {
  }
  co_return got;
}

Coro<void> cancel_drain(MakePair make) {
  StreamPair p = co_await make();
  const std::string big = pattern(kMoreThanBuffers);
  Task<void> draining = co_await write_with_pending_drain(p.a.writer, big);
  draining.cancel();
  EXPECT_THROW(co_await draining, corio::CancelledError);
  EXPECT_FALSE(p.a.writer.is_closing()) << "a cancelled drain() leaves the stream as it was";
  p.a.writer.close();
  EXPECT_TRUE((co_await read_to_end(p.b.reader)) == big) << "the buffer goes out all the same";
  co_await close_both(p);
}

TEST_P(StreamConformance, ACancelledDrainLosesNothing) {
  run_bounded(cancel_drain(GetParam().make));
}

Coro<void> abort_while_writing(MakePair make) {
  StreamPair p = co_await make();
  const std::string big = pattern(kMoreThanBuffers);
  Task<void> draining = co_await write_with_pending_drain(p.a.writer, big);
  p.a.writer.abort();
  co_await draining;  // woken by the abort, as asyncio's connection_lost(None)
  co_await p.a.writer.wait_closed();
  const std::string got = co_await read_to_end(p.b.reader);
  EXPECT_LT(got.size(), big.size()) << "the buffer was dropped";
  EXPECT_TRUE(got == big.substr(0, got.size())) << "what came is a prefix";
  co_await close_both(p);
}

TEST_P(StreamConformance, AbortWhileWritingEndsAtOnce) {
  run_bounded(abort_while_writing(GetParam().make));
}

// The reader's own try and wait (try_fill, readable), which every kind's
// transport keeps (transport.hpp's contract): what comes is read, EOF ends
// it, and a read waiting for a quiet peer holds no buffer.
Coro<void> try_then_wait(MakePair make) {
  StreamPair p = co_await make();
  StreamReader& r = p.a.reader;
  Task<std::string> waiting = corio::create_task(r.readline());
  for (int i = 0; i < 3; ++i) co_await corio::sleep(0s);
  EXPECT_FALSE(waiting.done());
  EXPECT_EQ(corio::detail::buffer_storage(r), 0u) << "waiting for readability, not in a buffer";
  p.b.writer.write("ping\n");
  EXPECT_EQ(co_await waiting, "ping\n");
  p.b.writer.write("pong");
  p.b.writer.close();
  std::optional<std::size_t> got;
  std::size_t total = 0;
  do {
    while (!(got = r.try_fill())) co_await r.readable();
    total += *got;
  } while (*got > 0);
  EXPECT_EQ(total, 4u);
  EXPECT_EQ(r.buffered(), "pong");
  r.consume(4);
  EXPECT_TRUE(r.at_eof());
  co_await close_both(p);
}

TEST_P(StreamConformance, TryFillAndReadableReadWhatComesWithNoIdleBuffer) {
  run_bounded(try_then_wait(GetParam().make));
}

INSTANTIATE_TEST_SUITE_P(Kinds, StreamConformance,
                         ::testing::Values(Kind{"tcp", tcp_pair}, Kind{"unix", unix_pair},
                                           Kind{"tls", tls_pair}, Kind{"start_tls", start_tls_pair},
                                           Kind{"pipe", pipe_pair}),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace corio_net_test
