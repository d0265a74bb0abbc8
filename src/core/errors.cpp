#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <system_error>
#include <typeinfo>

#include <corio/errors.hpp>

namespace corio {

namespace {
std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(t.name());
}

std::string join_messages(const std::string& message, const std::vector<std::exception_ptr>& excs) {
  std::string out = message + " (" + std::to_string(excs.size()) + " sub-exception" +
                    (excs.size() == 1 ? "" : "s") + ")";
  for (std::size_t i = 0; i < excs.size(); ++i) {
    out += "\n  [" + std::to_string(i + 1) + "] " + describe(excs[i]);
  }
  return out;
}
}  // namespace

ExceptionGroup::ExceptionGroup(const std::string& message,
                               std::vector<std::exception_ptr> exceptions)
    : std::runtime_error(join_messages(message, exceptions)), exceptions_(std::move(exceptions)) {}

std::string describe(const std::exception_ptr& e) {
  if (!e) return "no exception";
  try {
    std::rethrow_exception(e);
  } catch (const CancelledError& c) {
    return c.message().empty() ? "CancelledError" : "CancelledError: " + c.message();
  } catch (const KeyboardInterrupt&) {
    return "KeyboardInterrupt";
  } catch (const TimeoutError& t) {
    const std::string what = t.what();
    return what == "TimeoutError" ? what : "TimeoutError: " + what;
  } catch (const std::system_error& s) {
    return std::string("system_error: ") + s.what();
  } catch (const std::exception& x) {
    return type_name(typeid(x)) + ": " + x.what();
  } catch (...) {
    return "unknown exception";
  }
}

bool is_cancelled_error(const std::exception_ptr& e) noexcept {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const CancelledError&) {
    return true;
  } catch (...) {
  }
  return false;
}

namespace detail {
void throw_reused_coro() { throw RuntimeError("cannot reuse already awaited coroutine"); }

void abort_misplaced_frame() noexcept {
  // No exception: the frame cannot even be destroyed through its handle.
  std::fputs(
      "corio: g++ 12 laid out this coroutine's frame wrongly and it could never run: a co_await\n"
      "in an if/while/for/do/switch condition, in a coroutine that declares no variable.\n"
      "Await into a named variable first (bool ok = co_await f(); if (!ok) ...); see\n"
      "docs/getting-started.md, 'g++ 12 habits'. The backtrace names the coroutine.\n",
      stderr);
  std::abort();
}
}  // namespace detail

}  // namespace corio
