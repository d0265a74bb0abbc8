// The run-time io_uring probe (src/core/backend/io_uring/probe.hpp): usable on
// a machine that allows io_uring, and a one-line reason on every path that
// makes it unusable (io_uring_disabled = 2, CORIO_BACKEND=epoll).
#include "core/backend/io_uring/probe.hpp"

#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace {

using corio::detail::IoUringProbeInputs;
using corio::detail::IoUringSupport;
using corio::detail::probe_io_uring;

void expect_one_line_reason(const IoUringSupport& s) {
  EXPECT_FALSE(s.usable);
  EXPECT_FALSE(s.reason.empty());
  EXPECT_EQ(s.reason.find('\n'), std::string::npos) << s.reason;
  EXPECT_LT(s.reason.size(), 200u) << s.reason;
}

// Whether this environment refuses io_uring_setup itself (seccomp, a kernel
// without it), asked with the raw syscall so the answer does not come from
// the code under test.
bool environment_refuses_io_uring() {
  io_uring_params p{};
  const long fd = ::syscall(__NR_io_uring_setup, 1, &p);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return false;
  }
  return errno == EPERM || errno == ENOSYS;
}

std::string file_with(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

#ifdef CORIO_HAVE_LIBURING
constexpr bool kBuiltWithLiburing = true;
#else
constexpr bool kBuiltWithLiburing = false;
#endif

TEST(IoUringProbe, UsableHere) {
  IoUringProbeInputs in;  // CORIO_BACKEND unset, the real /proc
  const IoUringSupport s = probe_io_uring(in);
  EXPECT_FALSE(s.kernel.empty());
  if (!kBuiltWithLiburing) {
    expect_one_line_reason(s);
    EXPECT_NE(s.reason.find("liburing"), std::string::npos) << s.reason;
    return;
  }
  if (environment_refuses_io_uring()) GTEST_SKIP() << "io_uring refused here: " << s.reason;
  EXPECT_TRUE(s.usable) << s.reason;
  EXPECT_TRUE(s.reason.empty()) << s.reason;
  // The kernel (6.x on CI) has the buffer ring and both multishot flags.
  EXPECT_TRUE(s.provided_buffer_ring);
  EXPECT_TRUE(s.multishot_accept);
  EXPECT_TRUE(s.multishot_recv);
}

TEST(IoUringProbe, SwitchedOffSystemWide) {
  IoUringProbeInputs in;
  in.disabled_path = file_with("io_uring_disabled_2", "2\n");
  const IoUringSupport s = probe_io_uring(in);
  expect_one_line_reason(s);
  EXPECT_NE(s.reason.find(in.disabled_path + " = 2"), std::string::npos) << s.reason;
  EXPECT_FALSE(s.provided_buffer_ring);
}

TEST(IoUringProbe, CorioBackendEpollMakesItUnusable) {
  IoUringProbeInputs in;
  in.backend_env = "epoll";
  const IoUringSupport s = probe_io_uring(in);
  expect_one_line_reason(s);
  EXPECT_NE(s.reason.find("CORIO_BACKEND=epoll"), std::string::npos) << s.reason;
}

TEST(IoUringProbe, OtherBackendChoicesAndNoDisabledFileProbeTheKernel) {
  IoUringProbeInputs plain;
  plain.backend_env = nullptr;
  const bool usable = probe_io_uring(plain).usable;
  for (const char* env : {"io_uring", "best"}) {
    IoUringProbeInputs in;
    in.backend_env = env;
    in.disabled_path = ::testing::TempDir() + "no_such_io_uring_disabled";  // kernels before 6.6
    const IoUringSupport s = probe_io_uring(in);
    EXPECT_EQ(s.usable, usable) << env << ": " << s.reason;
  }
  IoUringProbeInputs zero;
  zero.disabled_path = file_with("io_uring_disabled_0", "0\n");
  EXPECT_EQ(probe_io_uring(zero).usable, usable);
}

}  // namespace
