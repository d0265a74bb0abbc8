// Messages for the tests that flood a peer-fed queue: each says its number
// first, so the reader can check that nothing was lost or reordered.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace corio_testing {

// Message i: its number in 8 digits, then padding to `bytes`.
inline std::string numbered_payload(int i, std::size_t bytes) {
  char head[16];
  const int n = std::snprintf(head, sizeof head, "%08d", i);
  std::string out(head, static_cast<std::size_t>(n));
  out.resize(bytes, 'x');
  return out;
}

}  // namespace corio_testing
