// The io_uring probe (see probe.hpp). The only file outside the backend
// proper that knows whether corio was built with liburing.
#include "core/backend/io_uring/probe.hpp"

#include <sys/utsname.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

#ifdef CORIO_HAVE_LIBURING
#include <liburing.h>
#include <sys/mman.h>
#endif

namespace corio::detail {

namespace {

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? u.release : "unknown";
}

// -1 when the file is absent or unreadable (kernels before 6.6 have none).
int read_disabled(const std::string& path) {
  std::ifstream f(path);
  int v = -1;
  if (!(f >> v)) return -1;
  return v;
}

#ifdef CORIO_HAVE_LIBURING

bool kernel_at_least(const std::string& release, int major, int minor) {
  int a = 0, b = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &a, &b) != 2) return false;
  return a > major || (a == major && b >= minor);
}

// The backend's operations (the seam of issue 19): sockets, readiness for
// add_reader and foreign fds, deadlines, cancellation, files.
struct Opcode {
  int op;
  const char* name;
};
constexpr Opcode kRequired[] = {
    {IORING_OP_ACCEPT, "ACCEPT"},     {IORING_OP_RECV, "RECV"},
    {IORING_OP_SEND, "SEND"},         {IORING_OP_SENDMSG, "SENDMSG"},
    {IORING_OP_POLL_ADD, "POLL_ADD"}, {IORING_OP_TIMEOUT, "TIMEOUT"},
    {IORING_OP_ASYNC_CANCEL, "ASYNC_CANCEL"}, {IORING_OP_READ, "READ"},
    {IORING_OP_WRITE, "WRITE"},       {IORING_OP_FSYNC, "FSYNC"},
    {IORING_OP_OPENAT, "OPENAT"},     {IORING_OP_CLOSE, "CLOSE"},
};

std::string setup_refused(int err, int disabled) {
  if (err == EPERM && disabled == 1) {
    return "io_uring is limited to CAP_SYS_ADMIN and io_uring_group "
           "(io_uring_disabled = 1), and this process has neither";
  }
  if (err == EPERM) {
    return "io_uring_setup was refused (EPERM): a seccomp profile (as containers' default) or a "
           "security module forbids it";
  }
  if (err == ENOSYS) {
    return "io_uring_setup does not exist (ENOSYS): a kernel without io_uring, or a seccomp "
           "profile hiding it";
  }
  return std::string("io_uring_queue_init failed: ") + std::strerror(err);
}

// Empty when every required opcode is there, else "the kernel lacks ...".
std::string missing_opcodes(io_uring& ring) {
  io_uring_probe* p = io_uring_get_probe_ring(&ring);
  if (p == nullptr) return "IORING_REGISTER_PROBE failed (a kernel before 5.6)";
  std::string missing;
  for (const Opcode& o : kRequired) {
    if (!io_uring_opcode_supported(p, o.op)) missing += std::string(missing.empty() ? "" : ", ") + o.name;
  }
  io_uring_free_probe(p);
  return missing.empty() ? missing : "the kernel lacks io_uring opcodes " + missing;
}

// Registers a one-entry buffer ring: the only sure test (EINVAL before 5.19).
bool has_buffer_ring(io_uring& ring) {
  const long page = ::sysconf(_SC_PAGESIZE);
  void* mem = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  auto* br = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uintptr_t>(br);
  reg.ring_entries = 1;
  reg.bgid = 0;
  const bool ok = io_uring_register_buf_ring(&ring, &reg, 0) == 0;
  if (ok) io_uring_unregister_buf_ring(&ring, 0);
  ::munmap(mem, page);
  return ok;
}

void probe_ring(IoUringSupport& s, int disabled) {
  io_uring ring{};
  int err = io_uring_queue_init(4, &ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
  s.defer_taskrun = err == 0;
  if (err == -EINVAL) err = io_uring_queue_init(4, &ring, 0);  // before 6.1
  if (err < 0) {
    s.reason = setup_refused(-err, disabled);
    return;
  }
  s.reason = missing_opcodes(ring);
  s.usable = s.reason.empty();
  s.provided_buffer_ring = has_buffer_ring(ring);
  io_uring_queue_exit(&ring);
  // Flags of ACCEPT and RECV, which IORING_REGISTER_PROBE does not list.
  s.multishot_accept = kernel_at_least(s.kernel, 5, 19);
  s.multishot_recv = kernel_at_least(s.kernel, 6, 0);
}

#else

void probe_ring(IoUringSupport& s, int) {
  s.reason = "corio was built without liburing (liburing-dev)";
}

#endif

}  // namespace

IoUringProbeInputs io_uring_probe_inputs() {
  IoUringProbeInputs in;
  in.backend_env = std::getenv("CORIO_BACKEND");
  return in;
}

IoUringSupport probe_io_uring(const IoUringProbeInputs& in) {
  IoUringSupport s;
  s.kernel = kernel_release();
  if (in.backend_env != nullptr && std::string_view(in.backend_env) == "epoll") {
    s.reason = "CORIO_BACKEND=epoll asks for epoll";
    return s;
  }
  const int disabled = read_disabled(in.disabled_path);
  if (disabled == 2) {
    s.reason = "io_uring is switched off (" + in.disabled_path + " = 2)";
    return s;
  }
  // The ring probe sets up and tears down a ring (about half of what an
  // io_uring loop's creation costs): once per process. A sysctl changed
  // after that is not seen, as a kernel upgrade would not be.
  static const IoUringSupport ring_probe = [&] {
    IoUringSupport r = s;
    probe_ring(r, disabled);
    return r;
  }();
  return ring_probe;
}

bool io_uring_is_best(const IoUringSupport& s) {
  return s.usable && s.provided_buffer_ring && s.multishot_accept && s.multishot_recv &&
         s.defer_taskrun;
}

}  // namespace corio::detail
