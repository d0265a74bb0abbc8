// Headers (see headers.hpp): a vector of fields searched linearly, names
// compared without regard to ASCII case.
#include <corio/http/headers.hpp>

#include <algorithm>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

constexpr char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? char(c + 32) : c; }

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool list_contains(std::string_view list, std::string_view token) noexcept {
  bool found = false;
  syntax::for_each_element(list, [&](std::string_view element) { found = found || iequals(element, token); });
  return found;
}

Headers::Headers(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  fields_.reserve(fields.size());
  for (const auto& [name, value] : fields) fields_.push_back({std::string(name), std::string(value)});
}

std::optional<std::string_view> Headers::get(std::string_view name) const noexcept {
  for (const Header& h : fields_) {
    if (iequals(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

std::string_view Headers::get_or(std::string_view name, std::string_view fallback) const noexcept {
  return get(name).value_or(fallback);
}

std::vector<std::string_view> Headers::get_all(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const Header& h : fields_) {
    if (iequals(h.name, name)) values.emplace_back(h.value);
  }
  return values;
}

bool Headers::contains(std::string_view name) const noexcept { return get(name).has_value(); }

std::size_t Headers::count(std::string_view name) const noexcept {
  return static_cast<std::size_t>(std::count_if(
      fields_.begin(), fields_.end(), [&](const Header& h) { return iequals(h.name, name); }));
}

bool Headers::has_token(std::string_view name, std::string_view token) const noexcept {
  for (const Header& h : fields_) {
    if (iequals(h.name, name) && list_contains(h.value, token)) return true;
  }
  return false;
}

void Headers::add(std::string name, std::string value) {
  // In place: a Header built first and then moved in costs two string
  // moves more, on every field of every message parsed. (Not
  // emplace_back(name, value): clang 14 cannot build an aggregate from
  // parentheses.)
  Header& field = fields_.emplace_back();
  field.name = std::move(name);
  field.value = std::move(value);
}

void Headers::set(std::string_view name, std::string value) {
  auto first = std::find_if(fields_.begin(), fields_.end(),
                            [&](const Header& h) { return iequals(h.name, name); });
  if (first == fields_.end()) {
    fields_.push_back({std::string(name), std::move(value)});
    return;
  }
  first->name.assign(name);
  first->value = std::move(value);
  // The first field keeps its place; the others go.
  fields_.erase(std::remove_if(first + 1, fields_.end(),
                               [&](const Header& h) { return iequals(h.name, name); }),
                fields_.end());
}

std::size_t Headers::remove(std::string_view name) noexcept {
  auto it = std::remove_if(fields_.begin(), fields_.end(),
                           [&](const Header& h) { return iequals(h.name, name); });
  std::size_t n = static_cast<std::size_t>(fields_.end() - it);
  fields_.erase(it, fields_.end());
  return n;
}

}  // namespace corio::http
