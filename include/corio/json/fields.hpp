/// \file
/// A C++ struct as JSON, its fields listed once (name, member, description):
/// the JSON Schema of the struct is generated from that list, and JSON the
/// schema accepted is decoded into the struct. The HTTP server's
/// Request::json_as<T>() (json_as.hpp) and the MCP typed tools
/// (mcp/typed_tool.hpp) are built on it, as FastAPI and FastMCP derive both
/// from type hints.
///
/// <!-- doc: global -->
///     struct Forecast {
///       std::string city;
///       int days = 0;
///       std::optional<bool> metric;
///     };
///     template <> struct corio::http::Fields<Forecast> {
///       static constexpr auto list = std::tuple{field("city", &Forecast::city, "The city"),
///                                               field("days", &Forecast::days, "How many days"),
///                                               field("metric", &Forecast::metric)};
///     };
///     Forecast read_forecast(const nlohmann::json& body) {
///       nlohmann::json schema = corio::http::json_schema_of<Forecast>();
///       return corio::http::decode_json<Forecast>(body);  // body valid against schema
///     }
///
/// Field types: std::string, bool, integers, floating point, std::vector<T>,
/// std::map<std::string, T>, nlohmann::json (anything), another struct with
/// Fields, and std::optional<T> for a field that may be left out (every
/// other field is required).
///
/// Brings <nlohmann/json.hpp> with it (the templates build JSON), which is
/// why corio/http.hpp leaves this header out.
///
/// The json layer's names stay in corio::http, where they were first: users
/// specialize corio::http::Fields<T>, and a specialization cannot be declared
/// through a using-declaration, so a new namespace would break their code.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace corio::http {

/// One field of a struct's list: its JSON name, its member, its description.
template <class Struct, class Member>
struct Field {
  const char* name;         ///< the property's name in JSON
  Member Struct::*member;   ///< the member it is decoded into
  const char* description;  ///< the schema's "description"; "" for none
};

/// A Field, its types deduced from the member pointer.
template <class Struct, class Member>
constexpr Field<Struct, Member> field(const char* name, Member Struct::*member, const char* description = "") {
  return {name, member, description};
}

/// Specialize with `static constexpr auto list = std::tuple{field(...), ...};`.
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
nlohmann::json schema_of();

template <class T>
nlohmann::json object_schema() {
  nlohmann::json schema = {{"type", "object"}, {"properties", nlohmann::json::object()}};
  nlohmann::json required = nlohmann::json::array();
  std::apply(
      [&](const auto&... f) {
        const auto add = [&](const auto& one) {
          using Member = std::remove_cvref_t<decltype(std::declval<T&>().*(one.member))>;
          nlohmann::json property = schema_of<Member>();
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
nlohmann::json schema_of() {
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
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    return nlohmann::json::object();
  } else {
    static_assert(has_fields<T>::value, "a field's type needs Fields<T> (json_fields.hpp)");
    return object_schema<T>();
  }
}

template <class T>
T decode(const nlohmann::json& j) {
  if constexpr (is_optional<T>::value) {
    if (j.is_null()) return std::nullopt;
    return decode<typename T::value_type>(j);
  } else if constexpr (is_vector<T>::value) {
    T out;
    for (const nlohmann::json& item : j) out.push_back(decode<typename T::value_type>(item));
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

}  // namespace detail

/// The schema generated for T (for a struct: an object with its fields).
template <class T>
nlohmann::json json_schema_of() {
  return detail::schema_of<T>();
}

/// A T from JSON that json_schema_of<T>() has accepted (validate() first:
/// other JSON may throw nlohmann::json's type errors).
template <class T>
T decode_json(const nlohmann::json& j) {
  return detail::decode<T>(j);
}

}  // namespace corio::http
