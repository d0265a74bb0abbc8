// start_handler and failure_answer (see dispatch.hpp).
#include "http/server/dispatch.hpp"

#include <corio/event_loop.hpp>

#include "http/server/server_errors.hpp"

namespace corio::http::detail {

namespace {

// Middleware runs for unmatched routes too (CORS, logging): around a handler
// that raises the error, which lives in this frame while the chain runs.
Coro<Response> unmatched_through_middleware(const ServerShared& shared, Request& req,
                                            HTTPException error) {
  const Handler raise = [error](Request&) { return raise_error(error); };
  const Next chain(shared, 0, raise);
  co_return co_await chain(req);
}

}  // namespace

Coro<Response> start_handler(const ServerShared& shared, Request& req, Response& answer) {
  const bool connect = req.method() == "CONNECT";
  const std::string connect_path = connect ? "/" + req.target() : std::string();
  const Router::Match match = shared.router.resolve(
      req.method(), connect ? std::string_view(connect_path) : req.raw_path(), req.match_info());
  if (match.handler) {
    if (shared.middleware.empty()) return (*match.handler)(req);
    return Next(shared, 0, *match.handler)(req);  // each middleware holds its Next by value
  }
  HTTPException error = connect ? HTTPException(501, "CONNECT is not supported") : unmatched(match);
  if (shared.middleware.empty()) {
    answer = shape_error(shared, req, error);
    return {};
  }
  return unmatched_through_middleware(shared, req, std::move(error));
}

Response failure_answer(const ServerShared& shared, Request& req, bool& body_broken,
                        std::optional<TaskRef> task) {
  try {
    throw;
  } catch (const HTTPException& e) {
    return shape_error(shared, req, e);
  } catch (const ParseError& e) {
    body_broken = true;
    return shape_error(shared, req, HTTPException(e.status(), e.what()));
  } catch (const std::exception&) {
    get_running_loop().call_exception_handler(
        {"Error handling request " + req.method() + " " + req.target(), std::current_exception(),
         std::move(task)});
    return shape_error(shared, req, HTTPException(500, "Internal Server Error"));
  }
}

}  // namespace corio::http::detail
