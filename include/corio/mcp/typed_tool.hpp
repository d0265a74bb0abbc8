// Typed tools, as FastMCP derives a tool from its type hints: the arguments
// are a C++ struct whose fields are listed once (name, member, description);
// the tool's inputSchema is generated from that list and the arguments are
// decoded into the struct before the handler runs.
//
//   struct Forecast {
//     std::string city;
//     int days = 0;
//     std::optional<bool> metric;
//   };
//   template <> struct corio::mcp::Fields<Forecast> {
//     static constexpr auto list = std::tuple{field("city", &Forecast::city, "The city"),
//                                             field("days", &Forecast::days, "How many days"),
//                                             field("metric", &Forecast::metric)};
//   };
//   add_tool<Forecast>(server, "forecast", "The weather",
//                      [](const Forecast& f, Context& ctx) -> Coro<ToolResult> { ... });
//
// Field types: std::string, bool, integers, floating point, std::vector<T>,
// std::map<std::string, T>, json (anything), another struct with Fields,
// and std::optional<T> for a field that may be left out (every other field
// is required). The arguments are checked against the generated schema as
// any tool's are (schema.hpp): a mismatch is a tool error naming the field
// ("/days: must be an integer"), and the handler does not run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/server.hpp>

namespace corio::mcp {

template <class Struct, class Member>
struct Field {
  const char* name;
  Member Struct::*member;
  const char* description;
};

template <class Struct, class Member>
constexpr Field<Struct, Member> field(const char* name, Member Struct::*member, const char* description = "") {
  return {name, member, description};
}

// Specialize with `static constexpr auto list = std::tuple{field(...), ...};`.
template <class T>
struct Fields;

namespace detail {

template <class T, class = void>
struct has_fields : std::false_type {};
template <class T>
struct has_fields<T, std::void_t<decltype(Fields<T>::list)>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

template <class T>
json schema_of();

template <class T>
json object_schema() {
  json schema = {{"type", "object"}, {"properties", json::object()}};
  json required = json::array();
  std::apply(
      [&](const auto&... f) {
        const auto add = [&](const auto& one) {
          using Member = std::remove_cvref_t<decltype(std::declval<T&>().*(one.member))>;
          json property = schema_of<Member>();
          if (one.description[0] != '\0') property["description"] = one.description;
          schema["properties"][one.name] = std::move(property);
          if (!is_optional<Member>::value) required.push_back(one.name);
        };
        (add(f), ...);
      },
      Fields<T>::list);
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

template <class T>
json schema_of() {
  if constexpr (is_optional<T>::value) {
    return schema_of<typename T::value_type>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return {{"type", "string"}};
  } else if constexpr (std::is_same_v<T, bool>) {
    return {{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    return {{"type", "integer"}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {{"type", "number"}};
  } else if constexpr (is_vector<T>::value) {
    return {{"type", "array"}, {"items", schema_of<typename T::value_type>()}};
  } else if constexpr (is_string_map<T>::value) {
    return {{"type", "object"}, {"additionalProperties", schema_of<typename T::mapped_type>()}};
  } else if constexpr (std::is_same_v<T, json>) {
    return json::object();
  } else {
    static_assert(has_fields<T>::value, "a typed tool's field type needs Fields<T> (typed_tool.hpp)");
    return object_schema<T>();
  }
}

// From JSON the schema has accepted.
template <class T>
T decode(const json& j) {
  if constexpr (is_optional<T>::value) {
    if (j.is_null()) return std::nullopt;
    return decode<typename T::value_type>(j);
  } else if constexpr (is_vector<T>::value) {
    T out;
    for (const json& item : j) out.push_back(decode<typename T::value_type>(item));
    return out;
  } else if constexpr (is_string_map<T>::value) {
    T out;
    for (const auto& [k, v] : j.items()) out.emplace(k, decode<typename T::mapped_type>(v));
    return out;
  } else if constexpr (has_fields<T>::value) {
    T out{};
    std::apply(
        [&](const auto&... f) {
          const auto set = [&](const auto& one) {
            using Member = std::remove_cvref_t<decltype(out.*(one.member))>;
            if (const auto it = j.find(one.name); it != j.end()) out.*(one.member) = decode<Member>(*it);
          };
          (set(f), ...);
        },
        Fields<T>::list);
    return out;
  } else {
    return j.get<T>();
  }
}

// Owns the decoded arguments for the handler's whole run (the handler
// takes them by reference and may suspend).
template <class Args, class F>
Coro<ToolResult> call_typed(const F& handler, Args args, Context& ctx) {
  co_return co_await handler(std::as_const(args), ctx);
}

}  // namespace detail

// The schema generated for Args (an object with its fields).
template <class Args>
json input_schema_of() {
  return detail::schema_of<Args>();
}

// A tool whose handler takes its arguments as an Args:
// Coro<ToolResult>(const Args&, Context&). tool: the rest of the tool's
// description (title, annotations, ...); its input_schema is generated.
template <class Args, class F>
void add_tool(Server& server, Tool tool, F handler) {
  tool.input_schema = input_schema_of<Args>();
  server.add_tool(std::move(tool), [handler = std::move(handler)](const json& args, Context& ctx) {
    return detail::call_typed<Args>(handler, detail::decode<Args>(args), ctx);
  });
}

template <class Args, class F>
void add_tool(Server& server, std::string name, std::string description, F handler) {
  Tool tool;
  tool.name = std::move(name);
  tool.description = std::move(description);
  add_tool<Args>(server, std::move(tool), std::move(handler));
}

}  // namespace corio::mcp
