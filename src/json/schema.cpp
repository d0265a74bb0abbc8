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
#include <optional>

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

class Validator {
 public:
  std::vector<SchemaError> problems;

  void check(const json& schema, const json& value, const std::string& at) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(at, "no value is allowed here");
      return;
    }
    if (!schema.is_object()) return;
    check_type(schema, value, at);
    check_enum(schema, value, at);
    if (value.is_number()) check_number(schema, value.get<double>(), at);
    if (value.is_string()) check_string(schema, value.get_ref<const std::string&>(), at);
    if (value.is_array()) check_array(schema, value, at);
    if (value.is_object()) check_object(schema, value, at);
    check_combinators(schema, value, at);
  }

 private:
  void fail(const std::string& at, const std::string& what) {
    problems.push_back(SchemaError{at.empty() ? "/" : at, what});
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

  void check_type(const json& schema, const json& value, const std::string& at) {
    const auto t = schema.find("type");
    if (t == schema.end()) return;
    if (t->is_string()) {
      if (!has_type(value, t->get<std::string>())) {
        fail(at, fmt::format("must be of type {}, not {}", t->get<std::string>(), value.type_name()));
      }
    } else if (t->is_array()) {
      for (const json& one : *t) {
        if (one.is_string() && has_type(value, one.get<std::string>())) return;
      }
      fail(at, fmt::format("must be one of the types {}, not {}", t->dump(), value.type_name()));
    }
  }

  void check_enum(const json& schema, const json& value, const std::string& at) {
    if (const auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
      if (std::find(e->begin(), e->end(), value) == e->end()) {
        fail(at, fmt::format("must be one of {}", e->dump()));
      }
    }
    if (const auto c = schema.find("const"); c != schema.end() && *c != value) {
      fail(at, fmt::format("must be {}", c->dump()));
    }
  }

  void check_number(const json& schema, double v, const std::string& at) {
    const auto bound = [&](const char* key, auto violates, const char* words) {
      const auto b = schema.find(key);
      if (b != schema.end() && b->is_number() && violates(v, b->template get<double>())) {
        fail(at, fmt::format("must be {} {}", words, b->dump()));
      }
    };
    bound("minimum", [](double x, double b) { return x < b; }, "at least");
    bound("maximum", [](double x, double b) { return x > b; }, "at most");
    bound("exclusiveMinimum", [](double x, double b) { return x <= b; }, "greater than");
    bound("exclusiveMaximum", [](double x, double b) { return x >= b; }, "less than");
  }

  static std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count every byte but continuations
    return n;
  }

  void check_size(const json& schema, std::size_t size, const char* min_key, const char* max_key,
                  const char* unit, const std::string& at) {
    // A count bound is a non-negative integer; anything else bounds nothing.
    const auto bound = [&](const char* key) -> std::optional<std::size_t> {
      const auto b = schema.find(key);
      if (b == schema.end() || !b->is_number_integer() || b->get<long long>() < 0) return std::nullopt;
      return b->get<std::size_t>();
    };
    if (const auto lo = bound(min_key); lo && size < *lo) {
      fail(at, fmt::format("must have at least {} {}", *lo, unit));
    }
    if (const auto hi = bound(max_key); hi && size > *hi) {
      fail(at, fmt::format("must have at most {} {}", *hi, unit));
    }
  }

  void check_string(const json& schema, const std::string& s, const std::string& at) {
    check_size(schema, code_points(s), "minLength", "maxLength", "characters", at);
  }

  void check_array(const json& schema, const json& value, const std::string& at) {
    check_size(schema, value.size(), "minItems", "maxItems", "items", at);
    const auto items = schema.find("items");
    if (items == schema.end()) return;
    for (std::size_t i = 0; i < value.size(); ++i) check(*items, value[i], fmt::format("{}/{}", at, i));
  }

  void check_object(const json& schema, const json& value, const std::string& at) {
    if (const auto req = schema.find("required"); req != schema.end() && req->is_array()) {
      for (const json& name : *req) {
        if (name.is_string() && !value.contains(name.get<std::string>())) {
          fail(at, fmt::format("missing required property \"{}\"", name.get<std::string>()));
        }
      }
    }
    const auto props = schema.find("properties");
    const auto extra = schema.find("additionalProperties");
    for (const auto& [key, v] : value.items()) {
      const std::string where = at + "/" + pointer_token(key);
      if (props != schema.end() && props->is_object() && props->contains(key)) {
        check((*props)[key], v, where);
      } else if (extra != schema.end()) {
        if (extra->is_boolean() && !extra->get<bool>()) {
          fail(where, "is not an allowed property");
        } else {
          check(*extra, v, where);
        }
      }
    }
  }

  // How many problems value has against schema, without recording them.
  static std::size_t count(const json& schema, const json& value, const std::string& at) {
    Validator v;
    v.check(schema, value, at);
    return v.problems.size();
  }

  void check_combinators(const json& schema, const json& value, const std::string& at) {
    if (const auto all = schema.find("allOf"); all != schema.end() && all->is_array()) {
      for (const json& s : *all) check(s, value, at);
    }
    const auto matches = [&](const json& list) {
      std::size_t n = 0;
      for (const json& s : list) n += count(s, value, at) == 0;
      return n;
    };
    if (const auto any = schema.find("anyOf"); any != schema.end() && any->is_array()) {
      if (matches(*any) == 0) fail(at, "matches none of the schemas in anyOf");
    }
    if (const auto one = schema.find("oneOf"); one != schema.end() && one->is_array()) {
      if (matches(*one) != 1) fail(at, "must match exactly one of the schemas in oneOf");
    }
    if (const auto no = schema.find("not"); no != schema.end() && count(*no, value, at) == 0) {
      fail(at, "matches the schema in not");
    }
  }
};

}  // namespace

std::string SchemaError::to_string() const { return path + ": " + message; }

std::vector<SchemaError> schema_errors(const json& schema, const json& value) {
  Validator v;
  v.check(schema, value, "");
  return std::move(v.problems);
}

std::vector<std::string> validate(const json& schema, const json& value) {
  std::vector<std::string> out;
  for (const SchemaError& e : schema_errors(schema, value)) out.push_back(e.to_string());
  return out;
}

}  // namespace corio::http
