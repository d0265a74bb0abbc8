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
/// JSON that does not match the struct's schema: HTTPException(422) with
/// every problem in FastAPI's shape, in the order the fields are declared
/// (as pydantic's); a body that is not JSON, or none: a 422 json_invalid or
/// missing, as FastAPI's (see Request::json(schema)); both through the
/// server's error hook.
///
/// Request::query_as<T>() is the same for the query string, as FastAPI's
/// query parameter models: each listed field read from the parameter of its
/// name (a std::vector from a repeated one), converted by its type, checked
/// with its constraints; loc ["query", name]. Names not listed are ignored.
///
/// <!-- doc: global -->
///     struct ItemPage {
///       int after = 0;
///       int limit = 10;
///       std::vector<std::string> tag;   // ?tag=a&tag=b
///     };
///     template <> struct corio::http::Fields<ItemPage> {
///       static constexpr auto list = std::tuple{field("after", &ItemPage::after).ge(0).optional(),
///                                               field("limit", &ItemPage::limit).ge(1).le(100).optional(),
///                                               field("tag", &ItemPage::tag).optional()};
///     };
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> list_items(Request& req) {
///       const ItemPage page = req.query_as<ItemPage>();   // ?limit=500: 422, less_than_equal
///       co_return Response::text(std::to_string(page.after + page.limit));
///     }
///
/// The members are declared in request.hpp; this header defines them, so
/// include it where json_as or query_as<T>() is called (without it the call
/// does not link).
#pragma once

#include <corio/coro.hpp>
#include <corio/json/fields.hpp>
#include <corio/http/request.hpp>

namespace corio::http {

template <class T>
Coro<T> Request::json_as() {
  // Built once per type: the schema depends on T only.
  static const nlohmann::json schema = checking_schema_of<T>();
  const nlohmann::json body = co_await json(schema);
  co_return decode_json<T>(body);
}

template <class T>
T Request::query_as() const {
  static const nlohmann::json schema = checking_schema_of<T>();
  return decode_json<T>(detail::query_object(query(), schema));
}

}  // namespace corio::http
