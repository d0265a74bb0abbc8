// The loop's exception handler (asyncio's set_exception_handler and
// call_exception_handler): where every report the runtime makes goes, and
// the default one, which writes to stderr.
#include <cstdio>
#include <string>
#include <utility>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

namespace corio {

void EventLoop::set_exception_handler(ExceptionHandler handler) {
  exception_handler_ = std::move(handler);
}

void EventLoop::call_exception_handler(const ExceptionContext& context) noexcept {
  if (!exception_handler_) {
    default_exception_handler(context);
    return;
  }
  try {
    exception_handler_(*this, context);
  } catch (...) {
    report_to_stderr(
        {"Unhandled error in exception handler", std::current_exception(), std::nullopt});
    report_to_stderr(context);
  }
}

void EventLoop::default_exception_handler(const ExceptionContext& context) noexcept {
  report_to_stderr(context);
}

void EventLoop::report_to_stderr(const ExceptionContext& context) noexcept {
  try {
    std::string text = "corio: " + context.message + "\n";
    if (context.task) text += "  task: " + context.task->get_name() + "\n";
    if (context.exception) text += "  exception: " + describe(context.exception) + "\n";
    std::fputs(text.c_str(), stderr);
  } catch (...) {
    std::fputs("corio: (failed to format an error report)\n", stderr);
  }
}

}  // namespace corio
