// The streaming inflater (see decompress.hpp).
#include "http/wire/decompress.hpp"

#include <zlib.h>

#include <algorithm>

#include <corio/http/client_errors.hpp>
#include <corio/http/headers.hpp>

namespace corio::http::detail {

struct Inflater::State {
  z_stream z{};
  Format format;
  bool initialised = false;
  bool ended = false;     // Z_STREAM_END seen and no member follows (yet)
  std::string pending;    // queued compressed bytes
  std::size_t offset = 0;  // of pending, consumed

  explicit State(Format f) : format(f) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (initialised) inflateEnd(&z);
  }

  // "deflate" should be the zlib format (RFC 9110 section 8.4.1.2), but
  // servers have long sent raw deflate too: the first two bytes tell which
  // (a zlib header is CMF/FLG with CM 8 and a checksum divisible by 31).
  int window_bits(std::string_view head) const {
    if (format == Format::gzip) return 16 + MAX_WBITS;
    const auto b0 = static_cast<unsigned char>(head[0]);
    const auto b1 = static_cast<unsigned char>(head[1]);
    const bool zlib_header = (b0 & 0x0F) == 8 && ((b0 << 8) | b1) % 31 == 0;
    return zlib_header ? MAX_WBITS : -MAX_WBITS;
  }

  bool start() {
    std::string_view in = std::string_view(pending).substr(offset);
    if (format == Format::deflate && in.size() < 2) return false;
    if (inflateInit2(&z, window_bits(in)) != Z_OK) throw ClientPayloadError("zlib: out of memory");
    initialised = true;
    return true;
  }
};

Inflater::Inflater(Format format) : s_(std::make_unique<State>(format)) {}
Inflater::Inflater(Inflater&&) noexcept = default;
Inflater& Inflater::operator=(Inflater&&) noexcept = default;
Inflater::~Inflater() = default;

bool Inflater::handles(std::string_view encoding) noexcept {
  return iequals(encoding, "gzip") || iequals(encoding, "x-gzip") || iequals(encoding, "deflate");
}

Inflater Inflater::for_encoding(std::string_view encoding) {
  return Inflater(iequals(encoding, "deflate") ? Format::deflate : Format::gzip);
}

void Inflater::feed(std::string_view compressed) {
  if (s_->offset == s_->pending.size()) {
    s_->pending.clear();
    s_->offset = 0;
  }
  s_->pending.append(compressed);
}

bool Inflater::has_input() const noexcept { return s_->offset < s_->pending.size(); }

// Output room is added as output comes, kRoomStep at a time: read() bounds a
// body at 64 MiB, and sizing `out` to the bound allocated and zeroed 64 MiB
// for every 2 KiB page (TSan made it visible: 0.15 s per request).
constexpr std::size_t kRoomStep = 64 * 1024;

std::size_t Inflater::inflate(std::string& out, std::size_t max) {
  State& s = *s_;
  const std::size_t before = out.size();
  std::size_t produced = 0;
  while (produced < max && has_input()) {
    if (!s.initialised && !s.start()) break;
    if (s.ended) {
      // Concatenated gzip members (RFC 1952 section 2.2) decode as one body.
      if (s.format != Format::gzip) throw ClientPayloadError("data after the end of the deflate stream");
      inflateReset(&s.z);
      s.ended = false;
    }
    s.z.next_in = reinterpret_cast<Bytef*>(s.pending.data() + s.offset);
    s.z.avail_in = static_cast<uInt>(std::min<std::size_t>(s.pending.size() - s.offset, 1u << 30));
    const std::size_t room_now = std::min(max - produced, kRoomStep);
    out.resize(before + produced + room_now);
    s.z.next_out = reinterpret_cast<Bytef*>(out.data() + before + produced);
    s.z.avail_out = static_cast<uInt>(room_now);
    const uInt room = s.z.avail_out;
    const int rc = ::inflate(&s.z, Z_NO_FLUSH);
    s.offset = static_cast<std::size_t>(reinterpret_cast<char*>(s.z.next_in) - s.pending.data());
    produced += room - s.z.avail_out;
    if (rc == Z_STREAM_END) {
      s.ended = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      throw ClientPayloadError(std::string("cannot decode the body: ") +
                               (s.z.msg ? s.z.msg : "corrupt compressed data"));
    }
  }
  out.resize(before + produced);
  return produced;
}

void Inflater::finish() const {
  if (s_->initialised && !s_->ended) throw ClientPayloadError("the compressed body is truncated");
  if (!s_->initialised && has_input()) throw ClientPayloadError("the compressed body is truncated");
}

}  // namespace corio::http::detail
