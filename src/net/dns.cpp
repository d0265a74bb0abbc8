// getaddrinfo on the loop's default thread pool (see dns.hpp).
//
// Why not c-ares: it would be one more dependency for what the pool, which
// every loop already has, does well enough; asyncio makes the same choice
// (loop.getaddrinfo runs socket.getaddrinfo in the default executor), and
// the lookups people do (a handful per connection pool) do not need an
// asynchronous resolver. The numeric fast path keeps the common "connect to
// 127.0.0.1" free of threads.
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include <corio/c_string.hpp>
#include <corio/detail/socket_system.hpp>
#include <corio/dns.hpp>
#include <corio/event_loop.hpp>

namespace corio {

namespace {

class GaiCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "getaddrinfo"; }
  std::string message(int code) const override { return ::gai_strerror(code); }
};

int default_protocol(int type) noexcept {
  if (type == SOCK_STREAM) return IPPROTO_TCP;
  if (type == SOCK_DGRAM) return IPPROTO_UDP;
  return 0;
}

bool same(const AddrInfo& a, const AddrInfo& b) noexcept {
  return a.family == b.family && a.type == b.type && a.protocol == b.protocol &&
         a.address.size() == b.address.size() &&
         std::memcmp(a.address.data(), b.address.data(), a.address.size()) == 0;
}

// asyncio's _ipaddr_info: an address that is already numeric needs no
// resolver. Only when the family agrees; the resolver reports the mismatch.
std::optional<AddrInfo> numeric_info(const std::string& host, std::uint16_t port, int family,
                                     int type) {
  if (host.empty()) return std::nullopt;
  SocketAddress address;
  try {
    address = SocketAddress::ip(host, port);
  } catch (const ValueError&) {
    return std::nullopt;
  }
  if (family != AF_UNSPEC && family != address.family()) return std::nullopt;
  return AddrInfo{address.family(), type, default_protocol(type), address};
}

// Runs on a pool thread.
std::vector<AddrInfo> blocking_getaddrinfo(const std::string& host, std::uint16_t port,
                                           int family, int type, int flags) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = type;
  hints.ai_flags = flags | AI_NUMERICSERV;
  const std::string service = std::to_string(port);
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  const std::string what = "getaddrinfo '" + host + "'";
  if (rc == EAI_SYSTEM) throw std::system_error(errno, std::generic_category(), what);
  if (rc != 0) throw std::system_error(rc, gai_category(), what);
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(res, ::freeaddrinfo);
  std::vector<AddrInfo> out;
  for (const addrinfo* ai = res; ai; ai = ai->ai_next) {
    AddrInfo info{ai->ai_family, ai->ai_socktype, ai->ai_protocol,
                  SocketAddress(ai->ai_addr, ai->ai_addrlen)};
    auto dup = [&info](const AddrInfo& o) { return same(o, info); };
    if (std::none_of(out.begin(), out.end(), dup)) out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

const std::error_category& gai_category() noexcept {
  static const GaiCategory category;
  return category;
}

Coro<std::vector<AddrInfo>> getaddrinfo(std::string host, std::uint16_t port, int family,
                                        int type, int flags) {
  check_c_string(host, "a host name");  // getaddrinfo would look up what precedes it
  if (std::optional<std::string> known = detail::socket_system().resolve(host)) {  // a simulation's
    if (known->empty()) throw std::system_error(EAI_NONAME, gai_category(), "getaddrinfo '" + host + "'");
    host = std::move(*known);
  }
  if (std::optional<AddrInfo> numeric = numeric_info(host, port, family, type)) {
    co_return std::vector<AddrInfo>{*numeric};
  }
  auto lookup = [host = std::move(host), port, family, type, flags] {
    return blocking_getaddrinfo(host, port, family, type, flags);
  };
  // Named, not a temporary in the co_await expression (g++ 12, see
  // to_thread.hpp).
  Future<std::vector<AddrInfo>> result =
      get_running_loop().run_in_executor(nullptr, std::move(lookup));
  co_return co_await std::move(result);
}

}  // namespace corio
