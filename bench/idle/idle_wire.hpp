// The idle suite's client protocols (bench/idle/idle_loadgen.cpp): the requests each
// connection sends once, and just enough parsing of the answers to know when one is
// whole. Plain C++ and zlib, no corio: the client must not share the code it measures.
#pragma once

#include <zlib.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace idle {

// An HTTP/1.1 answer's head, as far as the client needs it.
struct Head {
  int status = 0;
  std::size_t length = 0;  // of head + body; 0 while incomplete
  std::string session;     // Mcp-Session-Id
  bool deflate = false;    // Sec-WebSocket-Extensions names permessage-deflate
  bool no_takeover = false;  // ... with server_ and client_no_context_takeover both
};

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Where a chunked body starting at `at` ends (past its last chunk's CRLF and the empty
// trailer), or npos while incomplete. Trailer fields are not expected from these servers.
inline std::size_t chunked_end(std::string_view in, std::size_t at) {
  for (;;) {
    const std::size_t eol = in.find("\r\n", at);
    if (eol == std::string_view::npos) return eol;
    const std::size_t size =
        std::strtoul(std::string(in.substr(at, eol - at)).c_str(), nullptr, 16);
    at = eol + 2 + size + 2;
    if (at > in.size()) return std::string_view::npos;
    if (size == 0) return at;
  }
}

// Parses a whole answer at the start of `in`: false while it is incomplete. A 101 has no
// body; other answers are delimited by Content-Length or chunked coding (a body
// delimited by the close never ends here, and times the connection out as a failure).
inline bool parse_answer(std::string_view in, Head& h) {
  const std::size_t end = in.find("\r\n\r\n");
  if (end == std::string_view::npos || in.size() < 12) return false;
  h = Head{};
  h.status = std::atoi(std::string(in.substr(9, 3)).c_str());
  bool chunked = false;
  std::size_t length = 0;
  for (std::size_t at = in.find("\r\n") + 2; at < end;) {
    const std::size_t eol = in.find("\r\n", at);
    const std::string_view line = in.substr(at, eol - at);
    at = eol + 2;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (iequals(name, "content-length"))
      length = std::strtoul(std::string(value).c_str(), nullptr, 10);
    if (iequals(name, "transfer-encoding"))
      chunked = value.find("chunked") != std::string_view::npos;
    if (iequals(name, "mcp-session-id")) h.session = std::string(value);
    if (iequals(name, "sec-websocket-extensions")) {
      h.deflate = value.find("permessage-deflate") != std::string_view::npos;
      h.no_takeover = value.find("server_no_context_takeover") != std::string_view::npos &&
                      value.find("client_no_context_takeover") != std::string_view::npos;
    }
  }
  std::size_t total = end + 4 + (h.status == 101 ? 0 : length);
  if (chunked) total = chunked_end(in, end + 4);
  if (total == std::string_view::npos || total > in.size()) return false;
  h.length = total;
  return true;
}

// A frame from the server (unmasked): its opcode, FIN, payload and whole length.
struct Frame {
  int opcode = 0;
  bool fin = false;
  std::size_t payload_at = 0, payload_len = 0, length = 0;
};

// false while the frame at the start of `in` is incomplete.
inline bool parse_frame(std::string_view in, Frame& f) {
  if (in.size() < 2) return false;
  const auto b = [&](std::size_t i) { return static_cast<std::uint8_t>(in[i]); };
  f.fin = b(0) & 0x80;
  f.opcode = b(0) & 0x0F;
  std::size_t len = b(1) & 0x7F, at = 2;
  if (len == 126 || len == 127) {
    const std::size_t bytes = len == 126 ? 2 : 8;
    if (in.size() < 2 + bytes) return false;
    len = 0;
    for (std::size_t i = 0; i < bytes; ++i) len = len << 8 | b(2 + i);
    at += bytes;
  }
  if (b(1) & 0x80) at += 4;  // a server must not mask; skip the key if one did anyway
  if (in.size() < at + len) return false;
  f.payload_at = at;
  f.payload_len = len;
  f.length = at + len;
  return true;
}

// A client frame (masked with a fixed key: a benchmark protects no browser cache).
inline std::string client_frame(int opcode, bool rsv1, std::string_view payload) {
  std::string f;
  f += static_cast<char>(0x80 | (rsv1 ? 0x40 : 0) | opcode);
  if (payload.size() < 126) {
    f += static_cast<char>(0x80 | payload.size());
  } else {
    f += static_cast<char>(0x80 | 126);
    f += static_cast<char>(payload.size() >> 8);
    f += static_cast<char>(payload.size() & 0xFF);
  }
  const unsigned char key[4] = {0x12, 0x34, 0x56, 0x78};
  f.append(reinterpret_cast<const char*>(key), 4);
  for (std::size_t i = 0; i < payload.size(); ++i) f += static_cast<char>(payload[i] ^ key[i % 4]);
  return f;
}

// One message compressed as a permessage-deflate sender does (RFC 7692 7.2.1): raw
// deflate, flushed, without the final 00 00 FF FF. The same bytes serve every
// connection: each sends it as its first message, so no context precedes it.
inline std::string deflate_message(std::string_view text) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(text.size() + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_SYNC_FLUSH) != Z_OK) std::abort();
  out.resize(out.size() - z.avail_out - 4);
  deflateEnd(&z);
  return out;
}

// The Sec-WebSocket-Extensions line a WebSocket protocol offers: none (ws), what browsers
// offer (ws-deflate), or no context taken over either way (ws-deflate-nct: each message
// compressed on its own, so neither side needs a zlib stream or window between messages).
inline std::string ws_extensions(std::string_view proto) {
  if (proto == "ws-deflate")
    return "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
  if (proto == "ws-deflate-nct")
    return "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; "
           "server_no_context_takeover\r\n";
  return "";
}

// HTTP/2 with prior knowledge (h2c): the client preface, an empty SETTINGS frame, and
// GET path on stream 1 (END_STREAM | END_HEADERS; HPACK: :method GET and :scheme http
// from the static table, :path and :authority as literals with indexed names).
inline std::string h2_frame(int type, int flags, std::uint32_t stream, std::string_view payload) {
  std::string f;
  const std::size_t n = payload.size();
  f += static_cast<char>(n >> 16);
  f += static_cast<char>((n >> 8) & 0xFF);
  f += static_cast<char>(n & 0xFF);
  f += static_cast<char>(type);
  f += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((stream >> shift) & 0xFF);
  return f.append(payload);
}

inline std::string h2_get(std::string_view path, std::string_view host) {
  std::string block = "\x82\x86";
  block += '\x04';
  block += static_cast<char>(path.size());  // short: under 127 bytes
  block.append(path);
  block += '\x01';
  block += static_cast<char>(host.size());
  block.append(host);
  return std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + h2_frame(4, 0, 0, "") +
         h2_frame(1, 0x5, 1, block);
}

// A frame from an HTTP/2 server: false while the one at the start of `in` is incomplete.
struct H2Frame {
  int type = 0, flags = 0;
  std::uint32_t stream = 0;
  std::size_t length = 0;  // the whole frame's
};

inline bool parse_h2_frame(std::string_view in, H2Frame& f) {
  if (in.size() < 9) return false;
  const auto b = [&](std::size_t i) { return static_cast<std::uint8_t>(in[i]); };
  const std::size_t len = std::size_t{b(0)} << 16 | std::size_t{b(1)} << 8 | b(2);
  if (in.size() < 9 + len) return false;
  f.type = b(3);
  f.flags = b(4);
  f.stream =
      (std::uint32_t{b(5)} << 24 | std::uint32_t{b(6)} << 16 | std::uint32_t{b(7)} << 8 | b(8)) &
      0x7FFFFFFF;
  f.length = 9 + len;
  return true;
}

// What a connection says, step by step: the request of `step` (0, 1, ...) of protocol
// `proto`, or "" after the last. `head` is the previous step's answer.
struct Script {
  std::string proto;  // http, h2c, ws, ws-deflate, ws-deflate-nct, mcp
  std::string path;
  std::string host;

  std::string request(int step, const Head& prev, bool deflate_agreed) const {
    if (proto == "http")
      return step == 0 ? "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n" : "";
    if (proto == "h2c") return step == 0 ? h2_get(path, host) : "";
    if (proto == "mcp") return mcp_request(step, prev.session);
    if (step == 0) {
      return "GET " + path + " HTTP/1.1\r\nHost: " + host +
             "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
             ws_extensions(proto) + "\r\n";
    }
    if (step > 1) return "";
    // 128 bytes of text: above the smallest size servers compress (corio: 64).
    std::string text;
    while (text.size() < 128) text += "an idle connection, once ";
    text.resize(128);
    return deflate_agreed ? client_frame(1, true, deflate_message(text))
                          : client_frame(1, false, text);
  }

  // initialize, then notifications/initialized in the session it opened.
  std::string mcp_request(int step, const std::string& session) const {
    std::string body, extra;
    if (step == 0) {
      body =
          R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
          R"("capabilities":{},"clientInfo":{"name":"idle_loadgen","version":"1"}}})";
    } else if (step == 1) {
      body = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
      extra = "Mcp-Session-Id: " + session + "\r\nMCP-Protocol-Version: 2025-11-25\r\n";
    } else {
      return "";
    }
    return "POST " + path + " HTTP/1.1\r\nHost: " + host +
           "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
           extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  // Whether step's answer is an HTTP answer (else a WebSocket frame).
  bool http_answer(int step) const { return proto == "http" || proto == "mcp" || step == 0; }
};

}  // namespace idle
