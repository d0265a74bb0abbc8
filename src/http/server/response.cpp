// Response's factories and the reason phrases (see response.hpp).
#include <nlohmann/json.hpp>

#include <corio/http/response.hpp>

namespace corio::http {

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 426: return "Upgrade Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

Response Response::text(std::string body, int status, std::string_view content_type) {
  Response r(status);
  r.headers.add_copy("Content-Type", content_type);  // no allocation on the steady state
  r.body = std::move(body);
  return r;
}

Response Response::json(const nlohmann::json& value, int status) {
  return text(value.dump(), status, "application/json");
}

Response Response::from(const HTTPException& error) {
  Response r = text(error.body(), error.status(), error.content_type());
  for (const Header& h : error.headers()) r.headers.add(h.name, h.value);
  return r;
}

HTTPException::HTTPException(int status, const std::string& message, Headers headers)
    : std::runtime_error(message), status_(status), body_(message), headers_(std::move(headers)) {}

HTTPException HTTPException::json(int status, const nlohmann::json& body, Headers headers) {
  return with_body(status, body.dump(), "application/json", std::move(headers));
}

HTTPException HTTPException::with_body(int status, std::string body, std::string_view content_type,
                                       Headers headers) {
  HTTPException e(status, body, std::move(headers));
  e.content_type_ = std::string(content_type);
  return e;
}

Response Response::file(std::string path) {
  Response r(200);
  r.file_path = std::move(path);
  return r;
}

Response Response::stream(Producer producer, int status, std::string_view content_type) {
  Response r(status);
  r.headers.add_copy("Content-Type", content_type);
  r.producer = std::move(producer);
  return r;
}

}  // namespace corio::http
