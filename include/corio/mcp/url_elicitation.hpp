/// \file
/// URL-mode elicitation's two ends beyond elicitation/create itself (MCP
/// 2025-11-25): the -32042 error a server answers a request with when the
/// user must first go to some URLs, and what identifies each of those
/// out-of-band interactions, whose end the server announces with
/// notifications/elicitation/complete (Server::complete_elicitation(),
/// Client::on_elicitation_complete()).
///
/// <!-- doc: body (corio::mcp::Server& server, bool signed_in) -->
///     // A tool that cannot go on before the user signs in elsewhere:
///     if (!signed_in)
///       throw corio::mcp::UrlElicitationRequiredError({{"login-7", "https://example.com/login", "Sign in first"}});
///     // ... and once the sign-in page says it is done:
///     server.complete_elicitation("login-7");
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

namespace error_code {
/// URLElicitationRequiredError: the request needs URL elicitations first.
inline constexpr int url_elicitation_required = -32042;
}  // namespace error_code

/// One URL-mode elicitation, as elicitation/create sends it and the -32042
/// error lists it.
struct UrlElicitation {
  std::string elicitation_id;  ///< elicitationId: the server's name for it, opaque to the client
  std::string url;             ///< where the user goes
  std::string message;         ///< why
  /// {"mode": "url", "elicitationId", "url", "message"}.
  json to_json() const;
};

/// The -32042 error: the request cannot be served before the user completes
/// these URL elicitations (the client may retry it once they are, e.g. on
/// notifications/elicitation/complete). A tool handler throws it to answer
/// its call with it; Client::call_tool() throws it when a server does.
class UrlElicitationRequiredError : public RpcError {
 public:
  /// elicitations must not be empty (ValueError): the error says which.
  explicit UrlElicitationRequiredError(std::vector<UrlElicitation> elicitations, std::string message = {});
  /// What error.data.elicitations holds; entries that are not URL
  /// elicitations with an id and a url are left out.
  static std::vector<UrlElicitation> from_data(const json& data);
  /// The elicitations the user must complete.
  const std::vector<UrlElicitation>& elicitations() const noexcept { return elicitations_; }

 private:
  std::vector<UrlElicitation> elicitations_;
};

/// A bounded record of elicitation ids: what a server sent a client, what
/// a client was given. Past its bound the oldest are forgotten, so a peer
/// that never completes them costs a bounded memory.
class ElicitationIds {
 public:
  static constexpr std::size_t kBound = 256;  ///< ids kept at most
  /// Notes id (once; an empty id names nothing and is not noted).
  void add(std::string id);
  /// Whether id is noted.
  bool contains(std::string_view id) const noexcept;
  /// Forgets id; whether it was noted.
  bool take(std::string_view id);

 private:
  // Oldest first. A vector: it allocates nothing while empty (every
  // server session has one), where std::deque takes 576 B.
  std::vector<std::string> ids_;
};

}  // namespace corio::mcp
