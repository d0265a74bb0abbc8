// What the Server's .cpp files share (see server.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

// One page of a list answer: {key: [item(i)...], "nextCursor"?} from the
// request's cursor; an unknown cursor is -32602.
json paginate(std::size_t count, std::size_t page_size, const json& params, const char* key,
              const std::function<json(std::size_t)>& item);

// Optional members are absent, not "" or null.
void put_if(json& j, const char* key, const std::string& value);
void put_if(json& j, const char* key, const json& value);

// params[key] as a string, or -32602.
std::string string_param(const json& params, const char* key);

}  // namespace corio::mcp
