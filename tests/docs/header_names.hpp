// The names the public headers' examples use without declaring them (a
// job, a helper, a sink): extract_snippets.py includes this file in the
// headers' translation unit, so an example reads as it would in a program.
// Nothing here runs; the definitions only make the examples link.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include <corio/coro.hpp>
#include <corio/json/fields.hpp>

namespace corio_docs {

struct Job {
  int id = 0;
};

// Where a downloaded piece goes (`out.write(piece)`).
struct Sink {
  void write(std::string_view) {}
};

struct User {
  std::string name;
  std::optional<std::string> email;
};

inline corio::Coro<> make_brief() { co_return; }
inline int count_lines() { return 0; }
inline std::string headlines(const nlohmann::json&) { return {}; }

}  // namespace corio_docs

template <>
struct corio::http::Fields<corio_docs::User> {
  static constexpr auto list = std::tuple{field("name", &corio_docs::User::name),
                                          field("email", &corio_docs::User::email)};
};
