#include "choose.hpp"

#include <cstdlib>
#include <cstring>

namespace corio::detail {

namespace {

// CORIO_BACKEND, when set to a name we know, wins over what the program asked.
corio::Backend from_environment(corio::Backend wanted, std::string* note) {
  const char* env = std::getenv("CORIO_BACKEND");
  if (!env || !*env) return wanted;
  if (std::strcmp(env, "epoll") == 0) return corio::Backend::epoll;
  if (std::strcmp(env, "io_uring") == 0) return corio::Backend::io_uring;
  if (std::strcmp(env, "best") == 0) return corio::Backend::best;
  *note = std::string("CORIO_BACKEND=") + env + " is not epoll, io_uring or best: ignored";
  return wanted;
}

}  // namespace

// `best` is epoll until the benchmarks say otherwise (issue 19).
BackendChoice make_backend(corio::Backend wanted) {
  BackendChoice choice;
  if (from_environment(wanted, &choice.fallback_reason) == corio::Backend::io_uring) {
    choice.fallback_reason = "the io_uring backend is not built yet";
  }
  choice.backend = make_epoll_backend();
  return choice;
}

}  // namespace corio::detail
