// Helpers shared by the AsyncFile tests (file_test.cpp, file_native_test.cpp):
// a fresh directory per test, a byte pattern, a default executor that holds
// its jobs, and which path the running loop's file jobs take.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "net/net_support.hpp"
#include <corio/file.hpp>

namespace corio_net_test {

// A fresh directory per test, removed with it.
class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        std::filesystem::path(::testing::TempDir()) / (std::string("corio_file_") + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// Byte i of the test pattern: not periodic at any power of two.
inline char pattern_at(std::uint64_t i) { return char((i * 2654435761u) >> 13); }
inline std::string pattern(std::uint64_t from, std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = pattern_at(from + i);
  return s;
}

// The loop's default executor, holding its jobs until open(): a job on a
// regular file is then surely still "on the pool" when its awaiter is
// cancelled, and a job that completes anyway did not go through the pool.
class GatedExecutor final : public corio::Executor {
 public:
  void submit(std::unique_ptr<corio::ExecutorJob> job) override {
    if (open_) {
      pool_.submit(std::move(job));
    } else {
      held_.push_back(std::move(job));
    }
  }
  void shutdown(bool wait) override { pool_.shutdown(wait); }
  void open() {
    open_ = true;
    for (auto& job : held_) pool_.submit(std::move(job));
    held_.clear();
  }
  std::size_t held() const { return held_.size(); }

 private:
  bool open_ = false;  // loop thread only, as submit()
  std::vector<std::unique_ptr<corio::ExecutorJob>> held_;
  corio::ThreadPoolExecutor pool_{2};
};

// Installs a GatedExecutor as the running loop's default executor.
inline GatedExecutor& gate_the_pool() {
  auto gate = std::make_unique<GatedExecutor>();
  GatedExecutor& g = *gate;
  corio::get_running_loop().set_default_executor(std::move(gate));
  return g;
}

// Whether regular files' reads and writes go to the ring (file.hpp): the
// loop runs on io_uring (CORIO_BACKEND=io_uring, as CI's io_uring pass).
inline bool native_files() {
  return std::strcmp(corio::get_running_loop().backend_name(), "io_uring") == 0;
}

// Cancels *t. Created right after t, it runs in the same batch just after
// t's first step, which starts its job without yielding (an uncontended
// Lock is taken at once): the job is surely started and not yet done.
template <class T>
Coro<void> cancel_after_first_step(corio::Task<T>* t) {
  t->cancel();
  co_return;
}

}  // namespace corio_net_test
