/// \file
/// Typed tools, as FastMCP derives a tool from its type hints: the arguments
/// are a C++ struct whose fields are listed once (name, member, description);
/// the tool's inputSchema is generated from that list and the arguments are
/// decoded into the struct before the handler runs. The field list is the
/// json layer's (corio/json/fields.hpp, which the HTTP server's
/// Request::json_as<T> uses too): corio::mcp::Fields<T> and
/// corio::http::Fields<T> are two names for one list, specialize either.
///
/// <!-- doc: global -->
///     struct Weather {
///       std::string city;
///       int days = 0;
///       std::optional<bool> metric;
///     };
///     template <> struct corio::mcp::Fields<Weather> {
///       static constexpr auto list = std::tuple{field("city", &Weather::city, "The city"),
///                                               field("days", &Weather::days, "How many days"),
///                                               field("metric", &Weather::metric)};
///     };
///     void add_weather(corio::mcp::Server& server) {
///       corio::mcp::add_tool<Weather>(server, "forecast", "The weather",
///           [](const Weather& w, corio::mcp::Context&) -> corio::Coro<corio::mcp::ToolResult> {
///             co_return corio::mcp::ToolResult::text(w.city);
///           });
///     }
///
/// Field types: std::string, bool, integers, floating point, std::vector<T>,
/// std::map<std::string, T>, json (anything), another struct with Fields,
/// and std::optional<T> for a field that may be left out (every other field
/// is required, unless marked optional()). Constraints in the list (ge, le,
/// min_length, max_length, pattern, one_of: json_fields.hpp) become the
/// inputSchema's keywords, so the client sees them, and hold every call. The
/// arguments are checked against the generated schema as any tool's are
/// (schema.hpp): a mismatch is a tool error naming the field ("/days: must
/// be an integer"), and the handler does not run.
#pragma once

#include <string>
#include <utility>

#include <corio/coro.hpp>
#include <corio/json/fields.hpp>
#include <corio/mcp/server.hpp>

namespace corio::mcp {

using corio::http::Field;
using corio::http::field;

/// Specialize with `static constexpr auto list = std::tuple{field(...), ...};`
/// (or specialize corio::http::Fields<T>: the same list, see json_fields.hpp).
template <class T>
struct Fields;

namespace detail {

template <class T>
concept has_mcp_fields = requires { Fields<T>::list; };

// Owns the decoded arguments for the handler's whole run (the handler
// takes them by reference and may suspend).
template <class Args, class F>
Coro<ToolResult> call_typed(const F& handler, Args args, Context& ctx) {
  co_return co_await handler(std::as_const(args), ctx);
}

}  // namespace detail

/// The schema generated for Args (an object with its fields).
template <class Args>
json input_schema_of() {
  return http::json_schema_of<Args>();
}

/// A tool whose handler takes its arguments as an Args:
/// Coro<ToolResult>(const Args&, Context&). tool: the rest of the tool's
/// description (title, annotations, ...); its input_schema is generated.
template <class Args, class F>
void add_tool(Server& server, Tool tool, F handler) {
  tool.input_schema = input_schema_of<Args>();
  server.add_tool(std::move(tool), [handler = std::move(handler)](const json& args, Context& ctx) {
    return detail::call_typed<Args>(handler, http::decode_json<Args>(args), ctx);
  });
}

/// add_tool() with a Tool of only a name and a description.
template <class Args, class F>
void add_tool(Server& server, std::string name, std::string description, F handler) {
  Tool tool;
  tool.name = std::move(name);
  tool.description = std::move(description);
  add_tool<Args>(server, std::move(tool), std::move(handler));
}

}  // namespace corio::mcp

/// A list given as corio::mcp::Fields<T> is the http layer's list for T.
template <class T>
  requires corio::mcp::detail::has_mcp_fields<T>
struct corio::http::Fields<T> {
  static constexpr auto list = corio::mcp::Fields<T>::list;  ///< corio::mcp::Fields<T>'s
};
