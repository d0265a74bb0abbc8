// Whether io_uring can serve this process, asked at run time (DESIGN.md:
// "probe at run time and fall back to epoll"): a kernel may be too old, have
// io_uring compiled out or switched off (/proc/sys/kernel/io_uring_disabled),
// and container seccomp profiles often refuse io_uring_setup with EPERM or
// ENOSYS. Building against liburing says nothing about any of that, so the
// backend choice asks this probe once per loop creation; it costs one
// io_uring_queue_init (a few µs) and one IORING_REGISTER_PROBE.
//
// The backend choice (choose.cpp) asks it whenever io_uring is wanted; when
// io_uring cannot serve, the loop runs on epoll and says why in debug mode.
#pragma once

#include <string>

namespace corio::detail {

struct IoUringSupport {
  bool usable = false;  // every required opcode is there and a ring can be created
  std::string reason;   // when not usable: why, one line; empty when usable
  std::string kernel;   // uname -r, for reports
  // Optional features: the backend uses them when there, works without them.
  bool provided_buffer_ring = false;  // IORING_REGISTER_PBUF_RING (Linux 5.19)
  bool multishot_accept = false;      // IORING_ACCEPT_MULTISHOT (Linux 5.19)
  bool multishot_recv = false;        // IORING_RECV_MULTISHOT (Linux 6.0)
  // IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (Linux 6.1): completions run
  // only when the loop waits. The measurements that made io_uring `best`
  // were taken with it (docs/backend-choice.md).
  bool defer_taskrun = false;
};

// Whether `best` runs on io_uring: usable with every feature the benchmarks
// that chose it ran with.
bool io_uring_is_best(const IoUringSupport& s);

// Test hooks: what the probe reads from the environment.
struct IoUringProbeInputs {
  // io_uring_disabled: 0 allowed, 1 only for CAP_SYS_ADMIN or io_uring_group,
  // 2 refused. A missing file (kernels before 6.6) means allowed.
  std::string disabled_path = "/proc/sys/kernel/io_uring_disabled";
  // CORIO_BACKEND's value (nullptr: unset). "epoll" makes io_uring unusable,
  // so that every loop of the process runs on epoll whatever it asked for.
  const char* backend_env = nullptr;
};

// Reads the real environment (CORIO_BACKEND, /proc).
IoUringProbeInputs io_uring_probe_inputs();

// Never throws for an unusable io_uring: that is a result, with its reason.
IoUringSupport probe_io_uring(const IoUringProbeInputs& in = io_uring_probe_inputs());

}  // namespace corio::detail
