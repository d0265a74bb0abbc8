// AsyncFile's native path (file.hpp: regular files on io_uring go to the
// ring, not the pool). Each test runs on either backend (CI runs the suite
// under CORIO_BACKEND=io_uring too) and asserts what that backend does: the
// ring's jobs complete while the pool is held; a read cancelled in flight
// keeps its bytes; a 3 MiB read whole; write, fsync and read back; pread and
// pwrite at once; a loop torn down with jobs in flight leaves nothing open.
#include <fcntl.h>

#include <random>

#include "net/file_support.hpp"

namespace corio_net_test {
namespace {

using corio::AsyncFile;
using corio::open_file;

Coro<void> pool_held(std::string p) {
  AsyncFile f = co_await open_file(p, "w+");  // before the gate: open_file is the pool's
  GatedExecutor& g = gate_the_pool();
  Task<std::size_t> writing = corio::create_task(f.write(pattern(0, 8192)));
  Task<std::string> reading = corio::create_task(f.pread(100, 50));
  if (native_files()) {
    EXPECT_EQ(co_await writing, 8192u) << "done while the pool holds every job";
    co_await f.fsync();
    EXPECT_EQ(co_await f.pread(4000, 10), pattern(4000, 10));
    EXPECT_EQ(co_await f.pwrite(8192, "tail"), 4u);
    EXPECT_EQ(co_await f.read(), "tail") << "the position is after the write";
    (void)co_await reading;  // raced the write: either bytes will do
    EXPECT_EQ(g.held(), 0u) << "no job went to the pool";
  } else {
    for (int i = 0; i < 5; ++i) co_await corio::sleep(0ms);
    EXPECT_FALSE(writing.done()) << "epoll: file jobs are the pool's";
    EXPECT_EQ(g.held(), 2u);
    g.open();
    EXPECT_EQ(co_await writing, 8192u);
    (void)co_await reading;
  }
  g.open();  // close() is the pool's on either backend
  co_await f.close();
}
TEST_F(FileTest, RegularFileJobsSkipThePoolOnIoUring) { run_bounded(pool_held(path("n"))); }

Coro<void> cancelled_in_flight(std::string p) {
  AsyncFile w = co_await open_file(p, "w");
  co_await w.write("0123456789abcdef");
  co_await w.close();
  AsyncFile f = co_await open_file(p, "r");
  for (std::int64_t n : {4, 100}) {
    Task<std::string> reading = corio::create_task(f.read(n));
    co_await corio::create_task(cancel_after_first_step(&reading));
    EXPECT_THROW(co_await reading, corio::CancelledError);
    // Positional: it runs after the cancelled read's job, which holds the position until done.
    co_await f.fsync();
  }
  // The first read's 4 bytes, then the second's 12: nothing lost, nothing reordered.
  EXPECT_EQ(co_await f.read(6), "012345");
  EXPECT_EQ(co_await f.read(), "6789abcdef");
  EXPECT_EQ(co_await f.read(), "") << "at the end";

  // A cancelled write is written, and the next write goes after it.
  AsyncFile a = co_await open_file(p, "r+");
  Task<std::size_t> writing = corio::create_task(a.write("ABCD"));
  co_await corio::create_task(cancel_after_first_step(&writing));
  EXPECT_THROW(co_await writing, corio::CancelledError);
  EXPECT_EQ(co_await a.write("EF"), 2u);
  EXPECT_EQ(co_await a.pread(0, 8), "ABCDEF67");
  co_await a.close();
  co_await f.close();
}
TEST_F(FileTest, ReadsAndWritesCancelledInFlightLoseNothing) {
  run_bounded(cancelled_in_flight(path("c")));
}

constexpr std::size_t kLarge = 3 << 20;

Coro<void> large(std::string p) {
  AsyncFile w = co_await open_file(p, "w+");
  EXPECT_EQ(co_await w.write(pattern(0, kLarge)), kLarge) << "one 3 MiB write";
  co_await w.fsync();
  EXPECT_EQ(co_await w.pread(0, kLarge + 10), pattern(0, kLarge)) << "one 3 MiB pread";
  co_await w.close();

  AsyncFile r = co_await open_file(p, "rb");
  EXPECT_EQ(co_await r.read(5), pattern(0, 5));
  std::string rest = co_await r.read_all();
  CO_ASSERT(rest.size() == kLarge - 5);
  EXPECT_TRUE(rest == pattern(5, kLarge - 5));
  EXPECT_LE(rest.capacity(), kLarge + 64) << "the buffer was what was left of the file";
  co_await r.close();
}
TEST_F(FileTest, ThreeMebibytesWrittenAndReadWhole) { run_bounded(large(path("l"))); }

Coro<void> at_once(std::string p) {
  constexpr std::size_t kBlock = 4096, kBlocks = 64;
  AsyncFile f = co_await open_file(p, "w+");
  std::vector<Task<std::size_t>> writes;
  for (std::size_t i = kBlocks; i-- > 0;) {  // last block first: the file grows out of order
    writes.push_back(corio::create_task(f.pwrite(i * kBlock, pattern(i * kBlock, kBlock))));
  }
  for (std::size_t n : co_await corio::gather(std::move(writes))) EXPECT_EQ(n, kBlock);
  co_await f.fsync();

  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> offsets;
  std::vector<Task<std::string>> reads;
  for (int i = 0; i < 64; ++i) {
    offsets.push_back(rng() % (kBlocks * kBlock - 100));
    reads.push_back(corio::create_task(f.pread(offsets.back(), 100)));
  }
  Task<std::string> positional = corio::create_task(f.read(kBlock));  // among them, from 0
  std::vector<std::string> got = co_await corio::gather(std::move(reads));
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], pattern(offsets[i], 100)) << i;
  EXPECT_EQ(co_await positional, pattern(0, kBlock));
  co_await f.close();
}
TEST_F(FileTest, PreadsAndPwritesRunAtOnce) { run_bounded(at_once(path("o"))); }

// Opens p, starts jobs of every kind, lets a poll submit them, starts more
// (queued, not submitted yet), then waits for ever: the loop closes with all
// of them in flight.
Coro<void> jobs_in_flight(std::string p, int* fd, corio::Event* started) {
  AsyncFile f = co_await open_file(p, "r+");
  *fd = f.fileno();
  std::vector<Task<std::string>> reads;
  std::vector<Task<std::size_t>> writes;
  for (int round = 0; round < 2; ++round) {
    for (std::uint64_t i = 0; i < 4; ++i)
      reads.push_back(corio::create_task(f.pread(i << 20, 1 << 20)));
    reads.push_back(corio::create_task(f.read()));
    writes.push_back(corio::create_task(f.pwrite(5 << 20, pattern(0, 1 << 20))));
    Task<void> syncing = corio::create_task(f.fsync());
    if (round == 0) (void)co_await reads.front();  // a poll submitted the whole first round
  }
  started->set();
  corio::Event never;
  co_await never.wait();
}

Coro<void> wait_on(corio::Event* e) { co_await e->wait(); }

TEST_F(FileTest, LoopClosedWithJobsInFlightLetsGoOfTheFile) {
  {
    std::FILE* out = std::fopen(path("t").c_str(), "wb");
    ASSERT_NE(out, nullptr);
    const std::string block = pattern(0, 1 << 20);
    for (int i = 0; i < 4; ++i)
      ASSERT_EQ(std::fwrite(block.data(), 1, block.size(), out), block.size());
    std::fclose(out);
  }
  int fd = -1;
  int reports = 0;
  {
    corio::EventLoop loop;
    loop.set_exception_handler(
        [&reports](corio::EventLoop&, const corio::ExceptionContext&) { ++reports; });
    corio::Event started;
    Task<void> body = loop.create_task(jobs_in_flight(path("t"), &fd, &started));
    loop.run_until_complete(wait_on(&started));
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::fcntl(fd, F_GETFD), FD_CLOEXEC) << "open while the jobs are in flight";
  }  // close(): pending tasks destroyed; the backend waits for the ring, then discards
  EXPECT_GT(reports, 0) << "the pending tasks were reported";
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "every job let go of the file: it is closed";
}

}  // namespace
}  // namespace corio_net_test
