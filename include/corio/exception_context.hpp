/// \file
/// corio::ExceptionContext and ExceptionHandler: what the loop reports (a
/// task's exception nobody retrieved, a callback that threw, a slow step) and
/// who it reports it to (EventLoop::set_exception_handler), as asyncio's.
#pragma once

#include <exception>
#include <functional>
#include <optional>
#include <string>

#include <corio/task.hpp>

namespace corio {

class EventLoop;

/// What the loop's exception handler is told about a problem to report.
struct ExceptionContext {
  /// What happened ("Task exception was never retrieved", ...).
  std::string message;
  /// The exception involved, if any.
  std::exception_ptr exception;
  /// The task concerned, if any.
  std::optional<TaskRef> task;
};

/// Called by the loop for each problem it reports (set_exception_handler).
using ExceptionHandler = std::function<void(EventLoop&, const ExceptionContext&)>;

}  // namespace corio
