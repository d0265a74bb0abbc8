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
/// other field is required, unless marked optional()).
///
/// Constraints, pydantic's Field(...) arguments by the same names, each
/// turned into its JSON Schema keyword, so that the one list drives both the
/// schema a peer reads (an MCP tool's inputSchema) and the validation
/// (Request::json_as, the typed tools, Request::query_as):
///
/// <!-- doc: global -->
///     struct Order {
///       std::string sku;
///       int count = 1;
///       std::string speed = "normal";
///       std::vector<std::string> notes;
///     };
///     template <> struct corio::http::Fields<Order> {
///       static constexpr auto list = std::tuple{
///           field("sku", &Order::sku).min_length(3).max_length(12).pattern("^[A-Z0-9-]+$"),
///           field("count", &Order::count).ge(1).le(100).optional(),   // left out: 1
///           field("speed", &Order::speed).one_of("normal", "express").optional(),
///           field("notes", &Order::notes).max_length(5).optional()};
///     };
///
/// ge / gt / le / lt: minimum, exclusiveMinimum, maximum, exclusiveMaximum;
/// min_length / max_length: minLength / maxLength on a string, minItems /
/// maxItems on a vector; pattern: an ECMAScript regular expression the
/// string must contain a match of (anchor it with ^...$ for a whole match,
/// as in JSON Schema and pydantic); one_of: the string's allowed values
/// (enum); optional(): the field may be left out, and then keeps the value
/// the struct's default constructor gives it (the schema's "default").
///
/// Brings <nlohmann/json.hpp> with it (the templates build JSON), which is
/// why corio/http.hpp leaves this header out.
///
/// The json layer's names stay in corio::http, where they were first: users
/// specialize corio::http::Fields<T>, and a specialization cannot be declared
/// through a using-declaration, so a new namespace would break their code.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <corio/json/constraints.hpp>
#include <corio/json/schema.hpp>

namespace corio::http {

/// One field of a struct's list: its JSON name, its member, its description,
/// and its constraints (Choices: how many values one_of() allows; 0, any).
/// The setters return a changed copy, so they chain in a constant expression.
template <class Struct, class Member, std::size_t Choices = 0>
struct Field {
  const char* name;                          ///< the property's name in JSON
  Member Struct::*member;                    ///< the member it is decoded into
  const char* description;                   ///< the schema's "description"; "" for none
  Constraints rules = {};                    ///< set by the setters below
  std::array<const char*, Choices> choices = {};  ///< set by one_of()

  constexpr Field ge(double v) const { return with(&Constraints::ge, v); }  ///< value >= v
  constexpr Field gt(double v) const { return with(&Constraints::gt, v); }  ///< value > v
  constexpr Field le(double v) const { return with(&Constraints::le, v); }  ///< value <= v
  constexpr Field lt(double v) const { return with(&Constraints::lt, v); }  ///< value < v
  /// At least n characters (code points), or n items.
  constexpr Field min_length(std::size_t n) const { return with(&Constraints::min_length, n); }
  /// At most n characters (code points), or n items.
  constexpr Field max_length(std::size_t n) const { return with(&Constraints::max_length, n); }
  /// A string containing a match of regex (ECMAScript).
  constexpr Field pattern(const char* regex) const { return with(&Constraints::pattern, regex); }
  /// May be left out: then the member keeps its default.
  constexpr Field optional() const { return with(&Constraints::optional, true); }
  /// One of these strings (JSON Schema's enum; pydantic's Literal).
  template <class... Names>
  constexpr Field<Struct, Member, sizeof...(Names)> one_of(Names... names) const {
    return {name, member, description, rules, {names...}};
  }

 private:
  template <class Key, class Value>
  constexpr Field with(Key Constraints::*key, Value v) const {
    Field f = *this;
    f.rules.*key = v;
    return f;
  }
};

/// A Field, its types deduced from the member pointer.
template <class Struct, class Member>
constexpr Field<Struct, Member> field(const char* name, Member Struct::*member, const char* description = "") {
  return {name, member, description};
}

/// Specialize with `static constexpr auto list = std::tuple{field(...), ...};`,
/// or give the struct the list itself, as a pydantic model carries its
/// fields: `static constexpr auto fields = std::tuple{field(...), ...};`.
template <class T>
struct Fields;

namespace detail {

template <class T, class = void>
struct has_fields_trait : std::false_type {};
template <class T>
struct has_fields_trait<T, std::void_t<decltype(Fields<T>::list)>> : std::true_type {};
template <class T, class = void>
struct has_fields_member : std::false_type {};
template <class T>
struct has_fields_member<T, std::void_t<decltype(T::fields)>> : std::true_type {};
template <class T>
struct has_fields : std::bool_constant<has_fields_trait<T>::value || has_fields_member<T>::value> {};

// T's list: Fields<T>::list, else the struct's own `fields`.
template <class T>
constexpr const auto& field_list() {
  if constexpr (has_fields_trait<T>::value) {
    return Fields<T>::list;
  } else {
    return T::fields;
  }
}

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct optional_value {
  using type = T;
};
template <class T>
struct optional_value<std::optional<T>> {
  using type = T;
};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

// Ordered: with each object's declared order (schema.hpp's field order
// keyword), for the validation, not for the schema a peer reads.
template <class T, bool Ordered = false>
nlohmann::json schema_of();

// A bound as its keyword's value: 0, not 0.0, where it is whole.
inline nlohmann::json bound(double b) {
  const bool whole = b > -1e15 && b < 1e15 && static_cast<double>(static_cast<long long>(b)) == b;
  return whole ? nlohmann::json(static_cast<long long>(b)) : nlohmann::json(b);
}

}  // namespace detail

/// Constraints as the JSON Schema keywords they stand for, added to schema
/// (items: the bounds are minItems / maxItems, for an array).
inline void add_constraint_keywords(nlohmann::json& schema, const Constraints& r, bool items = false) {
  const auto put = [&](const char* key, const std::optional<double>& b) {
    if (b) schema[key] = detail::bound(*b);
  };
  put("minimum", r.ge);
  put("exclusiveMinimum", r.gt);
  put("maximum", r.le);
  put("exclusiveMaximum", r.lt);
  if (r.min_length) schema[items ? "minItems" : "minLength"] = *r.min_length;
  if (r.max_length) schema[items ? "maxItems" : "maxLength"] = *r.max_length;
  if (r.pattern != nullptr) schema["pattern"] = r.pattern;
}

namespace detail {

// One field's constraints as the keywords of its property's schema.
template <class T, class Member, class F>
void add_constraints(nlohmann::json& property, const F& one) {
  const Constraints& r = one.rules;
  add_constraint_keywords(property, r, is_vector<typename optional_value<Member>::type>::value);
  if (!one.choices.empty()) property["enum"] = one.choices;
  if constexpr (std::is_default_constructible_v<T> && std::is_constructible_v<nlohmann::json, const Member&>) {
    if (r.optional) property["default"] = T{}.*(one.member);
  }
}

template <class T, bool Ordered>
nlohmann::json object_schema() {
  nlohmann::json schema = {{"type", "object"}, {"properties", nlohmann::json::object()}};
  nlohmann::json required = nlohmann::json::array();
  nlohmann::json order = nlohmann::json::array();
  std::apply(
      [&](const auto&... f) {
        const auto add = [&](const auto& one) {
          using Member = std::remove_cvref_t<decltype(std::declval<T&>().*(one.member))>;
          nlohmann::json property = schema_of<Member, Ordered>();
          if (one.description[0] != '\0') property["description"] = one.description;
          add_constraints<T, Member>(property, one);
          schema["properties"][one.name] = std::move(property);
          if (!is_optional<Member>::value && !one.rules.optional) required.push_back(one.name);
          order.push_back(one.name);
        };
        (add(f), ...);
      },
      field_list<T>());
  if (!required.empty()) schema["required"] = std::move(required);
  if constexpr (Ordered) schema[kFieldOrder] = std::move(order);
  return schema;
}

template <class T, bool Ordered>
nlohmann::json schema_of() {
  if constexpr (is_optional<T>::value) {
    return schema_of<typename T::value_type, Ordered>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return {{"type", "string"}};
  } else if constexpr (std::is_same_v<T, bool>) {
    return {{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    return {{"type", "integer"}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {{"type", "number"}};
  } else if constexpr (is_vector<T>::value) {
    return {{"type", "array"}, {"items", schema_of<typename T::value_type, Ordered>()}};
  } else if constexpr (is_string_map<T>::value) {
    return {{"type", "object"}, {"additionalProperties", schema_of<typename T::mapped_type, Ordered>()}};
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    return nlohmann::json::object();
  } else {
    static_assert(has_fields<T>::value, "a field's type needs Fields<T> or a `fields` member (json_fields.hpp)");
    return object_schema<T, Ordered>();
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
        field_list<T>());
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

/// json_schema_of<T>() with each object's fields in their declared order
/// (schema.hpp), so that its problems are reported in that order, as
/// pydantic's are: what json_as<T> and query_as<T> validate with.
template <class T>
nlohmann::json checking_schema_of() {
  return detail::schema_of<T, true>();
}

/// A T from JSON that json_schema_of<T>() has accepted (validate() first:
/// other JSON may throw nlohmann::json's type errors).
template <class T>
T decode_json(const nlohmann::json& j) {
  return detail::decode<T>(j);
}

}  // namespace corio::http
