/// \file
/// corio::SourceLocation: corio::SourceLocation's interface, on the builtins
/// that g++ and clang share. (libstdc++'s corio::SourceLocation needs
/// __builtin_source_location, which clang 14 lacks.) Debug mode records one per
/// task: where create_task was called.
#pragma once

namespace corio {

/// Where in the source something happened: std::source_location's interface.
class SourceLocation {
 public:
  /// As a default argument, the caller's location.
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          unsigned line = __builtin_LINE(),
                                          const char* function = __builtin_FUNCTION()) noexcept {
    return SourceLocation(file, line, function);
  }
  constexpr SourceLocation() noexcept = default;
  /// The file name, as the compiler spelled it.
  constexpr const char* file_name() const noexcept { return file_; }
  /// The line number.
  constexpr unsigned line() const noexcept { return line_; }
  /// The enclosing function's name.
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  constexpr SourceLocation(const char* file, unsigned line, const char* function) noexcept
      : file_(file), line_(line), function_(function) {}
  const char* file_ = "";
  unsigned line_ = 0;
  const char* function_ = "";
};

}  // namespace corio
