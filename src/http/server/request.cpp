// Request (see request.hpp): the head's parts, computed on first use, and
// the body, read through the connection.
#include <cassert>

#include <nlohmann/json.hpp>

#include <corio/errors.hpp>
#include <corio/http/request.hpp>
#include <corio/http/http_exception.hpp>
#include <corio/json/parse.hpp>
#include <corio/json/schema.hpp>
#include <corio/http/response.hpp>

#include "http/server/request_source.hpp"
#include "http/server/server_connection.hpp"

namespace corio::http {

std::string_view Request::raw_path() const noexcept {
  const std::string_view t = head_.target;
  return t.substr(0, t.find('?'));
}

std::string_view Request::query_string() const noexcept {
  const std::string_view t = head_.target;
  const std::size_t q = t.find('?');
  return q == std::string_view::npos ? std::string_view() : t.substr(q + 1);
}

const std::string& Request::path() const {
  if (!path_) {
    try {
      path_ = percent_decode(raw_path(), false);
    } catch (const ValueError& e) {
      throw HTTPException(400, std::string("bad path: ") + e.what());
    }
  }
  return *path_;
}

const QueryParams& Request::query() const {
  if (!query_) {
    try {
      query_ = parse_query(query_string());
    } catch (const ValueError& e) {
      throw HTTPException(400, std::string("bad query: ") + e.what());
    }
  }
  return *query_;
}

std::string Request::peername() const {
  return over_h1() ? conn()->peername() : source()->peername();
}

std::string_view Request::param(std::string_view name) const noexcept {
  return param_text(name).value_or(std::string_view());
}

std::optional<std::string_view> Request::param_text(std::string_view name) const noexcept {
  for (const auto& [key, value] : match_info_) {
    if (key == name) return value;
  }
  return std::nullopt;
}

Coro<std::string> Request::read() { return over_h1() ? conn()->read_all() : source()->read_all(); }

Coro<std::string> Request::read_chunk() {
  return over_h1() ? conn()->read_chunk() : source()->read_chunk();
}

const Headers& Request::trailers() const noexcept {
  return over_h1() ? conn()->trailers() : source()->trailers();
}

bool Request::is_upgrade() const noexcept {
  return over_h1() ? http::is_upgrade(head_) : source()->can_take();
}

Coro<std::pair<StreamReader, StreamWriter>> Request::take_connection(Response answer) {
  if (!over_h1()) return source()->take_connection(std::move(answer));
  return conn()->take_connection(std::move(answer));
}

detail::HttpConnection& detail::connection_of(Request& req) noexcept {
  assert(req.over_h1());  // callers check the version first (taken_place)
  return *req.conn();
}

detail::RequestSource* detail::source_of(Request& req) noexcept {
  return req.over_h1() ? nullptr : req.source();
}

detail::TakenPlace detail::taken_place(Request& req) {
  if (RequestSource* s = source_of(req)) return {s->loop_server(), s->new_slot()};
  HttpConnection& c = connection_of(req);
  return {c.loop_server(), c.give_slot()};
}

Coro<nlohmann::json> Request::json() {
  const std::string body = co_await read();
  try {
    co_return parse_json(body);
  } catch (const JsonError& e) {
    throw HTTPException(400, std::string("the body is not valid JSON: ") + e.what());
  }
}

namespace {

HTTPException unprocessable(nlohmann::json problem) {
  return HTTPException::json(422, {{"detail", nlohmann::json::array({std::move(problem)})}});
}

// A body the schema is to check, as FastAPI reads a declared body: none is a
// 422 "missing", text that is not JSON a 422 "json_invalid" at the byte the
// parser stopped (FastAPI's routing.py builds the same entry from Python's
// JSONDecodeError; ctx.error is corio's words, not Python's), and JSON over
// the parser's limits a 400, as FastAPI answers a body it cannot read.
nlohmann::json body_to_check(const std::string& body) {
  if (body.empty()) {
    throw unprocessable({{"type", "missing"}, {"loc", {"body"}}, {"msg", "Field required"}, {"input", nullptr}});
  }
  try {
    return parse_json(body);
  } catch (const JsonError& e) {
    if (e.kind() != JsonError::Kind::syntax) throw HTTPException(400, std::string("the body is not accepted: ") + e.what());
    throw unprocessable({{"type", "json_invalid"},
                         {"loc", {"body", e.offset()}},
                         {"msg", "JSON decode error"},
                         {"input", nlohmann::json::object()},
                         {"ctx", {{"error", e.what()}}}});
  }
}

}  // namespace

Coro<nlohmann::json> Request::json(nlohmann::json schema) {
  nlohmann::json body = body_to_check(co_await read());
  nlohmann::json problems = error_details(schema, body, "body");
  if (problems.empty()) co_return body;
  throw HTTPException::json(422, {{"detail", std::move(problems)}});
}

}  // namespace corio::http
