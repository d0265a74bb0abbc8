// Which backend a loop runs on: RunOptions::backend, CORIO_BACKEND over it,
// and a word in debug mode when what runs is not what was asked for.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <corio/event_loop.hpp>

#include "core/backend/choose.hpp"
#include "core/backend/io_uring/probe.hpp"

namespace {

using ::testing::HasSubstr;

// Sets CORIO_BACKEND (or unsets it) for one test, and puts it back.
class ScopedBackendEnv {
 public:
  explicit ScopedBackendEnv(const char* value) {
    if (const char* old = std::getenv("CORIO_BACKEND")) saved_ = old;
    if (value) {
      ::setenv("CORIO_BACKEND", value, 1);
    } else {
      ::unsetenv("CORIO_BACKEND");
    }
  }
  ~ScopedBackendEnv() {
    if (saved_) {
      ::setenv("CORIO_BACKEND", saved_->c_str(), 1);
    } else {
      ::unsetenv("CORIO_BACKEND");
    }
  }

 private:
  std::optional<std::string> saved_;
};

std::string backend_of(corio::Backend wanted, bool debug = false) {
  corio::RunOptions opts;
  opts.backend = wanted;
  opts.debug = debug;
  corio::EventLoop loop(opts);
  return loop.backend_name();
}

TEST(BackendChoice, EpollWhenAskedFor) {
  ScopedBackendEnv env(nullptr);
  EXPECT_EQ(backend_of(corio::Backend::epoll), "epoll");
}


TEST(BackendChoice, TheEnvironmentOverridesTheProgram) {
  ScopedBackendEnv env("epoll");
  EXPECT_EQ(backend_of(corio::Backend::io_uring), "epoll");
}

TEST(BackendChoice, AnUnknownEnvironmentValueIsIgnoredAndSaidInDebugMode) {
  ScopedBackendEnv env("kqueue");
  testing::internal::CaptureStderr();
  EXPECT_EQ(backend_of(corio::Backend::epoll, true), "epoll");
  EXPECT_THAT(testing::internal::GetCapturedStderr(),
              HasSubstr("CORIO_BACKEND=kqueue is not epoll, io_uring or best: ignored"));
}

TEST(BackendChoice, WithoutDebugModeNothingIsSaid) {
  ScopedBackendEnv env("kqueue");
  testing::internal::CaptureStderr();
  EXPECT_EQ(backend_of(corio::Backend::epoll), "epoll");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// io_uring where the probe says it can serve; the tests below skip elsewhere.
bool io_uring_here() { return corio::detail::probe_io_uring().usable; }

TEST(BackendChoice, IoUringWhenAskedFor) {
  ScopedBackendEnv env(nullptr);
  if (!io_uring_here()) GTEST_SKIP() << corio::detail::probe_io_uring().reason;
  EXPECT_EQ(backend_of(corio::Backend::io_uring), "io_uring");
}

TEST(BackendChoice, TheEnvironmentAsksForIoUring) {
  ScopedBackendEnv env("io_uring");
  if (!io_uring_here()) GTEST_SKIP() << corio::detail::probe_io_uring().reason;
  EXPECT_EQ(backend_of(corio::Backend::epoll), "io_uring");
  EXPECT_EQ(backend_of(corio::Backend::best), "io_uring");
}

// `best` is io_uring where the kernel has what the benchmarks ran with
// (Linux 6.1), else epoll, and debug mode says why.
TEST(BackendChoice, BestIsIoUringWhereTheKernelHasWhatTheBenchmarksRanWith) {
  ScopedBackendEnv env(nullptr);
  const corio::detail::IoUringSupport s = corio::detail::probe_io_uring();
  const bool best = s.usable && s.provided_buffer_ring && s.multishot_accept &&
                    s.multishot_recv && s.defer_taskrun;
  EXPECT_EQ(corio::detail::io_uring_is_best(s), best);
  EXPECT_EQ(backend_of(corio::Backend::best), best ? "io_uring" : "epoll");
  const corio::detail::BackendChoice c = corio::detail::make_backend(corio::Backend::best);
  EXPECT_EQ(c.fallback_reason.empty(), best) << c.fallback_reason;
}

TEST(BackendChoice, BestIsEpollWhenTheKernelLacksDeferredTaskRunning) {
  corio::detail::IoUringSupport s;
  s.usable = s.provided_buffer_ring = s.multishot_accept = s.multishot_recv = true;
  EXPECT_FALSE(corio::detail::io_uring_is_best(s));
  s.defer_taskrun = true;
  EXPECT_TRUE(corio::detail::io_uring_is_best(s));
  s.usable = false;
  EXPECT_FALSE(corio::detail::io_uring_is_best(s));
}

// What make_backend gives for `wanted` where io_uring is switched off
// (io_uring_disabled = 2).
corio::detail::BackendChoice choice_with_io_uring_off(corio::Backend wanted) {
  ScopedBackendEnv env(nullptr);
  corio::detail::IoUringProbeInputs in;
  // A file of this process's own: ctest runs the tests that share this
  // setup in parallel, and one truncating it while the other read it made
  // the reader find no setting (io_uring on).
  in.disabled_path = ::testing::TempDir() + "io_uring_disabled_2." + std::to_string(::getpid());
  std::ofstream(in.disabled_path) << "2\n";
  return corio::detail::make_backend(wanted, in);
}

TEST(BackendChoice, BestIsEpollWhenIoUringIsSwitchedOffWithTheReason) {
  const corio::detail::BackendChoice c = choice_with_io_uring_off(corio::Backend::best);
  EXPECT_STREQ(c.backend->name(), "epoll");
  EXPECT_THAT(c.fallback_reason, HasSubstr("best runs on epoll here: io_uring is switched off"));
}

// A refused io_uring runs the loop on epoll and keeps the probe's reason
// for debug mode.
TEST(BackendChoice, ARefusedIoUringFallsBackToEpollWithTheReason) {
  const corio::detail::BackendChoice c = choice_with_io_uring_off(corio::Backend::io_uring);
  EXPECT_STREQ(c.backend->name(), "epoll");
  EXPECT_THAT(c.fallback_reason, HasSubstr("io_uring unusable: io_uring is switched off"));
}

}  // namespace
