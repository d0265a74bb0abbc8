/// \file
/// The http layer in one include: the client session, the server, and the
/// parser, headers and URLs under both (corio/corio.hpp leaves them out, so
/// programs that do not speak HTTP do not compile it). json_fields.hpp and
/// json_as.hpp are left out too: they bring nlohmann/json.hpp with them.
#pragma once

#include <corio/http/client.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/http/client_response.hpp>
#include <corio/http/cookie_jar.hpp>
#include <corio/http/cors.hpp>
#include <corio/http/form_data.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/http_exception.hpp>
#include <corio/json/schema.hpp>
#include <corio/http/metrics.hpp>
#include <corio/http/multipart.hpp>
#include <corio/http/multipart_parser.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/request.hpp>
#include <corio/http/response.hpp>
#include <corio/http/retry.hpp>
#include <corio/http/router.hpp>
#include <corio/http/server.hpp>
#include <corio/http/tunnel.hpp>
#include <corio/http/url.hpp>
#include <corio/http/websocket.hpp>
#include <corio/http/ws_handlers.hpp>
