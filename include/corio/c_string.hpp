/// \file
/// corio::check_c_string: the guard at every seam where a caller's bytes
/// become a C string (a path, a host name, a process argument, SQL for
/// libpq). There a NUL byte would silently end the string early: open("a\0b")
/// opens "a", libpq compares the parameter "admin\0' OR true" as "admin".
/// Python raises ValueError("embedded null byte") at the same seams; so does
/// corio, before anything is sent or opened.
#pragma once

#include <string>
#include <string_view>

#include <corio/errors.hpp>

namespace corio {

/// ValueError naming `what` when `text` holds a NUL byte.
inline void check_c_string(std::string_view text, std::string_view what) {
  if (text.find('\0') != std::string_view::npos) {
    throw ValueError(std::string(what) + " contains a NUL byte, which would cut it short");
  }
}

}  // namespace corio
