// Which backend a loop runs on: RunOptions::backend, CORIO_BACKEND over it,
// and a word in debug mode when what runs is not what was asked for.
#include <cstdlib>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <corio/event_loop.hpp>

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

TEST(BackendChoice, BestIsEpollUntilTheBenchmarksSayOtherwise) {
  ScopedBackendEnv env(nullptr);
  EXPECT_EQ(backend_of(corio::Backend::best), "epoll");
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

}  // namespace
