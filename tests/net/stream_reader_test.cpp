// StreamReader against a raw peer socket: read(n) and read() to EOF,
// readexactly, readline and readuntil with asyncio's limit behaviour,
// at_eof, one reader at a time, and cancellation losing nothing.
#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

Coro<void> read_to_eof() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "abc");
  co_await raw_send(p.peer, "def");
  p.peer.shutdown(SHUT_WR);
  EXPECT_EQ(co_await p.reader.read(), "abcdef");
  EXPECT_TRUE(p.reader.at_eof());
  EXPECT_EQ(co_await p.reader.read(), "");
  EXPECT_EQ(co_await p.reader.read(10), "");
}

TEST(StreamReader, ReadAllUntilEof) { run_bounded(read_to_eof()); }

Coro<void> read_at_most_n() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "hello world");
  EXPECT_EQ(co_await p.reader.read(2), "he");
  EXPECT_EQ(co_await p.reader.read(100), "llo world") << "returns what is there, without EOF";
  EXPECT_EQ(co_await p.reader.read(0), "");
  EXPECT_FALSE(p.reader.at_eof());
}

TEST(StreamReader, ReadNReturnsWhatIsThere) { run_bounded(read_at_most_n()); }

Coro<void> send_later(Socket* s, std::string data) {
  co_await corio::sleep(5ms);
  co_await raw_send(*s, data);
}

Coro<void> read_exactly_across_sends() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "ab");
  Task<void> rest = corio::create_task(send_later(&p.peer, "cdef"));
  EXPECT_EQ(co_await p.reader.readexactly(5), "abcde");
  co_await rest;
  EXPECT_EQ(co_await p.reader.read(10), "f");
  EXPECT_EQ(co_await p.reader.readexactly(0), "");
}

TEST(StreamReader, ReadExactlyWaitsForEveryByte) { run_bounded(read_exactly_across_sends()); }

Coro<void> read_exactly_hits_eof() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "abc");
  p.peer.shutdown(SHUT_WR);
  try {
    co_await p.reader.readexactly(5);
    ADD_FAILURE() << "expected IncompleteReadError";
  } catch (const corio::IncompleteReadError& e) {
    EXPECT_EQ(e.partial, "abc");
    EXPECT_EQ(e.expected, std::optional<std::size_t>(5));
    EXPECT_STREQ(e.what(), "3 bytes read on a total of 5 expected bytes");
  }
  EXPECT_TRUE(p.reader.at_eof()) << "the partial bytes were taken";
}

TEST(StreamReader, ReadExactlyAtEofRaisesIncompleteReadError) {
  run_bounded(read_exactly_hits_eof());
}

Coro<void> lines() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "line1\nline2\npartial");
  p.peer.shutdown(SHUT_WR);
  EXPECT_EQ(co_await p.reader.readline(), "line1\n");
  EXPECT_EQ(co_await p.reader.readline(), "line2\n");
  EXPECT_FALSE(p.reader.at_eof());
  EXPECT_EQ(co_await p.reader.readline(), "partial") << "at EOF, the partial line";
  EXPECT_TRUE(p.reader.at_eof());
  EXPECT_EQ(co_await p.reader.readline(), "");
}

TEST(StreamReader, ReadlineAndThePartialLastLine) { run_bounded(lines()); }

// asyncio: a separator found beyond the limit drops the line through it.
Coro<void> readline_found_beyond_limit() {
  RawPeer p = co_await connect_to_raw_peer(16);
  co_await raw_send(p.peer, std::string(40, 'x') + "\nnext\n");
  try {
    co_await p.reader.readline();
    ADD_FAILURE() << "expected LimitOverrunError";
  } catch (const corio::LimitOverrunError& e) {
    EXPECT_EQ(e.consumed, 40u);
  }
  EXPECT_EQ(co_await p.reader.readline(), "next\n");
}

TEST(StreamReader, ReadlinePastTheLimitDropsTheLongLine) {
  run_bounded(readline_found_beyond_limit());
}

// asyncio: no separator within the limit drops everything buffered.
Coro<void> readline_not_found_within_limit() {
  RawPeer p = co_await connect_to_raw_peer(16);
  co_await raw_send(p.peer, std::string(40, 'y'));
  try {
    co_await p.reader.readline();
    ADD_FAILURE() << "expected LimitOverrunError";
  } catch (const corio::ValueError& e) {  // what asyncio's readline raises
    const auto* overrun = dynamic_cast<const corio::LimitOverrunError*>(&e);
    CO_ASSERT(overrun != nullptr);
    EXPECT_EQ(overrun->consumed, 40u);
  }
  co_await raw_send(p.peer, "ok\n");
  EXPECT_EQ(co_await p.reader.readline(), "ok\n") << "the buffer was cleared";
}

TEST(StreamReader, ReadlineWithoutSeparatorWithinLimitClearsTheBuffer) {
  run_bounded(readline_not_found_within_limit());
}

Coro<void> read_until() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "a::b::c");
  p.peer.shutdown(SHUT_WR);
  EXPECT_EQ(co_await p.reader.readuntil("::"), "a::");
  EXPECT_EQ(co_await p.reader.readuntil("::"), "b::");
  try {
    co_await p.reader.readuntil("::");
    ADD_FAILURE() << "expected IncompleteReadError";
  } catch (const corio::IncompleteReadError& e) {
    EXPECT_EQ(e.partial, "c");
    EXPECT_FALSE(e.expected.has_value());
  }
  EXPECT_TRUE(p.reader.at_eof());
  EXPECT_THROW(co_await p.reader.readuntil(""), corio::ValueError);
}

TEST(StreamReader, ReaduntilSeparatorsAndEof) { run_bounded(read_until()); }

// Unlike readline, readuntil leaves the data buffered on LimitOverrunError.
Coro<void> readuntil_overrun_keeps_data() {
  RawPeer p = co_await connect_to_raw_peer(16);
  co_await raw_send(p.peer, std::string(30, 'z') + "END");
  try {
    co_await p.reader.readuntil("END");
    ADD_FAILURE() << "expected LimitOverrunError";
  } catch (const corio::LimitOverrunError& e) {
    EXPECT_EQ(e.consumed, 30u);
  }
  EXPECT_EQ(co_await p.reader.read(100), std::string(30, 'z') + "END");
}

TEST(StreamReader, ReaduntilOverrunKeepsTheData) { run_bounded(readuntil_overrun_keeps_data()); }

Coro<void> at_eof_needs_an_empty_buffer() {
  RawPeer p = co_await connect_to_raw_peer();
  EXPECT_FALSE(p.reader.at_eof());
  co_await raw_send(p.peer, "x\ny");
  p.peer.shutdown(SHUT_WR);
  EXPECT_EQ(co_await p.reader.readline(), "x\n");
  EXPECT_FALSE(p.reader.at_eof()) << "'y' is still to be read";
  EXPECT_EQ(co_await p.reader.read(1), "y");
  EXPECT_EQ(co_await p.reader.read(1), "");
  EXPECT_TRUE(p.reader.at_eof());
}

TEST(StreamReader, AtEofOnlyOnceTheBufferIsEmpty) { run_bounded(at_eof_needs_an_empty_buffer()); }

// The buffered interface: fill_buffer() appends what came, buffered() shows
// it in place, consume() drops a prefix, and the normal reads see the rest.
Coro<void> buffered_access() {
  RawPeer p = co_await connect_to_raw_peer();
  EXPECT_EQ(p.reader.buffered(), "");
  co_await raw_send(p.peer, "GET / HTTP/1.1\r\n");
  EXPECT_EQ(co_await p.reader.fill_buffer(), 16u);
  EXPECT_EQ(p.reader.buffered(), "GET / HTTP/1.1\r\n");
  p.reader.consume(4);
  EXPECT_EQ(p.reader.buffered(), "/ HTTP/1.1\r\n");
  Task<void> rest = corio::create_task(send_later(&p.peer, "Host: x\r\n"));
  EXPECT_EQ(co_await p.reader.fill_buffer(), 9u) << "waits for the next bytes";
  co_await rest;
  EXPECT_EQ(p.reader.buffered(), "/ HTTP/1.1\r\nHost: x\r\n");
  EXPECT_EQ(co_await p.reader.readline(), "/ HTTP/1.1\r\n");
  p.reader.consume(1000);  // more than there is: all of it
  EXPECT_EQ(p.reader.buffered(), "");
  p.peer.shutdown(SHUT_WR);
  EXPECT_EQ(co_await p.reader.fill_buffer(), 0u) << "EOF";
  EXPECT_EQ(co_await p.reader.fill_buffer(), 0u) << "and stays EOF";
  EXPECT_TRUE(p.reader.at_eof());
}

TEST(StreamReader, BufferedAccessFillsInPlaceAndConsumes) { run_bounded(buffered_access()); }

Coro<void> read_into(StreamReader reader, std::string* out) { *out = co_await reader.read(100); }

Coro<void> one_reader_at_a_time() {
  RawPeer p = co_await connect_to_raw_peer();
  std::string got;
  Task<void> first = corio::create_task(read_into(p.reader, &got));
  co_await corio::sleep(1ms);
  EXPECT_THROW(co_await p.reader.read(), corio::RuntimeError);
  co_await raw_send(p.peer, "for the first");
  co_await first;
  EXPECT_EQ(got, "for the first");
}

TEST(StreamReader, TwoReadersAtOnceIsAnError) { run_bounded(one_reader_at_a_time()); }

Coro<void> cancelled_read_loses_nothing() {
  RawPeer p = co_await connect_to_raw_peer();
  co_await raw_send(p.peer, "par");
  Task<std::string> waiting = corio::create_task(p.reader.readexactly(6));  // 3 of 6 there
  co_await corio::sleep(1ms);
  waiting.cancel();
  EXPECT_THROW(co_await waiting, corio::CancelledError);
  co_await raw_send(p.peer, "tial");
  EXPECT_EQ(co_await p.reader.readexactly(7), "partial");
}

TEST(StreamReader, CancellingAReadLosesNoBytes) { run_bounded(cancelled_read_loses_nothing()); }

// Our own close() under a waiting read: the read sees EOF (asyncio's
// connection_lost(None)), not an error.
Coro<void> close_under_read() {
  RawPeer p = co_await connect_to_raw_peer();
  std::string got = "unchanged";
  Task<void> reader = corio::create_task(read_into(p.reader, &got));
  co_await corio::sleep(1ms);
  p.writer.close();
  co_await reader;
  EXPECT_EQ(got, "");
  EXPECT_TRUE(p.reader.at_eof());
}

TEST(StreamReader, ClosingTheWriterEndsAWaitingReadWithEof) { run_bounded(close_under_read()); }

}  // namespace
}  // namespace corio_net_test
