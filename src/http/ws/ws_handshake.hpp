// The opening handshake's pieces both sides use (RFC 6455 section 4): the
// key and its accept value, and the subprotocol choice.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <corio/http/headers.hpp>

namespace corio::http::detail {

// A fresh Sec-WebSocket-Key: 16 random bytes in base64.
std::string make_ws_key();
// Whether key is the base64 of 16 bytes, as a client must send.
bool is_valid_ws_key(std::string_view key) noexcept;
// base64(SHA-1(key + the RFC's GUID)): Sec-WebSocket-Accept.
std::string ws_accept(std::string_view key);
// Every value of a comma-separated field, split and trimmed, in order.
std::vector<std::string> list_values(const Headers& headers, std::string_view name);
// The joined values of a field (repeats of a list field are one list).
std::string joined(const Headers& headers, std::string_view name);

}  // namespace corio::http::detail
