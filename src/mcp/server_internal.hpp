// What the Server's .cpp files share (see server.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/server.hpp>

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

// The wire form of a resource's contents ("text", or "blob" in base64) and
// of a resource's description (resources/list, a resource_link).
json contents_json(const ResourceContents& contents);
json resource_json(const Resource& resource);

// The Server's lists: the entry pred picks, or null.
template <class Entry, class Pred>
std::shared_ptr<const Entry> find_by(const std::vector<std::shared_ptr<const Entry>>& entries, Pred pred) {
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return pred(*e); });
  return it == entries.end() ? nullptr : *it;
}

// Whether a table of (name, value) pairs is in name order, as find_named
// needs (a static_assert at each table).
template <class Value, std::size_t N>
constexpr bool sorted_by_name(const std::pair<std::string_view, Value> (&table)[N]) {
  return std::is_sorted(std::begin(table), std::end(table),
                        [](const auto& a, const auto& b) { return a.first < b.first; });
}

// The value named name in a table of (name, value) pairs in name order;
// Value() if none. A binary search: a method's dispatch is O(log n).
template <class Value, std::size_t N>
Value find_named(const std::pair<std::string_view, Value> (&table)[N], std::string_view name) {
  const auto it = std::lower_bound(std::begin(table), std::end(table), name,
                                   [](const auto& entry, std::string_view n) { return entry.first < n; });
  return it != std::end(table) && it->first == name ? it->second : Value();
}

// Erases the entries pred picks; whether there was one.
template <class Entry, class Pred>
bool erase_by(std::vector<std::shared_ptr<const Entry>>& entries, Pred pred) {
  return std::erase_if(entries, [&](const auto& e) { return pred(*e); }) > 0;
}

}  // namespace corio::mcp
