// Small helpers shared by the core tests.
#pragma once

// Core headers only: the core tests must not depend on later layers.
#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <corio/clock.hpp>
#include <corio/coro.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/future.hpp>
#include <corio/handle.hpp>
#include <corio/run.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/testing/virtual_clock.hpp>

namespace corio_test {

// Options for a loop on virtual time starting at `start` seconds.
inline corio::RunOptions virtual_time(double start = 0.0) {
  corio::RunOptions opts;
  opts.clock = std::make_shared<corio::testing::VirtualClock>(start);
  return opts;
}

// What a loop's exception handler was called with.
struct Reports {
  std::vector<std::string> messages;
  std::vector<std::exception_ptr> exceptions;
  std::vector<std::string> task_names;  // "" when the context had no task

  void install(corio::EventLoop& loop) {
    loop.set_exception_handler([this](corio::EventLoop&, const corio::ExceptionContext& c) {
      messages.push_back(c.message);
      exceptions.push_back(c.exception);
      task_names.push_back(c.task ? c.task->get_name() : std::string());
    });
  }
  std::size_t size() const { return messages.size(); }
};

// The what() of an exception_ptr holding a std::exception ("" otherwise).
inline std::string what_of(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
  }
  return {};
}

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A non-blocking pipe closed on scope exit.
struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) {
      r = fds[0];
      w = fds[1];
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() { close(); }
  void close() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
    r = w = -1;
  }
  bool write_byte(char c = 'x') const { return ::write(w, &c, 1) == 1; }
  int drain() const {
    char buf[256];
    int total = 0;
    for (;;) {
      const ssize_t n = ::read(r, buf, sizeof buf);
      if (n <= 0) return total;
      total += static_cast<int>(n);
    }
  }
};

}  // namespace corio_test
