// Typed path and query parameters (Request::path_as, query_as): a
// parameter's text converted as FastAPI converts it, and a conversion that
// fails answered in FastAPI's 422 shape, pydantic's words and type names
// (json/schema.hpp's error_details gives the same shape for bodies).
#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <corio/http/http_exception.hpp>
#include <corio/http/request.hpp>
#include <corio/json/fields.hpp>
#include <corio/json/schema.hpp>

namespace corio::http::detail {

namespace {

using nlohmann::json;

// Why a text is not of its type: pydantic's type and msg.
struct Refusal {
  const char* type;
  const char* msg;
};
constexpr Refusal kMissing{"missing", "Field required"};
constexpr Refusal kInteger{"int_parsing", "Input should be a valid integer, unable to parse string as an integer"};
constexpr Refusal kTooBig{"int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size"};
constexpr Refusal kNumber{"float_parsing", "Input should be a valid number, unable to parse string as a number"};
constexpr Refusal kBool{"bool_parsing", "Input should be a valid boolean, unable to interpret input"};

json entry(const Refusal& why, json loc, const std::string_view* text) {
  return {{"type", why.type}, {"loc", std::move(loc)}, {"msg", why.msg},
          {"input", text != nullptr ? json(*text) : json(nullptr)}};
}

[[noreturn]] void refuse(const Refusal& why, const char* where, std::string_view name, const std::string_view* text) {
  throw HTTPException::json(422, {{"detail", json::array({entry(why, {where, name}, text)})}});
}

const std::string_view& present(const std::string_view* text, const char* where, std::string_view name) {
  if (text == nullptr) refuse(kMissing, where, name, text);
  return *text;
}

std::optional<std::int64_t> to_integer(std::string_view s, bool& too_big) {
  std::int64_t v = 0;
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+');  // pydantic takes "+5"
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  too_big = ec == std::errc::result_out_of_range;
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool equals_lower(std::string_view text, std::string_view word) {
  if (text.size() != word.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
    if (c != word[i]) return false;
  }
  return true;
}

std::optional<bool> to_bool(std::string_view s) {
  for (const char* yes : {"true", "1", "yes", "on", "t", "y"}) {
    if (equals_lower(s, yes)) return true;
  }
  for (const char* no : {"false", "0", "no", "off", "f", "n"}) {
    if (equals_lower(s, no)) return false;
  }
  return std::nullopt;
}

// text as the JSON value its schema's type asks for, or the Refusal.
std::optional<json> to_json(std::string_view text, const json& schema, Refusal& why) {
  const std::string type = schema.is_object() ? schema.value("type", "") : "";
  bool too_big = false;
  if (type == "integer") {
    const auto v = to_integer(text, too_big);
    why = too_big ? kTooBig : kInteger;
    return v ? std::optional<json>(*v) : std::nullopt;
  }
  if (type == "number") {
    const auto v = to_number(text);
    why = kNumber;
    return v ? std::optional<json>(*v) : std::nullopt;
  }
  if (type == "boolean") {
    const auto v = to_bool(text);
    why = kBool;
    return v ? std::optional<json>(*v) : std::nullopt;
  }
  return json(text);
}

}  // namespace

std::int64_t param_integer(const std::string_view* text, const char* where, std::string_view name,
                           std::int64_t min, std::int64_t max) {
  bool too_big = false;
  const std::optional<std::int64_t> v = to_integer(present(text, where, name), too_big);
  if (too_big || (v && (*v < min || *v > max))) refuse(kTooBig, where, name, text);
  if (!v) refuse(kInteger, where, name, text);
  return *v;
}

double param_number(const std::string_view* text, const char* where, std::string_view name) {
  const std::optional<double> v = to_number(present(text, where, name));
  if (!v) refuse(kNumber, where, name, text);
  return *v;
}

bool param_bool(const std::string_view* text, const char* where, std::string_view name) {
  const std::optional<bool> v = to_bool(present(text, where, name));
  if (!v) refuse(kBool, where, name, text);
  return *v;
}

std::string param_string(const std::string_view* text, const char* where, std::string_view name) {
  return std::string(present(text, where, name));
}

namespace {

// value's problems against rules, each loc [where, name], input the text as sent.
void check_value(const json& value, const Constraints& rules, const char* where, std::string_view name,
                 std::string_view text) {
  json schema = json::object();
  add_constraint_keywords(schema, rules);
  json problems = error_details(schema, value, where);
  if (problems.empty()) return;
  for (json& e : problems) {
    e["loc"] = {where, name};
    e["input"] = text;
  }
  throw HTTPException::json(422, {{"detail", std::move(problems)}});
}

}  // namespace

void check_param(double value, const Constraints& rules, const char* where, std::string_view name,
                 std::string_view text) {
  check_value(value, rules, where, name, text);
}

void check_param(std::string_view value, const Constraints& rules, const char* where, std::string_view name) {
  check_value(value, rules, where, name, value);
}

// Each of the schema's properties from the query, converted by its type (an
// array from every value of a repeated name), then checked against the
// schema; every problem of either step in one 422. Names the schema does
// not list are ignored, as FastAPI ignores them.
json query_object(const QueryParams& query, const json& schema) {
  json object = json::object();
  json problems = json::array();
  json unreadable = json::array();  // names whose text is not of their type: no more problems for them
  json sent = json::object();       // each name's text(s), as the 422's input (FastAPI's)
  const json properties = schema.value("properties", json::object());
  for (const auto& [name, property] : properties.items()) {
    const std::vector<std::string_view> texts = query.get_all(name);
    if (texts.empty()) continue;
    const bool many = property.value("type", "") == "array";
    sent[name] = many ? json(texts) : json(texts[0]);
    json value = json::array();
    for (std::size_t i = 0; i < (many ? texts.size() : 1); ++i) {
      Refusal why = kMissing;
      std::optional<json> v = to_json(texts[i], many ? property.value("items", json()) : property, why);
      if (!v) problems.push_back(entry(why, many ? json{"query", name, i} : json{"query", name}, &texts[i]));
      if (v) value.push_back(std::move(*v));
    }
    if (value.size() != (many ? texts.size() : 1)) {
      unreadable.push_back(name);
    } else {
      object[name] = many ? std::move(value) : std::move(value[0]);
    }
  }
  for (json& e : error_details(schema, object, "query")) {
    if (e["loc"].size() > 1 && std::find(unreadable.begin(), unreadable.end(), e["loc"][1]) != unreadable.end()) continue;
    const json& loc = e["loc"];
    if (e["type"] == "missing") {
      e["input"] = nullptr;  // FastAPI's: nothing was given
    } else if (loc.size() > 1) {
      e["input"] = loc.size() == 2 ? sent[loc[1].get<std::string>()] : sent[loc[1].get<std::string>()][loc[2].get<std::size_t>()];
    }
    problems.push_back(std::move(e));
  }
  if (!problems.empty()) throw HTTPException::json(422, {{"detail", std::move(problems)}});
  return object;
}

}  // namespace corio::http::detail
