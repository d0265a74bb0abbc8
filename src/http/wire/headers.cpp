// Headers (see headers.hpp): a vector of fields searched linearly, names
// compared without regard to ASCII case.
#include <corio/http/headers.hpp>

#include <algorithm>
#include <array>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

constexpr char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? char(c + 32) : c; }

// The spares (headers.hpp). Kept: a block of at most kKeepFields fields (an
// answer's few, not a request's dozen: the server keeps those in its request
// state) and strings of at most kKeepString bytes, kSpareBlocks and
// kSpareStrings of them: under 2 KiB of vectors and 4 KiB of strings per
// thread. Callgrind, GET /hello on one loop: the vector and the Content-Type
// value were the answer's two allocations, each a malloc and a free.
constexpr std::size_t kSpareBlocks = 16;
constexpr std::size_t kSpareStrings = 32;
constexpr std::size_t kKeepFields = 8;
constexpr std::size_t kKeepString = 128;

constinit thread_local bool t_spares_gone = false;

// Fixed arrays: giving back never allocates, and a Headers' destructor is noexcept.
struct Spares {
  std::array<std::vector<Header>, kSpareBlocks> blocks;
  std::array<std::string, kSpareStrings> strings;
  std::size_t block_count = 0, string_count = 0;
  ~Spares() { t_spares_gone = true; }
};

// Null once the thread's spares are destroyed: a Headers that outlives them
// (a static one, at exit) frees its storage as before.
Spares* spares() noexcept {
  if (t_spares_gone) return nullptr;
  thread_local Spares s;
  return &s;
}

bool on_heap(const std::string& s) noexcept { return s.capacity() > std::string().capacity(); }

void keep(Spares& s, std::string& str) noexcept {
  if (s.string_count == kSpareStrings || !on_heap(str) || str.capacity() > kKeepString) return;
  s.strings[s.string_count++].swap(str);
}

// A copy of v, in a spare string when v does not fit inline and the
// latest spare is big enough (spares come from like blocks: it usually is).
std::string copy_of(std::string_view v) {
  Spares* s = v.size() > std::string().capacity() ? spares() : nullptr;
  if (s == nullptr || s->string_count == 0 || s->strings[s->string_count - 1].capacity() < v.size()) {
    return std::string(v);
  }
  std::string& spare = s->strings[--s->string_count];
  spare.assign(v);
  return std::move(spare);
}

// An empty block with no storage yet takes a spare vector.
void adopt_spare(std::vector<Header>& fields) noexcept {
  if (fields.capacity() != 0) return;
  Spares* s = spares();
  if (s != nullptr && s->block_count != 0) fields.swap(s->blocks[--s->block_count]);
}

}  // namespace

Headers::~Headers() {
  if (fields_.capacity() == 0 || fields_.capacity() > kKeepFields) return;
  Spares* s = spares();
  if (s == nullptr || s->block_count == kSpareBlocks) return;
  for (Header& h : fields_) {
    keep(*s, h.name);
    keep(*s, h.value);
  }
  fields_.clear();
  s->blocks[s->block_count++].swap(fields_);
}

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
  adopt_spare(fields_);
  Header& field = fields_.emplace_back();
  field.name = std::move(name);
  field.value = std::move(value);
}

void Headers::add_copy(std::string_view name, std::string_view value) {
  adopt_spare(fields_);
  Header& field = fields_.emplace_back();
  field.name = copy_of(name);
  field.value = copy_of(value);
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
