// corio::testing::Simulation's disk and threads: a host's to_thread jobs and
// file operations run on the simulation's thread in its rounds, and a host's
// disk faults (a full disk, short I/O, errors) sit in front of real files
// and replay from the seed.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>

#include <gtest/gtest.h>

#include <corio/file.hpp>
#include <corio/testing/simulation.hpp>
#include <corio/to_thread.hpp>

using corio::Coro;
using corio::testing::Simulation;

namespace {

// A host's to_thread jobs, and the file operations that go to its pool, run
// on the simulation's own thread in its rounds: in an order the seed
// decides, and taking no virtual time.
Coro<std::string> blocking_work(std::thread::id test_thread, std::string path) {
  const std::thread::id ran_on = co_await corio::to_thread([] { return std::this_thread::get_id(); });
  if (ran_on != test_thread) throw std::runtime_error("a to_thread job ran on another thread");
  corio::AsyncFile out = co_await corio::open_file(path, "w");
  co_await out.write("written in a simulation");
  co_await out.close();
  corio::AsyncFile in = co_await corio::open_file(path, "r");
  std::string back = co_await in.read_all();
  co_await in.close();
  co_return back;
}

TEST(Simulation, ToThreadAndFilesRunOnTheSimulationsThread) {
  const std::string path = ::testing::TempDir() + "corio_sim_file_" + std::to_string(::getpid());
  Simulation sim({.seed = 3});
  auto& worker = sim.host("worker");
  EXPECT_EQ(sim.run_until_complete(worker, blocking_work(std::this_thread::get_id(), path)),
            "written in a simulation");
  EXPECT_EQ(sim.time(), 0.0) << "a job takes no virtual time";
  std::remove(path.c_str());
}

// A host's disk faults, in front of real files.
std::string temp_path(const char* name) {
  return ::testing::TempDir() + "corio_sim_" + name + "_" + std::to_string(::getpid());
}

// Writes `bytes` to path, then fsyncs; the errno it failed with (0: none),
// and the file's size after.
Coro<int> write_then_fsync(std::string path, std::string bytes) {
  corio::AsyncFile f = co_await corio::open_file(path, "w");
  int err = 0;
  try {
    co_await f.write(std::move(bytes));
    co_await f.fsync();
  } catch (const std::system_error& e) {
    err = e.code().value();
  }
  co_await f.close();
  co_return err;
}

Coro<std::string> read_back(std::string path) {
  corio::AsyncFile f = co_await corio::open_file(path, "r");
  std::string all = co_await f.read_all();
  co_await f.close();
  co_return all;
}

TEST(Simulation, ADiskThatFillsUpTakesWhatFitsThenSaysEnospc) {
  const std::string path = temp_path("full");
  Simulation sim;
  auto& h = sim.host("h");
  sim.set_disk_faults(h, {.capacity = 10});
  EXPECT_EQ(sim.run_until_complete(h, write_then_fsync(path, std::string(25, 'x'))), ENOSPC);
  EXPECT_EQ(sim.run_until_complete(h, read_back(path)), std::string(10, 'x')) << "the short write's bytes";
  std::remove(path.c_str());
}

TEST(Simulation, ShortFileReadsAndWritesLoseNothing) {
  const std::string path = temp_path("short");
  Simulation sim;
  auto& h = sim.host("h");
  sim.set_disk_faults(h, {.short_io = 1.0});
  std::string bytes(300000, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 26);
  EXPECT_EQ(sim.run_until_complete(h, write_then_fsync(path, bytes)), 0);
  EXPECT_EQ(sim.run_until_complete(h, read_back(path)), bytes);
  std::remove(path.c_str());
}

TEST(Simulation, DiskErrorsReachTheCallerAsOSError) {
  const std::string path = temp_path("eio");
  Simulation sim;
  auto& h = sim.host("h");
  auto& other = sim.host("other");
  sim.set_disk_faults(h, {.fsync_error = 1.0});
  EXPECT_EQ(sim.run_until_complete(h, write_then_fsync(path, "data")), EIO) << "fsync";
  EXPECT_EQ(sim.run_until_complete(other, write_then_fsync(path, "data")), 0) << "another host's disk is sound";
  sim.set_disk_faults(h, {.write_error = 1.0});
  EXPECT_EQ(sim.run_until_complete(h, write_then_fsync(path, "data")), EIO) << "write";
  sim.set_disk_faults(h, {.read_error = 1.0});
  EXPECT_THROW(sim.run_until_complete(h, read_back(path)), corio::OSError);
  std::remove(path.c_str());
}

// Which of 40 writes fail, at a 50% chance each: the same for the same seed.
Coro<std::string> failures(std::string path) {
  corio::AsyncFile f = co_await corio::open_file(path, "w");
  std::string pattern;
  for (int i = 0; i < 40; ++i) {
    try {
      co_await f.write("x");
      pattern += '.';
    } catch (const corio::OSError&) {
      pattern += 'E';
    }
  }
  co_await f.close();
  co_return pattern;
}

std::string failure_pattern(std::uint64_t seed, const std::string& path) {
  Simulation sim({.seed = seed});
  auto& h = sim.host("h");
  sim.set_disk_faults(h, {.write_error = 0.5});
  return sim.run_until_complete(h, failures(path));
}

TEST(Simulation, DiskFaultsReplayFromTheSeed) {
  const std::string path = temp_path("seeded");
  const std::string first = failure_pattern(7, path);
  EXPECT_NE(first.find('E'), std::string::npos);
  EXPECT_NE(first.find('.'), std::string::npos);
  EXPECT_EQ(failure_pattern(7, path), first);
  EXPECT_NE(failure_pattern(8, path), first) << "another seed, other draws";
  std::remove(path.c_str());
}

}  // namespace
