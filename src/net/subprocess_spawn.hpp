// Starting a child for create_subprocess_exec (subprocess.hpp): posix_spawn
// with its standard streams redirected, and the parent's ends of its pipes.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include <corio/socket.hpp>
#include <corio/subprocess.hpp>

namespace corio::detail {

struct SpawnedChild {
  pid_t pid = -1;
  // The parent's non-blocking ends of the child's stdin, stdout and stderr
  // pipes; each valid only for Redirect::pipe.
  Socket in;
  Socket out;
  Socket err;
};

// Throws std::system_error with the errno when the child cannot start. The
// options must be valid (create_subprocess_exec checks them).
SpawnedChild spawn_child(const std::string& program, const std::vector<std::string>& args,
                         const SubprocessOptions& opts);

}  // namespace corio::detail
