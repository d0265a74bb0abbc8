// The JSON Schema subset of json_schema.hpp: one recursive walk,
// collecting every problem with the JSON pointer of where it is.
//
// Each level of the walk descends one level of the schema (properties,
// items, the combinators) along with the value, so its depth is the
// schema's, which the server's author wrote, never the peer's; enum and
// const compare values recursively, but a peer's value is no deeper than
// the parser's limit (http/json.hpp).
#include <corio/json/schema.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <regex>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace corio::http {

namespace {

using nlohmann::json;

// A property name as a JSON pointer token (RFC 6901 section 3).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A value as pydantic's messages quote it: 'text', other values as JSON.
std::string quoted(const json& v) { return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump(); }

// pydantic's list of allowed values: "'a', 'b' or 'c'".
std::string expected_list(const json& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += quoted(values[i]);
  }
  return out;
}

std::string plural(std::size_t n, const char* unit) { return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s"); }

// A pattern, compiled once per thread; null when it does not compile (then
// it rejects nothing, as an unsupported keyword). __polynomial (libstdc++)
// picks the breadth-first matcher: linear in the input and no recursion
// per character, where the default one overflows the stack on a string of
// about a megabyte (measured: "^[a-z]+$" over 1,000,000 bytes) and
// backtracks exponentially on patterns such as "^(a|aa)+$"; it refuses
// back-references, which JSON Schema's patterns rarely use. Patterns come
// from schemas, which a peer may send (an MCP server's outputSchema): the
// cache is bounded.
const std::regex* compiled(const std::string& pattern) {
  thread_local std::unordered_map<std::string, std::optional<std::regex>> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    if (cache.size() >= 64) cache.clear();
    std::optional<std::regex> re;
    try {
      re.emplace(pattern, std::regex::ECMAScript | std::regex_constants::__polynomial);
    } catch (const std::regex_error&) {
    }
    it = cache.emplace(pattern, std::move(re)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// One problem as both shapes report it: SchemaError, and pydantic's entry.
struct Problem {
  SchemaError error;
  json loc;
  std::string msg;
  const json* input;
  json ctx;
};

class Validator {
 public:
  std::vector<Problem> problems;

  void check(const json& schema, const json& value) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(value, "value_error", "no value is allowed here");
      return;
    }
    if (!schema.is_object()) return;
    if (!check_type(schema, value)) return;
    check_enum(schema, value);
    if (value.is_number()) check_number(schema, value);
    if (value.is_string()) check_string(schema, value);
    if (value.is_array()) check_array(schema, value);
    if (value.is_object()) check_object(schema, value);
    check_combinators(schema, value);
  }

 private:
  std::vector<json> at_;  // where the walk is: property names and array indices

  // message: corio's words; msg: pydantic's ("" for the value_error form).
  // The JSON pointer names the first `depth` steps of where the walk is
  // (a missing property's is its object's), loc all of them.
  void fail(const json& input, const char* type, std::string message, std::string msg = {}, json ctx = {},
            std::size_t depth = SIZE_MAX) {
    std::string path;
    for (std::size_t i = 0; i < std::min(depth, at_.size()); ++i) {
      path += "/" + (at_[i].is_string() ? pointer_token(at_[i].get<std::string>()) : at_[i].dump());
    }
    if (msg.empty()) msg = "Value error, " + message;
    problems.push_back(Problem{SchemaError{path.empty() ? "/" : path, std::move(message), type}, json(at_),
                               std::move(msg), &input, std::move(ctx)});
  }

  static bool has_type(const json& value, const std::string& type) {
    if (type == "integer") {
      return value.is_number_integer() ||
             (value.is_number_float() && std::trunc(value.get<double>()) == value.get<double>());
    }
    if (type == "number") return value.is_number();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "null") return value.is_null();
    return true;  // an unknown type name rejects nothing
  }

  // pydantic's type error for a value that is not of type.
  void fail_type(const json& value, const std::string& type, std::string message) {
    if (type == "integer" && value.is_number_float()) {
      return fail(value, "int_from_float", std::move(message),
                  "Input should be a valid integer, got a number with a fractional part");
    }
    static const std::pair<const char*, std::pair<const char*, const char*>> kinds[] = {
        {"integer", {"int_type", "a valid integer"}},   {"number", {"float_type", "a valid number"}},
        {"string", {"string_type", "a valid string"}},  {"boolean", {"bool_type", "a valid boolean"}},
        {"object", {"dict_type", "a valid dictionary"}}, {"array", {"list_type", "a valid list"}},
        {"null", {"none_required", "None"}}};
    for (const auto& [name, kind] : kinds) {
      if (type == name) return fail(value, kind.first, std::move(message), fmt::format("Input should be {}", kind.second));
    }
  }

  // False when the value is of none of the types: its other checks would only repeat it.
  bool check_type(const json& schema, const json& value) {
    const auto t = schema.find("type");
    if (t == schema.end()) return true;
    if (t->is_string()) {
      if (has_type(value, t->get<std::string>())) return true;
      fail_type(value, t->get<std::string>(),
                fmt::format("must be of type {}, not {}", t->get<std::string>(), value.type_name()));
      return false;
    }
    if (!t->is_array() || t->empty()) return true;
    for (const json& one : *t) {
      if (one.is_string() && has_type(value, one.get<std::string>())) return true;
    }
    fail_type(value, (*t)[0].is_string() ? (*t)[0].get<std::string>() : "",
              fmt::format("must be one of the types {}, not {}", t->dump(), value.type_name()));
    return false;
  }

  void check_enum(const json& schema, const json& value) {
    if (const auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
      if (std::find(e->begin(), e->end(), value) == e->end()) {
        const std::string expected = expected_list(*e);
        fail(value, "enum", fmt::format("must be one of {}", e->dump()), "Input should be " + expected,
             {{"expected", expected}});
      }
    }
    if (const auto c = schema.find("const"); c != schema.end() && *c != value) {
      fail(value, "literal_error", fmt::format("must be {}", c->dump()), "Input should be " + quoted(*c),
           {{"expected", quoted(*c)}});
    }
  }

  void check_number(const json& schema, const json& value) {
    const double v = value.get<double>();
    const auto bound = [&](const char* key, auto violates, const char* words, const char* type, const char* ctx,
                           const char* pydantic_words) {
      const auto b = schema.find(key);
      if (b != schema.end() && b->is_number() && violates(v, b->template get<double>())) {
        fail(value, type, fmt::format("must be {} {}", words, b->dump()),
             fmt::format("Input should be {} {}", pydantic_words, b->dump()), {{ctx, *b}});
      }
    };
    bound("minimum", [](double x, double b) { return x < b; }, "at least", "greater_than_equal", "ge",
          "greater than or equal to");
    bound("maximum", [](double x, double b) { return x > b; }, "at most", "less_than_equal", "le",
          "less than or equal to");
    bound("exclusiveMinimum", [](double x, double b) { return x <= b; }, "greater than", "greater_than", "gt",
          "greater than");
    bound("exclusiveMaximum", [](double x, double b) { return x >= b; }, "less than", "less_than", "lt", "less than");
  }

  static std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count every byte but continuations
    return n;
  }

  // A count bound is a non-negative integer; anything else bounds nothing.
  static std::optional<std::size_t> count_bound(const json& schema, const char* key) {
    const auto b = schema.find(key);
    if (b == schema.end() || !b->is_number_integer() || b->get<long long>() < 0) return std::nullopt;
    return b->get<std::size_t>();
  }

  void check_string(const json& schema, const json& value) {
    const std::string& s = value.get_ref<const std::string&>();
    const std::size_t n = code_points(s);
    if (const auto lo = count_bound(schema, "minLength"); lo && n < *lo) {
      fail(value, "string_too_short", fmt::format("must have at least {} characters", *lo),
           "String should have at least " + plural(*lo, "character"), {{"min_length", *lo}});
    }
    if (const auto hi = count_bound(schema, "maxLength"); hi && n > *hi) {
      fail(value, "string_too_long", fmt::format("must have at most {} characters", *hi),
           "String should have at most " + plural(*hi, "character"), {{"max_length", *hi}});
    }
    const auto p = schema.find("pattern");
    const std::regex* re = p != schema.end() && p->is_string() ? compiled(p->get<std::string>()) : nullptr;
    if (re != nullptr && !std::regex_search(s, *re)) {
      fail(value, "string_pattern_mismatch", fmt::format("must match the pattern {}", p->dump()),
           fmt::format("String should match pattern '{}'", p->get<std::string>()), {{"pattern", *p}});
    }
  }

  void check_array(const json& schema, const json& value) {
    const std::size_t n = value.size();
    if (const auto lo = count_bound(schema, "minItems"); lo && n < *lo) {
      fail(value, "too_short", fmt::format("must have at least {} items", *lo),
           fmt::format("List should have at least {} after validation, not {}", plural(*lo, "item"), n),
           {{"field_type", "List"}, {"min_length", *lo}, {"actual_length", n}});
    }
    if (const auto hi = count_bound(schema, "maxItems"); hi && n > *hi) {
      fail(value, "too_long", fmt::format("must have at most {} items", *hi),
           fmt::format("List should have at most {} after validation, not {}", plural(*hi, "item"), n),
           {{"field_type", "List"}, {"max_length", *hi}, {"actual_length", n}});
    }
    const auto items = schema.find("items");
    if (items == schema.end()) return;
    for (std::size_t i = 0; i < n; ++i) {
      at_.emplace_back(i);
      check(*items, value[i]);
      at_.pop_back();
    }
  }

  // In the declared order (schema.hpp), when the schema gives one: each
  // listed property checked or found missing, as pydantic walks a model's
  // fields; then the required ones it left out, then the value's others.
  void check_object(const json& schema, const json& value) {
    const json& order = list_at(schema, detail::kFieldOrder);
    const json& required = list_at(schema, "required");
    const auto in = [](const json& list, const json& name) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    for (const json& name : order) {
      if (!name.is_string()) continue;
      if (const auto it = value.find(name.get<std::string>()); it != value.end()) {
        check_property(schema, it.key(), *it);
      } else if (in(required, name)) {
        missing(value, name);
      }
    }
    for (const json& name : required) {
      if (name.is_string() && !in(order, name) && !value.contains(name.get<std::string>())) missing(value, name);
    }
    for (const auto& [key, v] : value.items()) {
      if (!in(order, key)) check_property(schema, key, v);
    }
  }

  // schema[key] when it is a list, else an empty one.
  static const json& list_at(const json& schema, const char* key) {
    static const json kNone = json::array();
    const auto it = schema.find(key);
    return it != schema.end() && it->is_array() ? *it : kNone;
  }

  void missing(const json& object, const json& name) {
    at_.push_back(name);
    fail(object, "missing", fmt::format("missing required property \"{}\"", name.get<std::string>()),
         "Field required", {}, at_.size() - 1);
    at_.pop_back();
  }

  void check_property(const json& schema, const std::string& key, const json& v) {
    const auto props = schema.find("properties");
    const auto extra = schema.find("additionalProperties");
    at_.emplace_back(key);
    if (props != schema.end() && props->is_object() && props->contains(key)) {
      check((*props)[key], v);
    } else if (extra != schema.end()) {
      if (extra->is_boolean() && !extra->get<bool>()) {
        fail(v, "extra_forbidden", "is not an allowed property", "Extra inputs are not permitted");
      } else {
        check(*extra, v);
      }
    }
    at_.pop_back();
  }

  // How many problems value has against schema, without recording them.
  static std::size_t count(const json& schema, const json& value) {
    Validator v;
    v.check(schema, value);
    return v.problems.size();
  }

  void check_combinators(const json& schema, const json& value) {
    if (const auto all = schema.find("allOf"); all != schema.end() && all->is_array()) {
      for (const json& s : *all) check(s, value);
    }
    const auto matches = [&](const json& list) {
      std::size_t n = 0;
      for (const json& s : list) n += count(s, value) == 0;
      return n;
    };
    if (const auto any = schema.find("anyOf"); any != schema.end() && any->is_array()) {
      if (matches(*any) == 0) fail(value, "value_error", "matches none of the schemas in anyOf");
    }
    if (const auto one = schema.find("oneOf"); one != schema.end() && one->is_array()) {
      if (matches(*one) != 1) fail(value, "value_error", "must match exactly one of the schemas in oneOf");
    }
    if (const auto no = schema.find("not"); no != schema.end() && count(*no, value) == 0) {
      fail(value, "value_error", "matches the schema in not");
    }
  }
};

std::vector<Problem> walk(const json& schema, const json& value) {
  Validator v;
  v.check(schema, value);
  return std::move(v.problems);
}

}  // namespace

std::string SchemaError::to_string() const { return path + ": " + message; }

std::vector<SchemaError> schema_errors(const json& schema, const json& value) {
  std::vector<SchemaError> out;
  for (Problem& p : walk(schema, value)) out.push_back(std::move(p.error));
  return out;
}

std::vector<std::string> validate(const json& schema, const json& value) {
  std::vector<std::string> out;
  for (const SchemaError& e : schema_errors(schema, value)) out.push_back(e.to_string());
  return out;
}

json error_details(const json& schema, const json& value, std::string_view where) {
  json out = json::array();
  for (Problem& p : walk(schema, value)) {
    p.loc.insert(p.loc.begin(), where);
    json entry = {{"type", p.error.type}, {"loc", std::move(p.loc)}, {"msg", std::move(p.msg)}, {"input", *p.input}};
    if (!p.ctx.is_null()) entry["ctx"] = std::move(p.ctx);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace corio::http
