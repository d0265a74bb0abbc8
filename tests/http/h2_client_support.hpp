// A small HTTP/2 client for the server's tests, on nghttp2's client
// session over a corio connection: it sends its requests together on one
// connection and reads until every stream closed. Enough to test the
// server's h2 path in-process (and so under the sanitizers); the interop
// suite tests it against other implementations.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "http/server_support.hpp"

namespace corio_http_test {

struct H2Reply {
  int status = 0;
  Headers headers;
  std::string body;
  std::uint32_t reset = 0;  // the RST_STREAM's error code, if the stream was reset
};

struct H2Request {
  std::string method = "GET";
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;  // sent with the request when not empty
};

class H2TestClient {
 public:
  H2TestClient() {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_client_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  H2TestClient(const H2TestClient&) = delete;
  H2TestClient& operator=(const H2TestClient&) = delete;
  ~H2TestClient() { nghttp2_session_del(session_); }

  // Every request on one connection to port, at once; the replies in order.
  Coro<std::vector<H2Reply>> run(std::uint16_t port, std::vector<H2Request> requests) {
    requests_ = std::move(requests);
    std::vector<std::int32_t> ids;
    for (H2Request& r : requests_) ids.push_back(submit(r));
    RawClient c = co_await connect(port);  // nghttp2 sends the client preface itself
    while (open_ > 0) {
      const std::uint8_t* data = nullptr;
      for (ssize_t n; (n = nghttp2_session_mem_send(session_, &data)) > 0;) {
        c.writer.write(std::string_view(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n)));
      }
      if (co_await c.reader.fill_buffer() == 0) break;
      const std::string_view in = c.reader.buffered();
      if (nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(in.data()), in.size()) < 0) break;
      c.reader.consume(in.size());
    }
    c.writer.close();
    std::vector<H2Reply> out;
    for (std::int32_t id : ids) out.push_back(replies_[id]);
    co_return out;
  }

 private:
  std::int32_t submit(const H2Request& r) {
    std::vector<nghttp2_nv> nv;
    auto add = [&nv](const std::string& name, const std::string& value) {
      nv.push_back({const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(name.data())),
                    const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(value.data())),
                    name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
    };
    add(kMethod, r.method);
    add(kPath, r.path);
    add(kScheme, kHttp);
    add(kAuthority, kHost);
    for (const auto& [name, value] : r.fields) add(name, value);
    nghttp2_data_provider body;
    body.source.ptr = const_cast<H2Request*>(&r);
    body.read_callback = read_body;
    ++open_;
    return nghttp2_submit_request(session_, nullptr, nv.data(), nv.size(),
                                  r.body.empty() ? nullptr : &body, nullptr);
  }
  static ssize_t read_body(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source* source, void* self) {
    auto& sent = static_cast<H2TestClient*>(self)->sent_[id];
    const std::string& body = static_cast<H2Request*>(source->ptr)->body;
    const std::size_t n = std::min(length, body.size() - sent);
    std::memcpy(buf, body.data() + sent, n);
    sent += n;
    if (sent == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t namelen, const std::uint8_t* value, std::size_t valuelen,
                       std::uint8_t, void* self) {
    H2Reply& r = static_cast<H2TestClient*>(self)->replies_[frame->hd.stream_id];
    const std::string n(reinterpret_cast<const char*>(name), namelen);
    const std::string v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":status") {
      r.status = std::stoi(v);
    } else {
      r.headers.add(n, v);
    }
    return 0;
  }
  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data,
                     std::size_t len, void* self) {
    static_cast<H2TestClient*>(self)->replies_[id].body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }
  static int on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* self) {
    auto* c = static_cast<H2TestClient*>(self);
    c->replies_[id].reset = code;
    --c->open_;
    return 0;
  }

  inline static const std::string kMethod = ":method", kPath = ":path", kScheme = ":scheme",
                                   kAuthority = ":authority", kHttp = "http", kHost = "localhost";
  nghttp2_session* session_ = nullptr;
  std::vector<H2Request> requests_;  // the data providers read their bodies here
  std::map<std::int32_t, H2Reply> replies_;
  std::map<std::int32_t, std::size_t> sent_;
  int open_ = 0;
};

}  // namespace corio_http_test
