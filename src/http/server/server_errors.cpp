// Error answers through the hook (see server_errors.hpp).
#include "http/server/server_errors.hpp"

#include <corio/event_loop.hpp>
#include <corio/task.hpp>

namespace corio::http::detail {

Response shape_error(const ServerShared& shared, const Request& req, const HTTPException& error) {
  if (!shared.on_error) return Response::from(error);
  Response answer;
  try {
    answer = shared.on_error(req, error);
  } catch (const std::exception&) {
    get_running_loop().call_exception_handler(
        {"Error in the HTTP error hook for " + req.method() + " " + req.target(),
         std::current_exception(), current_task()});
    return Response::from(error);
  }
  for (const Header& h : error.headers()) {
    if (!answer.headers.contains(h.name)) answer.headers.add(h.name, h.value);
  }
  return answer;
}

HTTPException unmatched(const Router::Match& match) {
  Headers headers;
  if (!match.allow.empty()) headers.add("Allow", match.allow);
  return HTTPException(match.status, std::string(reason_phrase(match.status)), std::move(headers));
}

Coro<Response> call_handler(const ServerShared& shared, const Handler& handler, Request& req) {
  try {
    co_return co_await handler(req);
  } catch (const HTTPException& e) {
    co_return shape_error(shared, req, e);
  }
}

Coro<Response> raise_error(HTTPException error) {
  throw error;
  co_return Response();
}

}  // namespace corio::http::detail
