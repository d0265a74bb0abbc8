/// \file
/// Exceptions with asyncio's names (DESIGN.md "Errors and bad input").
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace corio {

/// Thrown at a task's co_await when the task is cancelled.
///
/// Like asyncio since Python 3.8, where CancelledError became a BaseException,
/// it deliberately does not derive from std::exception: a
/// `catch (const std::exception&)` written for ordinary failures must not
/// swallow a cancellation by accident. Catch it by name (or `...`) to clean up,
/// then rethrow.
class CancelledError {
 public:
  /// msg: what was given to cancel(), if anything.
  explicit CancelledError(std::string msg = {}) : msg_(std::move(msg)) {}
  /// The message, or "CancelledError" when there is none.
  const char* what() const noexcept { return msg_.empty() ? "CancelledError" : msg_.c_str(); }
  /// The message given to cancel() ("" if none).
  const std::string& message() const noexcept { return msg_; }

 private:
  std::string msg_;
};

/// Thrown by corio::run() when Ctrl-C (SIGINT) cancelled the main task and
/// the task let the cancellation end it (asyncio.Runner since Python 3.11).
///
/// Python's KeyboardInterrupt is a BaseException for the reason CancelledError
/// is (above), so neither derives from std::exception here: a
/// `catch (const std::exception&)` must not swallow Ctrl-C. Uncaught, it ends
/// the program through std::terminate (abort); catch it in main() and, say,
/// return 130, the shell's code for a SIGINT death.
class KeyboardInterrupt {
 public:
  /// "KeyboardInterrupt".
  const char* what() const noexcept { return "KeyboardInterrupt"; }
};

/// A deadline passed (wait_for, timeout, the HTTP client's timeouts): asyncio.TimeoutError.
class TimeoutError : public std::runtime_error {
 public:
  TimeoutError() : std::runtime_error("TimeoutError") {}
  /// With a message of its own (the default is "TimeoutError").
  explicit TimeoutError(const std::string& m) : std::runtime_error(m) {}
};

/// A Future's result asked for while pending, or a done Future finished again.
class InvalidStateError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Misuse, as asyncio's RuntimeError: no running loop, a Coro awaited twice, ...
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Every task of a loop is suspended and nothing can wake any of them (a lock
/// cycle, an Event nobody will set): what corio::run() throws, with the
/// report as its message, when RunOptions::on_deadlock is OnDeadlock::raise.
class DeadlockError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// An argument out of its range, as Python's ValueError.
class ValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Queue<T>::put_nowait on a full queue.
class QueueFull : public std::runtime_error {
 public:
  QueueFull() : std::runtime_error("QueueFull") {}
};

/// Queue<T>::get_nowait on an empty queue.
class QueueEmpty : public std::runtime_error {
 public:
  QueueEmpty() : std::runtime_error("QueueEmpty") {}
};

/// put/get on a queue after shutdown() (asyncio 3.13).
class QueueShutDown : public std::runtime_error {
 public:
  QueueShutDown() : std::runtime_error("QueueShutDown") {}
};

/// Barrier::wait on a barrier that was aborted or reset under it.
class BrokenBarrierError : public std::runtime_error {
 public:
  BrokenBarrierError() : std::runtime_error("BrokenBarrierError") {}
};

/// Several failures at once (TaskGroup). what() lists each.
class ExceptionGroup : public std::runtime_error {
 public:
  /// message, and the failures it groups (what() lists each).
  ExceptionGroup(const std::string& message, std::vector<std::exception_ptr> exceptions);
  /// The grouped failures, in the order they happened.
  const std::vector<std::exception_ptr>& exceptions() const noexcept { return exceptions_; }

 private:
  std::vector<std::exception_ptr> exceptions_;
};

/// StreamReader::readexactly() or readuntil() reached EOF first
/// (asyncio.IncompleteReadError). `partial` holds the bytes read before EOF
/// (taken out of the reader's buffer); `expected` is how many were asked for,
/// empty for readuntil(), as asyncio's None.
class IncompleteReadError : public std::runtime_error {
 public:
  /// The bytes read before EOF, and how many were asked for.
  IncompleteReadError(std::string partial_bytes, std::optional<std::size_t> expected_bytes)
      : std::runtime_error(std::to_string(partial_bytes.size()) + " bytes read on a total of " +
                           (expected_bytes ? std::to_string(*expected_bytes) : "undefined") +
                           " expected bytes"),
        partial(std::move(partial_bytes)),
        expected(expected_bytes) {}
  /// The bytes read before EOF.
  std::string partial;
  /// How many bytes were asked for; empty for readuntil().
  std::optional<std::size_t> expected;
};

/// StreamReader::readuntil() or readline() found no separator within the
/// reader's limit (asyncio.LimitOverrunError). `consumed` is how many bytes
/// were scanned (where the separator was found, if it was, beyond the limit).
/// A ValueError because asyncio's readline() raises ValueError here: code
/// ported from `except ValueError` still catches it.
class LimitOverrunError : public ValueError {
 public:
  /// With how many bytes were scanned.
  LimitOverrunError(const std::string& message, std::size_t consumed_bytes)
      : ValueError(message), consumed(consumed_bytes) {}
  /// How many bytes were scanned.
  std::size_t consumed;
};

/// True if e holds a CancelledError.
bool is_cancelled_error(const std::exception_ptr& e) noexcept;

/// One line describing an exception_ptr ("TimeoutError: ..."), for reports.
std::string describe(const std::exception_ptr& e);

}  // namespace corio
