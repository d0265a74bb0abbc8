// Deeply nested JSON texts, for the depth limit's tests (json and http).
#pragma once

#include <cstddef>
#include <string>

namespace corio_json_test {

inline std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

inline std::string nested_objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += "{\"a\":";
  text += "1";
  text += std::string(depth, '}');
  return text;
}

}  // namespace corio_json_test
