// The io_uring backend (issue 19, item 2): the IoBackend seam of backend.hpp on
// completions instead of readiness. Stream sockets receive through one
// multishot recv each into a provided-buffer ring shared by the loop, send
// from a queue the backend owns, and listeners accept through one multishot
// accept; everything else (datagrams, pipes, add_reader/add_writer, connect)
// is a syscall plus POLL_ADD readiness. Details and lifetime rules at the top
// of uring_backend.cpp.
#pragma once

#include <memory>

#include "core/backend/backend.hpp"
#include "core/backend/io_uring/probe.hpp"

namespace corio::detail {

// Needs what the probe found (a usable ring, a provided-buffer ring,
// multishot accept and recv: Linux 6.0); throws std::system_error (ENOTSUP
// with the probe's reason, or the errno of a failed setup) otherwise.
std::unique_ptr<IoBackend> make_io_uring_backend(const IoUringSupport& support);

}  // namespace corio::detail
