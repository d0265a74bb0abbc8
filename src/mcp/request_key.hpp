// A request's id as a map key (the requests running in a Session, the
// streams of a Streamable HTTP session): its digits, or "s" and its text,
// since ids are integers or strings. Not json::dump(), whose serializer
// allocates: these keys are made several times on every call's path.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp::detail {

inline std::string request_key(const json& id) {
  if (id.is_string()) return "s" + id.get_ref<const std::string&>();
  if (id.is_number_integer()) {
    char buf[24];
    char* end = id.is_number_unsigned() ? std::to_chars(buf, buf + sizeof buf, id.get<std::uint64_t>()).ptr
                                        : std::to_chars(buf, buf + sizeof buf, id.get<std::int64_t>()).ptr;
    return std::string(buf, end);
  }
  return id.dump();  // no id a valid message has; still a key of its own
}

}  // namespace corio::mcp::detail
