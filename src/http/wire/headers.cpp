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
// state) and values on the heap of at most kKeepString bytes (names are short
// enough to live inline), kSpareBlocks and kSpareStrings of them: at most
// 8 KiB of vectors and 4 KiB of strings a thread. Callgrind, GET /hello on
// one loop: the vector and the Content-Type value were the answer's two
// allocations, ~290 instructions of malloc and free a request.
constexpr std::size_t kSpareBlocks = 16;
constexpr std::size_t kSpareStrings = 32;
constexpr std::size_t kKeepFields = 8;
constexpr std::size_t kKeepString = 128;
const std::size_t kInline = std::string().capacity();  // what needs no heap

struct Spares {
  std::array<std::vector<Header>, kSpareBlocks> blocks;
  std::array<std::string, kSpareStrings> strings;
  std::size_t block_count = 0, string_count = 0;
};

// The hot path reads one pointer; the owner, made on first use, frees the
// spares with the thread and leaves them unusable after (a static Headers
// destroyed at exit then frees its storage as before).
constinit thread_local Spares* t_spares = nullptr;
constinit thread_local bool t_spares_gone = false;

struct SparesOwner {
  Spares spares;
  SparesOwner() noexcept { t_spares = &spares; }
  ~SparesOwner() {
    t_spares = nullptr;
    t_spares_gone = true;
  }
};

[[gnu::noinline]] Spares* first_spares() noexcept {
  if (t_spares_gone) return nullptr;
  thread_local SparesOwner owner;
  return &owner.spares;
}

Spares* spares() noexcept { return t_spares != nullptr ? t_spares : first_spares(); }

// An empty block with no storage yet takes a spare vector.
void adopt_spare(std::vector<Header>& fields) noexcept {
  if (fields.capacity() != 0) return;
  Spares* s = spares();
  if (s != nullptr && s->block_count != 0) fields.swap(s->blocks[--s->block_count]);
}

// `to` (empty) becomes a copy of v, in the latest spare string if v needs
// the heap and that one is big enough (spares come from like blocks: it
// usually is). Moves and append, not swap and assign: callgrind counted
// ~45 and ~60 instructions for those, general as they are.
void copy_into(std::string& to, std::string_view v) {
  if (v.size() > kInline) {
    Spares* s = spares();
    if (s != nullptr && s->string_count != 0 &&
        s->strings[s->string_count - 1].capacity() >= v.size()) {
      to = std::move(s->strings[--s->string_count]);  // kept empty: see keep_storage
    }
  }
  to.append(v.data(), v.size());
}

}  // namespace

void Headers::keep_storage() noexcept {
  Spares* s = spares();
  if (s == nullptr || s->block_count == kSpareBlocks || fields_.capacity() > kKeepFields) return;
  for (Header& h : fields_) {
    const std::size_t capacity = h.value.capacity();
    if (capacity > kInline && capacity <= kKeepString && s->string_count != kSpareStrings) {
      h.value.clear();  // a spare holds no answer's bytes
      s->strings[s->string_count++] = std::move(h.value);
    }
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
  field.name.append(name.data(), name.size());
  copy_into(field.value, value);
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
