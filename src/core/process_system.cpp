// This thread's ProcessSystem (see detail/process_system.hpp): none but a
// simulation's.
#include <corio/detail/process_system.hpp>

namespace corio::detail {

namespace {
thread_local ProcessSystem* current = nullptr;
}  // namespace

ProcessSystem* process_system() noexcept { return current; }

ProcessSystem* replace_process_system(ProcessSystem* p) noexcept {
  ProcessSystem* old = current;
  current = p;
  return old;
}

}  // namespace corio::detail
