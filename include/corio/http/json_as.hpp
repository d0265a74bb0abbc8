/// \file
/// Request::json_as<T>(): a request body as a C++ struct (its fields listed
/// with json_fields.hpp), as FastAPI's typed body parameters:
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> forecast(Request& req) {
///       const Forecast f = co_await req.json_as<Forecast>();
///       co_return Response::text(f.city);
///     }
///
/// Not JSON: HTTPException(400). JSON that does not match the struct's
/// schema: HTTPException(422) with every problem, as JSON (see
/// Request::json(schema)); both through the server's error hook. The
/// member is declared in request.hpp; this header defines it, so include
/// it where json_as is called (without it the call does not link).
#pragma once

#include <corio/coro.hpp>
#include <corio/json/fields.hpp>
#include <corio/http/request.hpp>

namespace corio::http {

template <class T>
Coro<T> Request::json_as() {
  // Built once per type: the schema depends on T only.
  static const nlohmann::json schema = json_schema_of<T>();
  const nlohmann::json body = co_await json(schema);
  co_return decode_json<T>(body);
}

}  // namespace corio::http
