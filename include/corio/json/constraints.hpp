/// \file
/// corio::http::Constraints: what a value may be beyond its type, pydantic's
/// Field(...) arguments by their names (ge, gt, le, lt, min_length,
/// max_length, pattern). A field list sets them with Field's setters
/// (json_fields.hpp); a typed path or query parameter takes them as an
/// argument (request.hpp):
///
/// <!-- doc: body (corio::http::Request& req) -->
///     const int limit = req.query_as<int>("limit", 10, {.ge = 1, .le = 100});
///
/// Each stands for its JSON Schema keyword (json_schema.hpp says how it is
/// checked): minimum, exclusiveMinimum, maximum, exclusiveMaximum,
/// minLength / minItems, maxLength / maxItems, pattern. Kept apart from
/// json_fields.hpp so that request.hpp can take them without nlohmann::json.
#pragma once

#include <cstddef>
#include <optional>

namespace corio::http {

/// What a value may be beyond its type; unset ones bound nothing.
struct Constraints {
  std::optional<double> ge = {};               ///< "minimum"
  std::optional<double> gt = {};               ///< "exclusiveMinimum"
  std::optional<double> le = {};               ///< "maximum"
  std::optional<double> lt = {};               ///< "exclusiveMaximum"
  std::optional<std::size_t> min_length = {};  ///< "minLength", or "minItems" for a vector
  std::optional<std::size_t> max_length = {};  ///< "maxLength", or "maxItems" for a vector
  const char* pattern = nullptr;            ///< "pattern" (ECMAScript, searched)
  bool optional = false;                    ///< a field's: not "required"; its struct's value as "default"
};

}  // namespace corio::http
