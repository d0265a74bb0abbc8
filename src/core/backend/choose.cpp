#include "choose.hpp"

#include <cstdlib>
#include <cstring>
#include <system_error>

#include "io_uring/uring_backend.hpp"

namespace corio::detail {

namespace {

// CORIO_BACKEND, when set to a name we know, wins over what the program asked.
corio::Backend from_environment(corio::Backend wanted, std::string* note) {
  const char* env = std::getenv("CORIO_BACKEND");
  if (!env || !*env) return wanted;
  if (std::strcmp(env, "epoll") == 0) return corio::Backend::epoll;
  if (std::strcmp(env, "io_uring") == 0) return corio::Backend::io_uring;
  if (std::strcmp(env, "best") == 0) return corio::Backend::best;
  *note = std::string("CORIO_BACKEND=") + env + " is not epoll, io_uring or best: ignored";
  return wanted;
}

}  // namespace

// `best` is io_uring where the kernel has everything the benchmarks that
// chose it ran with (io_uring_is_best: Linux 6.1's DEFER_TASKRUN on top of
// 6.0's multishot receives), else epoll; docs/core-design.md, "Which backend
// is best", has the rule and its table. io_uring is probed at run time
// (seccomp profiles, io_uring_disabled, old kernels): when it cannot serve,
// the loop runs on epoll and keeps the reason.
BackendChoice make_backend(corio::Backend wanted, const IoUringProbeInputs& probe) {
  BackendChoice choice;
  const corio::Backend asked = from_environment(wanted, &choice.fallback_reason);
  if (asked != corio::Backend::epoll) {
    const IoUringSupport support = probe_io_uring(probe);
    try {
      if (asked == corio::Backend::io_uring || io_uring_is_best(support)) {
        choice.backend = make_io_uring_backend(support);
        return choice;
      }
      choice.fallback_reason =
          "best runs on epoll here: " +
          (support.usable ? "the kernel (" + support.kernel +
                                ") lacks 6.1's DEFER_TASKRUN or 6.0's multishot receives"
                          : support.reason);
    } catch (const std::system_error& e) {  // the probe's reason, or the ring setup's errno
      choice.fallback_reason = std::string("io_uring unusable: ") + e.what();
    }
  }
  choice.backend = make_epoll_backend();
  return choice;
}

BackendChoice make_backend(corio::Backend wanted) {
  return make_backend(wanted, io_uring_probe_inputs());
}

}  // namespace corio::detail
