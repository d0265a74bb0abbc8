// corio::pg values: C++ types to query parameters and from result columns.
//
// Both directions go through PostgreSQL's text format, which every type has
// and which libpq hands over without a copy; bytea parameters are sent in the
// binary format so that any byte (NUL included) stays data.
//
//   integers  <-> int2/int4/int8      float/double <-> float4/float8
//   bool      <-> bool                std::string(_view), const char* <-> text
//   Bytea     <-> bytea               std::string      <-  numeric (exact, as text)
//   nlohmann::json <-> json/jsonb     (include <nlohmann/json.hpp> to use it)
//   Date (std::chrono::sys_days)       <-> date
//   Timestamp (sys_time<microseconds>) <-> timestamp / timestamptz (UTC)
//   std::optional<T>  <-> NULL or T
//
// Add a type by specialising Encode<T> (to_param) and Decode<T> (from_text).
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json_fwd.hpp>

#include <corio/pg/error.hpp>

namespace corio::pg {

// A bytea value: binary-safe bytes (std::string as a byte buffer).
struct Bytea {
  std::string bytes;
  bool operator==(const Bytea&) const = default;
};

using Date = std::chrono::sys_days;
using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

// One parameter as libpq takes it: text (or bytes when binary), or NULL.
struct Param {
  std::optional<std::string> value;
  bool binary = false;
};

template <class T>
struct Encode;  // static Param to_param(const T&)
template <class T>
struct Decode;  // static T from_text(std::string_view)

namespace detail {
std::string format_double(double v);
double parse_double(std::string_view text);
std::int64_t parse_int(std::string_view text, std::int64_t min, std::int64_t max);
std::uint64_t parse_uint(std::string_view text, std::uint64_t max);
std::string format_date(Date d);
Date parse_date(std::string_view text);
std::string format_timestamp(Timestamp t);
Timestamp parse_timestamp(std::string_view text);
std::string decode_bytea_hex(std::string_view text);
}  // namespace detail

template <std::integral T>
requires(!std::same_as<T, bool>) struct Encode<T> {
  static Param to_param(T v) { return {std::to_string(v)}; }
};
template <std::integral T>
requires(!std::same_as<T, bool>) struct Decode<T> {
  static T from_text(std::string_view s) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(detail::parse_int(s, std::numeric_limits<T>::min(),
                                              std::numeric_limits<T>::max()));
    } else {
      return static_cast<T>(detail::parse_uint(s, std::numeric_limits<T>::max()));
    }
  }
};

template <std::floating_point T>
struct Encode<T> {
  static Param to_param(T v) { return {detail::format_double(static_cast<double>(v))}; }
};
template <std::floating_point T>
struct Decode<T> {
  static T from_text(std::string_view s) { return static_cast<T>(detail::parse_double(s)); }
};

template <>
struct Encode<bool> {
  static Param to_param(bool v) { return {std::string(v ? "t" : "f")}; }
};
template <>
struct Decode<bool> {
  static bool from_text(std::string_view s);
};

template <>
struct Encode<std::string> {
  static Param to_param(const std::string& v) { return {v}; }
};
template <>
struct Encode<std::string_view> {
  static Param to_param(std::string_view v) { return {std::string(v)}; }
};
template <>
struct Encode<const char*> {
  static Param to_param(const char* v) { return {std::string(v)}; }
};
template <std::size_t N>
struct Encode<char[N]> {
  static Param to_param(const char* v) { return {std::string(v)}; }
};
template <>
struct Decode<std::string> {
  static std::string from_text(std::string_view s) { return std::string(s); }
};
// Valid until the Result it came from is destroyed.
template <>
struct Decode<std::string_view> {
  static std::string_view from_text(std::string_view s) { return s; }
};

template <>
struct Encode<Bytea> {
  static Param to_param(const Bytea& v) { return {v.bytes, true}; }
};
template <>
struct Decode<Bytea> {
  static Bytea from_text(std::string_view s) { return {detail::decode_bytea_hex(s)}; }
};

template <>
struct Encode<Date> {
  static Param to_param(Date d) { return {detail::format_date(d)}; }
};
template <>
struct Decode<Date> {
  static Date from_text(std::string_view s) { return detail::parse_date(s); }
};
template <>
struct Encode<Timestamp> {
  static Param to_param(Timestamp t) { return {detail::format_timestamp(t)}; }
};
template <>
struct Decode<Timestamp> {
  static Timestamp from_text(std::string_view s) { return detail::parse_timestamp(s); }
};

template <>
struct Encode<nlohmann::json> {
  static Param to_param(const nlohmann::json& v);
};
template <>
struct Decode<nlohmann::json> {
  static nlohmann::json from_text(std::string_view s);
};

template <class T>
struct Encode<std::optional<T>> {
  static Param to_param(const std::optional<T>& v) {
    if (!v) return {};
    return Encode<T>::to_param(*v);
  }
};
template <>
struct Encode<std::nullopt_t> {
  static Param to_param(std::nullopt_t) { return {}; }
};

template <class T>
Param to_param(const T& v) {
  return Encode<std::remove_cvref_t<T>>::to_param(v);
}

}  // namespace corio::pg
