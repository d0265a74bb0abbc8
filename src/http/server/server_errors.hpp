// The server's error answers: every one goes through shape_error, which
// applies the error hook (Server::on_error), so a service answers in one
// format (JSON, say) whether a handler threw, no route matched or the
// request could not be read.
#pragma once

#include <corio/http/server.hpp>

#include "http/server/server_connection.hpp"

namespace corio::http::detail {

// The answer for error: the hook's (plus the error's headers it did not
// set), or Response::from(error) without a hook or when the hook throws.
Response shape_error(const ServerShared& shared, const Request& req, const HTTPException& error);

// The 404, or the 405 with Allow, of a path the router did not match.
HTTPException unmatched(const Router::Match& match);

// The innermost link of a middleware chain: the handler, its HTTPException
// shaped into a Response, so every middleware sees an answer.
Coro<Response> call_handler(const ServerShared& shared, const Handler& handler, Request& req);

// A handler standing in for an unmatched route, so middleware runs for it.
Coro<Response> raise_error(HTTPException error);

}  // namespace corio::http::detail
