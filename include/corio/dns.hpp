/// \file
/// corio::getaddrinfo: asyncio's loop.getaddrinfo, a name lookup that does not
/// block the loop.
///
/// <!-- doc: body -->
///     auto infos = co_await corio::getaddrinfo("example.org", 443);
///     for (const corio::AddrInfo& ai : infos) std::printf("%s\n", ai.address.to_string().c_str());
///
/// A numeric host ("127.0.0.1", "::1") is converted on the spot: no thread, no
/// resolver, as asyncio's _ipaddr_info does. A name goes to the C library's getaddrinfo(3) on
/// the loop's default thread pool (run_in_executor), as CPython does.
///
/// Suspends: only for a name, until the pool thread's lookup is back.
/// Resumed by: the loop, when the worker posts the result. Cancelling the
/// awaiting task cannot stop the lookup; its result is then dropped.
///
/// Errors: std::system_error with gai_category() and the EAI_* code
/// (EAI_NONAME, EAI_AGAIN, ...); EAI_SYSTEM becomes the errno it stands for.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include <corio/coro.hpp>
#include <corio/socket.hpp>

namespace corio {

/// One address getaddrinfo() found.
struct AddrInfo {
  int family = AF_UNSPEC;  ///< AF_INET or AF_INET6
  /// SOCK_STREAM or SOCK_DGRAM.
  int type = SOCK_STREAM;
  /// The protocol for socket(2) (IPPROTO_TCP, ...).
  int protocol = 0;
  SocketAddress address;  ///< with the port filled in
};

/// The error category of getaddrinfo's EAI_* codes; message() is gai_strerror.
const std::error_category& gai_category() noexcept;

/// host "" means the wildcard address with AI_PASSIVE (a server binding every
/// interface: 0.0.0.0 and ::), the loopback addresses without it. flags are
/// ::getaddrinfo's AI_* flags. Duplicates are removed; the order is the
/// resolver's.
Coro<std::vector<AddrInfo>> getaddrinfo(std::string host, std::uint16_t port,
                                        int family = AF_UNSPEC, int type = SOCK_STREAM,
                                        int flags = 0);

}  // namespace corio
