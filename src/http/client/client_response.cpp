// ClientResponse (see client_response.hpp): the head it was made with and
// the body, read through detail::ResponseBody; text() decodes it by its
// charset (charset.hpp).
#include <corio/http/client_response.hpp>

#include <charconv>

#include <nlohmann/json.hpp>

#include <corio/http/client_errors.hpp>
#include <corio/json/parse.hpp>

#include "http/wire/charset.hpp"
#include "http/client/client_body.hpp"

namespace corio::http {

ClientResponse::ClientResponse(ResponseHead head, std::string method, Url url,
                               std::vector<Redirect> history,
                               std::unique_ptr<detail::ResponseBody> body)
    : head_(std::move(head)),
      method_(std::move(method)),
      url_(std::move(url)),
      history_(std::move(history)),
      body_(std::move(body)) {}

ClientResponse::ClientResponse(ClientResponse&&) noexcept = default;

ClientResponse& ClientResponse::operator=(ClientResponse&& o) noexcept {
  if (this != &o) {
    release();
    head_ = std::move(o.head_);
    method_ = std::move(o.method_);
    url_ = std::move(o.url_);
    history_ = std::move(o.history_);
    body_ = std::move(o.body_);
  }
  return *this;
}

ClientResponse::~ClientResponse() { release(); }

HttpVersion ClientResponse::version() const noexcept {
  if (body_ && body_->http2()) return {2, 0};
  return {1, head_.version_minor};
}

void ClientResponse::raise_for_status() const {
  if (ok()) return;
  throw ClientResponseError(head_.status, std::to_string(head_.status) + " " + head_.reason +
                                              " for " + url_.to_string());
}

std::string_view ClientResponse::content_type() const noexcept {
  std::string_view v = head_.headers.get_or("Content-Type", "");
  v = v.substr(0, v.find(';'));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

std::optional<std::uint64_t> ClientResponse::content_length() const noexcept {
  const std::optional<std::string_view> v = head_.headers.get("Content-Length");
  std::uint64_t n = 0;
  if (!v || v->empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc{} || end != v->data() + v->size()) return std::nullopt;
  return n;
}

Coro<std::string> ClientResponse::read(std::size_t max_size) {
  std::string body;
  const std::optional<std::uint64_t> length = content_length();
  if (length && *length <= max_size && !head_.headers.contains("Content-Encoding")) {
    body.reserve(static_cast<std::size_t>(*length));
  }
  // One byte over the bound is enough to know it is over.
  while (co_await body_->pump(body, max_size + 1 - body.size())) {
    if (body.size() > max_size) {
      body_->release();
      throw ClientPayloadError("the response body is over " + std::to_string(max_size) + " bytes");
    }
  }
  co_return body;
}

std::optional<std::string> ClientResponse::charset() const {
  return detail::content_type_charset(head_.headers.get_or("Content-Type", ""));
}

Coro<std::string> ClientResponse::text(std::optional<std::string> encoding, std::size_t max_size) {
  std::string body = co_await read(max_size);
  if (!encoding) encoding = charset();
  if (!encoding) co_return body;  // aiohttp's fallback is UTF-8 too
  co_return detail::to_utf8(std::move(body), *encoding);
}

Coro<nlohmann::json> ClientResponse::json(std::size_t max_size) {
  const std::string body = co_await text(std::nullopt, max_size);
  co_return parse_json(body);
}

Coro<std::string> ClientResponse::read_chunk(std::size_t max) {
  std::string piece;
  co_await body_->pump(piece, max);
  co_return piece;
}

void ClientResponse::release() noexcept {
  if (body_) body_->release();
}

}  // namespace corio::http
