// The cancellation sweep over files (AsyncFile). In a simulation a host's
// file operations run on the simulation's own thread (its default executor),
// in a seeded order, so each one is cancelled at every suspension point like
// any other operation; what is checked besides the sweep's own invariants:
// no descriptor is left open, and the bytes in the file are the ones
// written, in order.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include <corio/file.hpp>
#include <corio/testing/cancellation_sweep.hpp>

#include "testing/sim_support.hpp"

using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepReport;
using corio::testing::SweepRun;
using corio::testing::cancellation_sweep;

namespace {

// This process's open descriptors: a simulation opens none of its own for
// files, so a cancelled open or close that leaks one shows here.
std::size_t open_fds() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
  }
  return n;
}

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "corio_sweep_" + name + "_" + std::to_string(::getpid());
}

void write_file(const std::string& path, const char* contents) {
  if (std::FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(contents, f);
    std::fclose(f);
  }
}

// The sweep of S's `op` on a file S opens before it; `then` is the next
// operation on it.
template <class S>
void sweep_open_file(Coro<void> (S::*op)(), Coro<void> (S::*then)(), int min_points) {
  const SweepReport report = cancellation_sweep([&](Simulation& sim) {
    auto s = std::make_shared<S>();
    Simulation::Host& h = sim.host("disk");
    h.spawn(s->open());
    return SweepRun{&h, [s, op] { return (s.get()->*op)(); },
                    [s, then] { return (s.get()->*then)(); }};
  });
  sim_support::expect_clean(report, min_points);
}

// Open, read whole, close: cancelled anywhere, the descriptor it opened is
// closed all the same, and the next open reads the file.
struct Reading {
  std::string path = temp_path("read");
  std::size_t fds = open_fds();
  Reading() { write_file(path, "contents"); }
  ~Reading() { std::remove(path.c_str()); }
  Coro<void> read_once() {
    corio::AsyncFile f = co_await corio::open_file(path, "r");
    const std::string all = co_await f.read_all();
    co_await f.close();
    if (all != "contents") throw std::runtime_error("read '" + all + "'");
  }
  Coro<void> then() {
    co_await read_once();
    if (open_fds() != fds) {
      throw std::runtime_error(std::to_string(open_fds() - fds) + " descriptors left open");
    }
  }
};

TEST(SweepFile, OpenReadAllClose) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto r = std::make_shared<Reading>();
    return SweepRun{&sim.host("disk"), [r] { return r->read_once(); }, [r] { return r->then(); }};
  });
  sim_support::expect_clean(report, 3);
}

// A write and an fsync on a file that stays open: cancelled anywhere, the
// bytes the write took are in the file before the next write's, never after
// or over them.
struct Writing {
  std::string path = temp_path("write");
  std::optional<corio::AsyncFile> file;
  ~Writing() { std::remove(path.c_str()); }
  Coro<void> open() {
    corio::AsyncFile f = co_await corio::open_file(path, "w+");
    file.emplace(std::move(f));
  }
  Coro<void> write_and_sync() {
    co_await file->write("abc");
    co_await file->fsync();
  }
  Coro<void> then() {
    co_await file->write("def");
    const std::string all = co_await file->pread(0, 100);
    co_await file->close();
    if (all != "abcdef" && all != "def") throw std::runtime_error("the file holds '" + all + "'");
  }
};

TEST(SweepFile, WriteAndFsyncOnAnOpenFile) {
  sweep_open_file(&Writing::write_and_sync, &Writing::then, 2);
}

// read(n), pwrite and pread on a file open for update: cancelled anywhere,
// the position moved by the whole read or not at all, and the pwrite's
// bytes are all in the file or none of them.
struct Updating {
  static constexpr std::string_view kContents = "0123456789";
  std::string path = temp_path("update");
  std::optional<corio::AsyncFile> file;
  Updating() { write_file(path, kContents.data()); }
  ~Updating() { std::remove(path.c_str()); }
  Coro<void> open() {
    corio::AsyncFile f = co_await corio::open_file(path, "r+");
    file.emplace(std::move(f));
  }
  Coro<void> read_and_patch() {
    const std::string head = co_await file->read(4);
    co_await file->pwrite(8, "ZZ");
    const std::string tail = co_await file->pread(6, 4);
    if (head != "0123" || tail != "67ZZ")
      throw std::runtime_error("read '" + head + "', '" + tail + "'");
  }
  Coro<void> then() {
    const std::string rest = co_await file->read(-1);
    const std::string all = co_await file->pread(0, 100);
    co_await file->close();
    if (all != kContents && all != "01234567ZZ")
      throw std::runtime_error("the file holds '" + all + "'");
    if (rest != all && rest != all.substr(4))
      throw std::runtime_error("the position moved to '" + rest + "'");
  }
};

TEST(SweepFile, ReadPwritePreadOnAnOpenFile) {
  sweep_open_file(&Updating::read_and_patch, &Updating::then, 3);
}

}  // namespace
