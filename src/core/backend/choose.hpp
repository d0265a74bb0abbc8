// Which backend a loop runs on: RunOptions::backend, overridden by the
// environment's CORIO_BACKEND (epoll, io_uring or best), so that a whole
// test suite or a deployed program can be switched without a rebuild.
#pragma once

#include <memory>
#include <string>

#include <corio/event_loop.hpp>

#include "backend.hpp"
#include "io_uring/probe.hpp"

namespace corio::detail {

struct BackendChoice {
  std::unique_ptr<IoBackend> backend;
  // Set when what was asked for is not what runs: one line saying why.
  std::string fallback_reason;
};

BackendChoice make_backend(corio::Backend wanted);
// With the io_uring probe's inputs given (tests: a refused io_uring).
BackendChoice make_backend(corio::Backend wanted, const IoUringProbeInputs& probe);

}  // namespace corio::detail
