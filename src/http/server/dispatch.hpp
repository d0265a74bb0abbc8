// From a request to its handler's answer, the same for every protocol the
// server speaks (an HTTP/1.1 connection, an HTTP/2 stream): the route,
// the middleware, the error hook for what no handler answers and for what
// a handler throws.
#pragma once

#include <exception>
#include <optional>

#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/task.hpp>

#include "http/server/server_connection.hpp"

namespace corio::http::detail {

// The route's handler for req, through the middleware if any; an empty
// Coro when `answer` was set to the answer instead (an unmatched route
// without middleware: no frame for it).
Coro<Response> start_handler(const ServerShared& shared, Request& req, Response& answer);

// Called in a catch block: the answer the exception stands for. An
// HTTPException's, shaped; a ParseError's (a body that broke the
// protocol: `body_broken` is set, the body cannot be skipped); else a 500,
// the exception reported through the loop's exception handler for `task`.
Response failure_answer(const ServerShared& shared, Request& req, bool& body_broken,
                        std::optional<TaskRef> task);

}  // namespace corio::http::detail
