// corio::open_file / AsyncFile (file.hpp): round trips in every mode, the
// errors (ENOENT, EISDIR, EEXIST, EBADF, bad modes, closed files),
// cancellation mid-read on a FIFO (the bytes reach the next read, close waits
// for the pool), a streamed 8 MiB file, concurrent preads.
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>

#include "net/file_support.hpp"

namespace corio_net_test {
namespace {

using corio::AsyncFile;
using corio::open_file;

template <class A>
Coro<std::string> error_of(A aw) {
  try {
    co_await std::move(aw);
  } catch (const corio::OSError& e) {
    co_return "OSError " + std::to_string(e.code().value()) + " " + e.filename();
  } catch (const corio::ValueError& e) {
    co_return std::string("ValueError ") + e.what();
  }
  co_return "no error";
}

std::string os_error(int err, const std::string& path) {
  return "OSError " + std::to_string(err) + " " + path;
}

Coro<void> round_trip(std::string p) {
  AsyncFile w = co_await open_file(p, "wb");
  EXPECT_EQ(w.path(), p);
  EXPECT_EQ(co_await w.write("hello, "), 7u);
  EXPECT_EQ(co_await w.write("file"), 4u);
  co_await w.fsync();
  co_await w.close();
  EXPECT_TRUE(w.closed());
  co_await w.close();  // again: nothing, as Python

  AsyncFile r = co_await open_file(p);
  EXPECT_EQ(co_await r.read(5), "hello");
  EXPECT_EQ(co_await r.read_all(), ", file");
  EXPECT_EQ(co_await r.read(10), "") << "end of file";
  EXPECT_EQ(co_await r.pread(7, 100), "file") << "pread does not care about the position";
  co_await r.close();
}
TEST_F(FileTest, WriteThenReadBack) { run_bounded(round_trip(path("a.txt"))); }

Coro<void> modes(std::string p) {
  AsyncFile x = co_await open_file(p, "x");
  co_await x.write("one");
  co_await x.close();
  EXPECT_EQ(co_await error_of(open_file(p, "xb")), os_error(EEXIST, p));

  AsyncFile a = co_await open_file(p, "a");
  co_await a.write("+two");
  co_await a.close();

  AsyncFile rw = co_await open_file(p, "r+b");
  EXPECT_EQ(co_await rw.read_all(), "one+two") << "append wrote at the end";
  co_await rw.pwrite(0, "ONE");
  co_await rw.write("!");  // the position is at the end after read_all
  EXPECT_EQ(co_await rw.pread(0, 100), "ONE+two!");
  co_await rw.close();

  AsyncFile w = co_await open_file(p, "w+");
  EXPECT_EQ(co_await w.read_all(), "") << "w truncates";
  co_await w.write("new");
  EXPECT_EQ(co_await w.pread(0, 3), "new") << "+ reads too";
  co_await w.close();
}
TEST_F(FileTest, ModesCreateTruncateAppendAndExclusive) { run_bounded(modes(path("m.txt"))); }

Coro<void> bad_modes(std::string p) {
  for (const char* m : {"", "rw", "rr", "q", "rt", "r++", "rbb", "+", "b", "wx"}) {
    const std::string what = co_await error_of(open_file(p, m));
    EXPECT_EQ(what.rfind("ValueError invalid mode: '" + std::string(m) + "'", 0), 0u) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(p)) << "no mode that failed created the file";
}
TEST_F(FileTest, BadModesAreValueErrors) { run_bounded(bad_modes(path("never"))); }

Coro<void> os_errors(std::string missing, std::string dir, std::string p) {
  EXPECT_EQ(co_await error_of(open_file(missing)), os_error(ENOENT, missing));
  EXPECT_EQ(co_await error_of(open_file(missing, "r+")), os_error(ENOENT, missing));
  EXPECT_EQ(co_await error_of(open_file(dir)), os_error(EISDIR, dir));
  EXPECT_EQ(co_await error_of(open_file(dir, "w")), os_error(EISDIR, dir));
  try {
    co_await open_file(missing);
    ADD_FAILURE() << "no error";
  } catch (const std::system_error& e) {  // an OSError is a system_error
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }

  AsyncFile r = co_await open_file(p, "w");
  co_await r.close();
  r = co_await open_file(p, "r");
  EXPECT_EQ(co_await error_of(r.write("x")), os_error(EBADF, p)) << "not open for writing";
  co_await r.close();
  EXPECT_EQ(co_await error_of(r.read()), "ValueError I/O operation on closed file");
  EXPECT_EQ(co_await error_of(r.pread(0, 1)), "ValueError I/O operation on closed file");
  EXPECT_EQ(co_await error_of(r.fsync()), "ValueError I/O operation on closed file");
  EXPECT_THROW(r.fileno(), corio::ValueError);
}
TEST_F(FileTest, OsErrorsCarryErrnoAndPath) {
  run_bounded(os_errors(path("missing"), dir_.string(), path("ro")));
}

// A FIFO whose write end the test holds: a read on it blocks on the pool until
// the test writes, so the read is surely still running when it is cancelled.
struct Fifo {
  explicit Fifo(const std::string& p) {
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    writer = ::open(p.c_str(), O_RDWR | O_CLOEXEC);  // RDWR: open does not wait for a reader
    EXPECT_GE(writer, 0);
  }
  ~Fifo() { ::close(writer); }
  void put(const std::string& s) const { EXPECT_EQ(::write(writer, s.data(), s.size()), ssize_t(s.size())); }
  int writer = -1;
};

Coro<void> cancelled_read(std::string p) {
  Fifo fifo(p);
  AsyncFile f = co_await open_file(p, "rb");
  Task<std::string> reading = corio::create_task(f.read(10));
  co_await corio::sleep(0ms);  // on the pool now, blocked in read(2)
  reading.cancel();
  EXPECT_THROW(co_await reading, corio::CancelledError);

  // The next read queues behind the cancelled one, which still owns the position.
  Task<std::string> next = corio::create_task(f.read(14));
  for (int i = 0; i < 3; ++i) co_await corio::sleep(0ms);
  EXPECT_FALSE(next.done()) << "the cancelled read is still on the pool";
  fifo.put("0123456789");  // ends the cancelled read: its bytes go to the next read
  fifo.put("abcd");
  EXPECT_EQ(co_await next, "0123456789abcd") << "nothing lost, nothing reordered";

  // close() waits for a cancelled read still on the pool, then closes.
  Task<std::string> again = corio::create_task(f.read(3));
  co_await corio::sleep(0ms);
  again.cancel();
  EXPECT_THROW(co_await again, corio::CancelledError);
  Task<void> closing = corio::create_task(f.close());
  for (int i = 0; i < 3; ++i) co_await corio::sleep(0ms);
  EXPECT_FALSE(closing.done());
  EXPECT_TRUE(f.closed()) << "no new operation once close() began";
  fifo.put("xyz");
  co_await closing;
}
TEST_F(FileTest, CancelledReadKeepsItsBytesForTheNextReadAndCloseWaits) {
  run_bounded(cancelled_read(path("fifo")));
}

Coro<void> cancelled_pread_and_open(std::string p) {
  AsyncFile w = co_await open_file(p, "w");
  co_await w.write(pattern(0, 4096));
  Task<std::string> reading = corio::create_task(w.pread(0, 10));
  co_await corio::sleep(0ms);
  reading.cancel();
  EXPECT_THROW(co_await reading, corio::CancelledError);
  Task<AsyncFile> opening = corio::create_task(open_file(p, "r"));
  co_await corio::sleep(0ms);
  opening.cancel();
  EXPECT_THROW(co_await opening, corio::CancelledError);
  co_await w.write("tail");  // still usable
  co_await w.close();
}
TEST_F(FileTest, CancelledPreadAndOpenLeaveNothingOpen) {
  const auto fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), {});
  };
  const auto before = fds();
  // run() waits for the pool's calls before it returns: a dropped open has closed its fd.
  run_bounded(cancelled_pread_and_open(path("p")));
  EXPECT_EQ(fds(), before);
  EXPECT_EQ(std::filesystem::file_size(path("p")), 4100u);
}

Coro<void> write_after_cancelled_read(std::string p) {
  AsyncFile w = co_await open_file(p, "w");
  co_await w.write("0123456789");
  co_await w.close();
  AsyncFile f = co_await open_file(p, "r+");
  GatedExecutor& g = gate_the_pool();

  Task<std::string> reading = corio::create_task(f.read(4));
  co_await corio::create_task(cancel_after_first_step(&reading));
  EXPECT_EQ(g.held(), native_files() ? 0u : 1u) << "on the pool unless in the ring";
  EXPECT_THROW(co_await reading, corio::CancelledError);
  g.open();  // the read runs (or ran) with its awaiter gone: "0123" waits for the next read
  EXPECT_EQ(co_await f.write("AB"), 2u) << "written where the read left off for its reader: at 0";
  EXPECT_EQ(co_await f.read(2), "23");
  EXPECT_EQ(co_await f.pread(0, 100), "AB23456789");
  co_await f.close();
}
TEST_F(FileTest, WriteAfterACancelledReadGoesWhereTheReaderWas) {
  run_bounded(write_after_cancelled_read(path("rw")));
}

constexpr std::size_t kBig = 8 << 20;

Coro<void> streamed(std::string p) {
  AsyncFile w = co_await open_file(p, "wb");
  for (std::size_t off = 0; off < kBig; off += 1 << 20) co_await w.write(pattern(off, 1 << 20));
  co_await w.close();

  AsyncFile r = co_await open_file(p, "rb");
  constexpr std::size_t kChunk = 192 * 1024;  // not a divisor of the size: a short last chunk
  std::size_t total = 0, chunks = 0;
  for (;;) {
    std::string chunk = co_await r.read(kChunk);
    if (chunk.empty()) break;
    CO_ASSERT(chunk.size() <= kChunk);
    CO_ASSERT(chunk.capacity() <= 2 * kChunk);  // memory follows the chunk, not the file
    CO_ASSERT(chunk == pattern(total, chunk.size()));
    total += chunk.size();
    ++chunks;
  }
  EXPECT_EQ(total, kBig);
  EXPECT_EQ(chunks, (kBig + kChunk - 1) / kChunk);
  co_await r.close();
}
TEST_F(FileTest, LargeFileStreamsInBoundedChunks) { run_bounded(streamed(path("big"))); }

Coro<void> concurrent_preads(std::string p) {
  constexpr std::size_t kSize = 1 << 20, kBlock = 4096;
  AsyncFile w = co_await open_file(p, "w");
  co_await w.write(pattern(0, kSize));
  co_await w.close();

  AsyncFile r = co_await open_file(p);
  std::mt19937_64 rng(19);
  std::vector<std::uint64_t> offsets;
  std::vector<Task<std::string>> reads;
  for (int i = 0; i < 64; ++i) {
    offsets.push_back(rng() % (kSize - kBlock));
    reads.push_back(corio::create_task(r.pread(offsets.back(), kBlock)));
  }
  reads.push_back(corio::create_task(r.pread(kSize - 100, kBlock)));  // short at end of file
  std::vector<std::string> got = co_await corio::gather(std::move(reads));
  for (std::size_t i = 0; i < offsets.size(); ++i) EXPECT_EQ(got[i], pattern(offsets[i], kBlock)) << i;
  EXPECT_EQ(got.back(), pattern(kSize - 100, 100));
  EXPECT_EQ(co_await r.read(3), pattern(0, 3)) << "preads leave the position alone";
  co_await r.close();
}
TEST_F(FileTest, ConcurrentPreadsEachGetTheirBlock) { run_bounded(concurrent_preads(path("c"))); }

}  // namespace
}  // namespace corio_net_test
