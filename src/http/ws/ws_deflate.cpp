// permessage-deflate (see ws_deflate.hpp).
#include <zlib.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <corio/http/websocket.hpp>

#include "http/wire/syntax.hpp"
#include "http/ws/ws_deflate.hpp"
#include "http/ws/ws_frame.hpp"

namespace corio::http::detail {

namespace {

constexpr std::string_view kName = "permessage-deflate";
constexpr char kTail[] = {'\x00', '\x00', '\xff', '\xff'};
// Output room per inflate call: from 1 KiB, growing with the message, to
// 16 KiB. The room is zero-filled (std::string), so a small message must not
// pay for 16 KiB of it.
constexpr std::size_t kInflateFirst = 1024;
constexpr std::size_t kInflateStep = 16 * 1024;
// python-websockets' memLevel: a 4,096-entry hash table (8 KiB, cleared for
// every message when the context is not taken over) where zlib's default 8
// has 32,768 (64 KiB). Measured on 10-11 KiB of C++ and prose at 15 bits:
// output 0.2-0.9% larger; on 1-30 KiB JSON-like messages: the same size.
constexpr int kMemLevel = 5;

struct Param {
  std::string name;
  std::optional<std::string> value;
};

struct Extension {
  std::string name;
  std::vector<Param> params;
};

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  std::string out(s.substr(b, e - b + 1));
  if (out.size() >= 2 && out.front() == '"' && out.back() == '"') out = out.substr(1, out.size() - 2);
  return out;
}

// "a; x=1; y, b" -> {a: x=1, y}, {b} (RFC 6455 section 9.1's grammar,
// leniently: a bad element is simply one no offer matches).
std::vector<Extension> parse_extensions(std::string_view value) {
  std::vector<Extension> out;
  syntax::for_each_element(value, [&](std::string_view element) {
    Extension ext;
    std::size_t pos = 0;
    bool first = true;
    while (pos <= element.size()) {
      std::size_t semi = element.find(';', pos);
      if (semi == std::string_view::npos) semi = element.size();
      const std::string_view part = element.substr(pos, semi - pos);
      if (first) {
        ext.name = trim(part);
        first = false;
      } else {
        const std::size_t eq = part.find('=');
        Param p{trim(part.substr(0, eq)), std::nullopt};
        if (eq != std::string_view::npos) p.value = trim(part.substr(eq + 1));
        ext.params.push_back(std::move(p));
      }
      pos = semi + 1;
    }
    out.push_back(std::move(ext));
  });
  return out;
}

// 8..15 as RFC 7692 allows; 8 is refused all the same, as zlib's raw
// deflate cannot make an 8-bit window (it silently uses 9).
std::optional<int> window_bits(const std::optional<std::string>& v) {
  if (!v || v->empty() || v->size() > 2) return std::nullopt;
  int bits = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') return std::nullopt;
    bits = bits * 10 + (c - '0');
  }
  if (bits < 9 || bits > 15) return std::nullopt;
  return bits;
}

// One offer's parameters, or nullopt for one that cannot be honoured.
// client_max_window_bits without a value is -1: "you may limit me".
struct Offer {
  bool server_no_takeover = false, client_no_takeover = false;
  std::optional<int> server_bits, client_bits;
};

std::optional<Offer> read_offer(const Extension& ext) {
  Offer o;
  std::vector<std::string> seen;
  for (const Param& p : ext.params) {
    if (std::find(seen.begin(), seen.end(), p.name) != seen.end()) return std::nullopt;
    seen.push_back(p.name);
    if (p.name == "server_no_context_takeover" && !p.value) {
      o.server_no_takeover = true;
    } else if (p.name == "client_no_context_takeover" && !p.value) {
      o.client_no_takeover = true;
    } else if (p.name == "server_max_window_bits") {
      o.server_bits = window_bits(p.value);
      if (!o.server_bits) return std::nullopt;
    } else if (p.name == "client_max_window_bits") {
      o.client_bits = p.value ? window_bits(p.value) : std::optional<int>(-1);
      if (!o.client_bits) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  return o;
}

[[noreturn]] void corrupt() {
  throw WsProtocolError(ws_close::invalid_data, "corrupt permessage-deflate data");
}

}  // namespace

std::optional<DeflateAccept> accept_deflate(std::string_view offers, const WsDeflateOptions& opts) {
  if (!opts.enabled) return std::nullopt;
  for (const Extension& ext : parse_extensions(offers)) {
    if (ext.name != kName) continue;
    const std::optional<Offer> o = read_offer(ext);
    if (!o) continue;
    DeflateAccept a;
    DeflateAgreement& g = a.agreed;
    g.server_no_context_takeover = o->server_no_takeover || opts.server_no_context_takeover;
    g.client_no_context_takeover = o->client_no_takeover || opts.client_no_context_takeover;
    g.server_max_window_bits = std::min(o->server_bits.value_or(15), opts.server_max_window_bits);
    // The client's window can be limited only if it said it can be.
    if (o->client_bits) {
      g.client_max_window_bits =
          std::min(*o->client_bits < 0 ? 15 : *o->client_bits, opts.client_max_window_bits);
    }
    a.answer = std::string(kName);
    if (g.server_no_context_takeover) a.answer += "; server_no_context_takeover";
    if (g.client_no_context_takeover) a.answer += "; client_no_context_takeover";
    if (o->server_bits || g.server_max_window_bits < 15) {
      a.answer += "; server_max_window_bits=" + std::to_string(g.server_max_window_bits);
    }
    if (o->client_bits && (*o->client_bits > 0 || g.client_max_window_bits < 15)) {
      a.answer += "; client_max_window_bits=" + std::to_string(g.client_max_window_bits);
    }
    return a;
  }
  return std::nullopt;
}

std::string offer_deflate(const WsDeflateOptions& opts) {
  std::string offer(kName);
  if (opts.server_no_context_takeover) offer += "; server_no_context_takeover";
  if (opts.client_no_context_takeover) offer += "; client_no_context_takeover";
  if (opts.server_max_window_bits < 15) {
    offer += "; server_max_window_bits=" + std::to_string(opts.server_max_window_bits);
  }
  offer += "; client_max_window_bits";
  if (opts.client_max_window_bits < 15) offer += "=" + std::to_string(opts.client_max_window_bits);
  return offer;
}

DeflateAgreement parse_deflate_answer(std::string_view answer, const WsDeflateOptions& offered) {
  const std::vector<Extension> exts = parse_extensions(answer);
  if (exts.size() != 1 || exts[0].name != kName) {
    throw std::invalid_argument("the server agreed to an extension not offered: " + std::string(answer));
  }
  const std::optional<Offer> o = read_offer(exts[0]);
  if (!o || (o->client_bits && *o->client_bits < 0)) {
    throw std::invalid_argument("a permessage-deflate answer with bad parameters: " + std::string(answer));
  }
  DeflateAgreement g;
  g.server_no_context_takeover = o->server_no_takeover;
  g.client_no_context_takeover = o->client_no_takeover;
  g.server_max_window_bits = o->server_bits.value_or(15);
  g.client_max_window_bits = std::min(o->client_bits.value_or(15), offered.client_max_window_bits);
  return g;
}

// A raw deflate stream (negative window bits: no zlib header).
struct WsDeflater::Stream {
  z_stream z{};
  Stream(int window_bits, int level) {
    if (deflateInit2(&z, level, Z_DEFLATED, -window_bits, kMemLevel, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw std::bad_alloc();
    }
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { deflateEnd(&z); }
};

WsDeflater::WsDeflater(DeflateDirection agreed, int level) : agreed_(agreed), level_(level) {}

WsDeflater::~WsDeflater() = default;

std::string WsDeflater::compress(std::string_view message) {
  if (!z_) z_ = std::make_unique<Stream>(agreed_.window_bits, level_);
  std::string out(deflateBound(&z_->z, message.size()) + 16, '\0');
  z_stream& z = z_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(message.data()));
  z.avail_in = static_cast<uInt>(message.size());
  std::size_t used = 0;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(out.size() - used);
    const int rc = deflate(&z, Z_SYNC_FLUSH);
    used = out.size() - z.avail_out;
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("deflate failed");
    if (z.avail_out > 0) break;  // all flushed
    out.resize(out.size() * 2);
  }
  out.resize(used);
  if (out.size() >= 4 && std::string_view(out).substr(out.size() - 4) == std::string_view(kTail, 4)) {
    out.resize(out.size() - 4);
  }
  if (agreed_.no_context_takeover) z_.reset();  // the next message starts afresh anyway
  return out;
}

struct WsInflater::Stream {
  z_stream z{};
  explicit Stream(int window_bits) {
    if (inflateInit2(&z, -window_bits) != Z_OK) throw std::bad_alloc();
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { inflateEnd(&z); }
};

WsInflater::WsInflater(DeflateDirection agreed) : agreed_(agreed) {}

WsInflater::~WsInflater() = default;

// The stream, made on a message's first piece with the parked window put back.
WsInflater::Stream& WsInflater::stream() {
  if (z_) return *z_;
  auto fresh = std::make_unique<Stream>(agreed_.window_bits);
  if (!window_.empty() &&
      inflateSetDictionary(&fresh->z, reinterpret_cast<const Bytef*>(window_.data()),
                           static_cast<uInt>(window_.size())) != Z_OK) {
    throw std::runtime_error("inflateSetDictionary failed");
  }
  std::string().swap(window_);
  z_ = std::move(fresh);
  return *z_;
}

void WsInflater::park() {
  if (!z_ || (z_->z.data_type & 128) == 0) return;  // none, or inside a block (see finish)
  if (!agreed_.no_context_takeover) {
    uInt n = 0;
    inflateGetDictionary(&z_->z, nullptr, &n);  // the length alone: the window may be partly filled
    window_.resize(n);
    inflateGetDictionary(&z_->z, reinterpret_cast<Bytef*>(window_.data()), &n);
  }
  z_.reset();
}

void WsInflater::feed(std::string_view in, std::string& out, std::size_t max_size) {
  inflate_into(in, out, max_size, Z_SYNC_FLUSH);
}

// The tail with Z_BLOCK: inflate then stops right after the empty stored
// block a well-formed message ends with, and zlib's data_type says so (128:
// at a block boundary). Only there can park() keep the window alone; a
// message that ended inside a block leaves state the window does not hold.
void WsInflater::finish(std::string& out, std::size_t max_size) {
  inflate_into(std::string_view(kTail, 4), out, max_size, Z_BLOCK);
  if (agreed_.no_context_takeover) z_.reset();
}

void WsInflater::inflate_into(std::string_view in, std::string& out, std::size_t max_size, int flush) {
  z_stream& z = stream().z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    // Room for one byte past the limit: reaching it proves the message too big.
    const std::size_t before = out.size();
    const std::size_t step = std::clamp(before, kInflateFirst, kInflateStep);
    const std::size_t room = std::min(step, max_size + 1 - std::min(before, max_size + 1));
    if (room == 0) throw WsProtocolError(ws_close::message_too_big, "an inflated message over the limit");
    out.resize(before + room);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, flush);
    out.resize(out.size() - z.avail_out);
    if (out.size() > max_size) {
      throw WsProtocolError(ws_close::message_too_big, "an inflated message over " + std::to_string(max_size) + " bytes");
    }
    if (rc == Z_STREAM_END) {
      inflateReset(&z);  // a peer that ends each message's stream starts a new one
      if (z.avail_in == 0) return;
      continue;
    }
    if (rc == Z_BUF_ERROR) return;  // no progress possible: everything is in
    if (rc != Z_OK) corrupt();
    if (z.avail_in == 0 && z.avail_out > 0) return;
  }
}

}  // namespace corio::http::detail
