// H2ClientStream: one request on an HTTP/2 connection, its HEADERS built
// from a PreparedRequest, its response head and body as they arrive (see
// h2_client.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include <corio/event_loop.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/timeout.hpp>

#include "http/client/client_body.hpp"
#include "http/client/client_request.hpp"
#include "http/client/h2_client.hpp"

namespace corio::http::detail {

namespace {

// RFC 9113 section 8.2.2: connection-specific fields are not sent in h2
// (Host becomes :authority).
bool connection_specific(std::string_view name) noexcept {
  return iequals(name, "Connection") || iequals(name, "Keep-Alive") ||
         iequals(name, "Proxy-Connection") || iequals(name, "Transfer-Encoding") ||
         iequals(name, "Upgrade") || iequals(name, "Host") || iequals(name, "TE");
}

// The fields' storage while nghttp2 copies them (NGHTTP2_NV_FLAG_NONE).
class Fields {
 public:
  void add(std::string name, std::string value) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    strings_.push_back(std::move(name));
    strings_.push_back(std::move(value));
  }
  std::vector<nghttp2_nv> nv() {
    std::vector<nghttp2_nv> out;
    for (std::size_t i = 0; i + 1 < strings_.size(); i += 2) {
      out.push_back({bytes(strings_[i]), bytes(strings_[i + 1]), strings_[i].size(),
                     strings_[i + 1].size(), NGHTTP2_NV_FLAG_NONE});
    }
    return out;
  }

 private:
  static std::uint8_t* bytes(std::string& s) { return reinterpret_cast<std::uint8_t*>(s.data()); }
  std::vector<std::string> strings_;
};

// The fields HTTP/1.1's serialize_request sends, in h2's form; an
// extended CONNECT's :protocol among the pseudo-fields, which come first.
Fields request_fields(const PreparedRequest& req, std::string_view jar_cookies,
                      std::string_view protocol) {
  Fields f;
  f.add(":method", req.method);
  f.add(":scheme", req.url.is_https() ? "https" : "http");
  f.add(":authority", std::string(req.headers.get_or("Host", req.url.host_header())));
  f.add(":path", req.url.target());
  if (!protocol.empty()) f.add(":protocol", std::string(protocol));
  std::string cookies(jar_cookies);
  for (const Header& h : req.headers) {
    if (iequals(h.name, "Cookie")) {
      cookies = cookies.empty() ? h.value : h.value + "; " + cookies;
    } else if (!connection_specific(h.name) && !iequals(h.name, "Content-Length")) {
      f.add(h.name, h.value);
    }
  }
  if (!cookies.empty()) f.add("cookie", std::move(cookies));
  if (!req.headers.contains("User-Agent")) f.add("user-agent", "corio");
  if (!req.headers.contains("Accept")) f.add("accept", "*/*");
  if (req.auto_decompress && !req.headers.contains("Accept-Encoding")) {
    f.add("accept-encoding", "gzip, deflate");
  }
  if (req.body) f.add("content-length", std::to_string(req.body->size()));
  return f;
}

ssize_t read_request_body(nghttp2_session* session, std::int32_t id, std::uint8_t* buf,
                          std::size_t length, std::uint32_t* flags, nghttp2_data_source*, void*) {
  auto* s = static_cast<H2ClientStream*>(nghttp2_session_get_stream_user_data(session, id));
  if (s == nullptr) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // gone: reset it
  return s->read_out(buf, length, flags);
}

}  // namespace

std::int32_t submit_request(nghttp2_session* session, const PreparedRequest& req,
                            std::string_view cookies, H2ClientStream* stream,
                            std::string_view protocol) {
  Fields fields = request_fields(req, cookies, protocol);
  const std::vector<nghttp2_nv> nv = fields.nv();
  nghttp2_data_provider body;
  body.source.ptr = nullptr;
  body.read_callback = read_request_body;
  const bool sends = req.body || !protocol.empty();
  return nghttp2_submit_request(session, nullptr, nv.data(), nv.size(), sends ? &body : nullptr,
                                stream);
}

H2ClientStream::H2ClientStream(std::shared_ptr<H2ClientConnection> conn)
    : conn_(std::move(conn)), reused_(conn_->served() > 0) {
  next_.version_minor = 0;
}

void H2ClientStream::send(const PreparedRequest& req, std::string_view cookies,
                          std::string_view protocol) {
  if (!conn_->alive()) throw ClientConnectionError("the HTTP/2 connection is closing");
  if (req.body) request_body_ = *req.body;
  tunneling_ = !protocol.empty();
  id = submit_request(conn_->session(), req, cookies, this, protocol);
  if (id < 0) throw ClientConnectionError("the HTTP/2 connection can take no new stream");
  conn_->opened(this);
}

H2ClientStream::~H2ClientStream() { release(); }

void H2ClientStream::release() noexcept {
  if (!conn_) return;
  if (id < 0) {  // never sent
    conn_.reset();
    return;
  }
  if (!closed_ && !error_) {
    nghttp2_submit_rst_stream(conn_->session(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }
  // Unread bytes give their share of the connection's window back.
  if (body_.size() > body_at_ && !error_) {
    nghttp2_session_consume_connection(conn_->session(), body_.size() - body_at_);
  }
  body_.clear();
  body_at_ = 0;
  detach();
}

void H2ClientStream::detach() noexcept {
  if (!error_) conn_->forget(this);
  conn_.reset();
}

void H2ClientStream::add_field(std::string_view name, std::string_view value) {
  if (name == ":status") {
    next_.status = 0;
    for (const char c : value) next_.status = next_.status * 10 + (c - '0');
  } else if (name.empty() || name.front() != ':') {
    next_.headers.add(std::string(name), std::string(value));
  }
}

void H2ClientStream::head_end() {
  if (head_ready_) return;  // trailers: not kept (ClientResponse has no place for them)
  if (next_.status >= 200) {
    head_ = std::move(next_);
    head_ready_ = true;
  }
  next_ = ResponseHead{};
  next_.version_minor = 0;
  changed_.set();
}

void H2ClientStream::data(std::string_view bytes) {
  if (bytes.empty()) {
    ended_ = true;
  } else if (discard_) {
    give_back(bytes.size());
  } else {
    body_.append(bytes);
  }
  changed_.set();
  tunnel_wake();
}

void H2ClientStream::closed(std::uint32_t error_code) noexcept {
  closed_ = true;
  if (!ended_) reset_code_ = error_code == 0 ? std::uint32_t{NGHTTP2_INTERNAL_ERROR} : error_code;
  ended_ = true;
  changed_.set();
  tunnel_wake();
  linger_over();
}

void H2ClientStream::fail(std::exception_ptr error) noexcept {
  if (!closed_) error_ = std::move(error);
  closed_ = true;
  ended_ = true;
  changed_.set();
  tunnel_wake();
  linger_over();
}

ssize_t H2ClientStream::read_out(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) noexcept {
  if (tunneling_) return tunnel_out(buf, length, flags);
  const std::size_t n = std::min(length, request_body_.size() - sent_);
  std::memcpy(buf, request_body_.data() + sent_, n);
  sent_ += n;
  if (sent_ == request_body_.size()) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    std::string().swap(request_body_);
    sent_ = 0;
  }
  return static_cast<ssize_t>(n);
}

Coro<void> H2ClientStream::wait(const Deadline& deadline) {
  changed_.clear();
  co_await timeout_at(deadline.for_read(get_running_loop().time()), changed_.wait());
}

Coro<ResponseHead> H2ClientStream::head(const Deadline& deadline) {
  while (!head_ready_) {
    if (error_) std::rethrow_exception(error_);
    if (reset_code_ == NGHTTP2_REFUSED_STREAM) throw H2Refused{};
    if (ended_) {
      throw ClientConnectionError("the server reset the HTTP/2 stream (" +
                                  std::string(nghttp2_http2_strerror(reset_code_)) + ")");
    }
    co_await wait(deadline);
  }
  co_return std::move(head_);
}

Coro<bool> H2ClientStream::pump(std::string& out, std::size_t max, const Deadline& deadline) {
  while (body_.empty()) {
    if (error_) {
      try {
        std::rethrow_exception(error_);
      } catch (const std::exception& e) {
        throw ClientPayloadError(std::string("the body was cut short: ") + e.what());
      }
    }
    if (reset_code_ != 0) {
      throw ClientPayloadError("the body was cut short: the server reset the HTTP/2 stream (" +
                               std::string(nghttp2_http2_strerror(reset_code_)) + ")");
    }
    if (ended_) co_return false;
    co_await wait(deadline);
  }
  const std::size_t n = std::min(max, body_.size());
  out.append(body_, 0, n);
  body_.erase(0, n);
  give_back(n);
  co_return true;
}

// The window opens as the body is read (h2_client.hpp): nghttp2 sends the
// WINDOW_UPDATE once enough was consumed.
void H2ClientStream::give_back(std::size_t n) noexcept {
  if (!closed_) {
    nghttp2_session_consume(conn_->session(), id, n);
    conn_->wake();
  } else {
    nghttp2_session_consume_connection(conn_->session(), n);
  }
}

}  // namespace corio::http::detail

namespace corio::http::detail {

namespace {

// A response body on an HTTP/2 stream: the stream's DATA, through an
// Inflater when the body is gzip or deflate.
class H2Body final : public ResponseBody {
 public:
  H2Body(std::shared_ptr<H2ClientStream> stream, std::optional<Inflater> inflater, Deadline deadline)
      : stream_(std::move(stream)), inflater_(std::move(inflater)), deadline_(deadline) {
    if (stream_->ended()) finish();
  }

  Coro<bool> pump(std::string& out, std::size_t max) override {
    if (finished_) co_return false;
    if (!stream_) {
      throw ClientConnectionError(failed_ ? "an earlier read of this body failed"
                                          : "the response was released");
    }
    try {
      co_return co_await pump_once(out, std::max<std::size_t>(max, 1));
    } catch (...) {
      failed_ = true;
      stream_.reset();  // reset, if still open: its connection stays
      throw;
    }
  }

  void release() noexcept override { stream_.reset(); }
  bool http2() const noexcept override { return true; }

 private:
  Coro<bool> pump_once(std::string& out, std::size_t max) {
    // Named, not a ?: in the co_await: g++ 12 mishandles conditional
    // operands of a co_await expression.
    std::string& sink = inflater_ ? scratch_ : out;
    for (;;) {
      if (inflater_ && inflater_->inflate(out, max) > 0) co_return true;
      const bool more = co_await stream_->pump(sink, max, deadline_);
      if (!more) {
        finish();
        co_return false;
      }
      if (!inflater_) co_return true;
      inflater_->feed(scratch_);
      scratch_.clear();
    }
  }

  void finish() {
    if (inflater_) inflater_->finish();
    finished_ = true;
    stream_.reset();
  }

  std::shared_ptr<H2ClientStream> stream_;  // null once finished, released or failed
  std::optional<Inflater> inflater_;
  Deadline deadline_;
  std::string scratch_;  // compressed bytes on their way to the inflater
  bool finished_ = false;
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<ResponseBody> h2_body(std::shared_ptr<H2ClientStream> stream,
                                      std::optional<Inflater> inflater, Deadline deadline) {
  return std::make_unique<H2Body>(std::move(stream), std::move(inflater), deadline);
}

}  // namespace corio::http::detail
