// OS errors as DESIGN.md wants them: std::system_error with the errno kept.
// One definition for every file that makes syscalls.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace corio::detail {

[[noreturn]] inline void throw_errno(int err, const std::string& what) {
  throw std::system_error(err, std::generic_category(), what);
}

// The non-blocking "try again later" of a read, write, accept or send.
inline bool would_block(int err) noexcept { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace corio::detail
