// connect_read_pipe / connect_write_pipe over real pipes and a regular
// file: lines and EOF, back-pressure through drain(), EPIPE without
// SIGPIPE, and the caller's fd left as it was (open, flags restored).
#include <fcntl.h>

#include <cstdio>

#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() { EXPECT_EQ(::pipe2(&read_end, O_CLOEXEC), 0); }
  ~Pipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
  void close_write() { ::close(std::exchange(write_end, -1)); }
  void close_read() { ::close(std::exchange(read_end, -1)); }
};

bool nonblocking(int fd) { return (::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0; }

Coro<void> lines_then_eof() {
  Pipe p;
  {
    StreamReader in = corio::connect_read_pipe(p.read_end);
    EXPECT_TRUE(nonblocking(p.read_end)) << "the description is shared with the duplicate";
    CO_ASSERT(::write(p.write_end, "one\ntwo\nthr", 11) == 11);
    EXPECT_EQ(co_await in.readline(), "one\n");
    EXPECT_EQ(co_await in.readline(), "two\n");
    p.close_write();
    EXPECT_EQ(co_await in.readline(), "thr");
    EXPECT_EQ(co_await in.readline(), "");
    EXPECT_TRUE(in.at_eof());
  }
  co_await corio::sleep(0ms);  // the dropped stream closes on the loop
  EXPECT_FALSE(nonblocking(p.read_end)) << "flags put back on close";
  EXPECT_GE(::fcntl(p.read_end, F_GETFD), 0) << "the caller's fd stays open";
}

TEST(PipeStreams, ReadLinesThenEofAndTheFdIsLeftAsItWas) { run_bounded(lines_then_eof()); }

// 4 MiB through a pipe of 64 KiB: write() buffers, drain() waits for the
// reader, and every byte arrives in order.
Coro<void> drain_until_read(StreamReader in, std::string* got) { *got = co_await in.read(); }

Coro<void> write_with_back_pressure() {
  Pipe p;
  StreamWriter out = corio::connect_write_pipe(p.write_end);
  p.close_write();  // the stream's duplicate is the only write end now
  StreamReader in = corio::connect_read_pipe(p.read_end);
  std::string got;
  Task<void> reader = corio::create_task(drain_until_read(in, &got));
  std::string data(4 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  out.write(data);
  co_await out.drain();
  out.close();
  co_await out.wait_closed();
  co_await reader;
  EXPECT_TRUE(got == data) << got.size() << " bytes of " << data.size();
}

TEST(PipeStreams, DrainWaitsForTheReaderAndEveryByteArrives) {
  run_bounded(write_with_back_pressure());
}

Coro<void> write_to_closed_reader() {
  Pipe p;
  StreamWriter out = corio::connect_write_pipe(p.write_end);
  p.close_read();
  out.write("nobody reads this");
  int err = 0;
  try {
    co_await out.drain();
  } catch (const std::system_error& e) {
    err = e.code().value();
  }
  EXPECT_EQ(err, EPIPE) << "an error on the stream, and the process lives";
}

TEST(PipeStreams, WritingToAPipeNobodyReadsIsEpipeNotSigpipe) {
  run_bounded(write_to_closed_reader());
}

// stdin redirected from a file: epoll refuses regular files, and their
// reads never wait, so the stream reads them straight through.
Coro<void> read_regular_file() {
  char path[] = "/tmp/corio-pipe-streams-XXXXXX";
  const int fd = ::mkstemp(path);
  CO_ASSERT(fd >= 0);
  ::unlink(path);
  const std::string text = "first line\nsecond line\n";
  CO_ASSERT(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  CO_ASSERT(::lseek(fd, 0, SEEK_SET) == 0);
  {
    StreamReader in = corio::connect_read_pipe(fd);
    EXPECT_EQ(co_await in.readline(), "first line\n");
    EXPECT_EQ(co_await in.read(), "second line\n");
    EXPECT_TRUE(in.at_eof());
  }
  ::close(fd);
}

TEST(PipeStreams, ARegularFileReadsWithoutThePoller) { run_bounded(read_regular_file()); }

}  // namespace
}  // namespace corio_net_test
