/// \file
/// corio::http::Headers: an HTTP header block, in order, names compared
/// without regard to case (RFC 9110 section 5.1), repeats kept.
///
/// <!-- doc: body -->
///     corio::http::Headers h{{"Content-Type", "text/plain"}};
///     h.add("Set-Cookie", "a=1");
///     h.add("Set-Cookie", "b=2");
///     auto type = h.get("content-type");          // "text/plain"
///     auto cookies = h.get_all("set-cookie");     // {"a=1", "b=2"}
///     h.set("Content-Length", "5");     // replaces every field of that name
///
/// A vector, not a map: a message has a dozen fields, where a linear scan
/// beats hashing, and the order the peer sent is kept for proxies and logs.
///
/// A small block's storage outlives it: a Headers destroyed with a few
/// fields leaves its vector and its values' heap strings, emptied, to the
/// next Headers of its thread (add(), add_copy()), so that a server's
/// answers, made and dropped per request, allocate nothing on the steady
/// state. At most 12 KiB a thread are kept, and no field's bytes.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corio::http {

/// ASCII case-insensitive equality, the comparison of field names and tokens.
bool iequals(std::string_view a, std::string_view b) noexcept;
/// Whether a comma-separated field value ("keep-alive, Upgrade") has token
/// among its elements, compared without regard to case.
bool list_contains(std::string_view list, std::string_view token) noexcept;

/// One field: its name as given (case kept) and its value.
struct Header {
  std::string name;   ///< as sent or added, case kept
  std::string value;  ///< the field's value
};

/// A header block: fields in order, names compared without case.
class Headers {
 public:
  Headers() = default;  ///< no fields
  ~Headers() {  ///< its storage goes to the thread's spares (see above)
    if (fields_.capacity() != 0) keep_storage();
  }
  Headers(const Headers&) = default;  ///< copies every field
  Headers(Headers&&) noexcept = default;  ///< takes every field; other is left empty
  Headers& operator=(const Headers&) = default;  ///< copies every field
  Headers& operator=(Headers&&) noexcept = default;  ///< takes every field

  /// The fields given, in order.
  Headers(std::initializer_list<std::pair<std::string_view, std::string_view>> fields);

  /// The first value of name, or nullopt.
  std::optional<std::string_view> get(std::string_view name) const noexcept;
  /// The first value of name, or fallback.
  std::string_view get_or(std::string_view name, std::string_view fallback) const noexcept;
  /// Every value of name, in order.
  std::vector<std::string_view> get_all(std::string_view name) const;
  bool contains(std::string_view name) const noexcept;  ///< whether a field is named name
  std::size_t count(std::string_view name) const noexcept;  ///< how many fields are named name

  /// Whether any field `name` lists token (list_contains), e.g.
  /// has_token("Connection", "close"), has_token("Expect", "100-continue").
  bool has_token(std::string_view name, std::string_view token) const noexcept;

  void add(std::string name, std::string value);  ///< appends, even if name is there
  /// add() from views: the copies go into the thread's spare strings, so
  /// that a value longer than a std::string holds inline costs no allocation
  /// once a block like it has been dropped ("text/plain; charset=utf-8").
  void add_copy(std::string_view name, std::string_view value);
  void set(std::string_view name, std::string value);  ///< replaces all of name (or appends)
  std::size_t remove(std::string_view name) noexcept;  ///< how many were removed
  void clear() noexcept { fields_.clear(); }  ///< removes every field

  std::size_t size() const noexcept { return fields_.size(); }  ///< fields, repeats counted
  bool empty() const noexcept { return fields_.empty(); }  ///< whether there are no fields
  auto begin() const noexcept { return fields_.begin(); }  ///< the first Header, in order
  auto end() const noexcept { return fields_.end(); }  ///< past the last Header
  const Header& operator[](std::size_t i) const noexcept { return fields_[i]; }  ///< the i-th field

 private:
  void keep_storage() noexcept;

  std::vector<Header> fields_;
};

}  // namespace corio::http
