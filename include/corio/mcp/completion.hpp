/// \file
/// completion/complete as a server answers it: what is being completed
/// (CompletionRequest) and the candidates (Completion), from the handler
/// Server::on_completion() takes.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/coro.hpp>

namespace corio::mcp {

/// completion/complete: the argument being completed and what is typed so far.
struct CompletionRequest {
  std::string ref_type;  ///< "ref/prompt" or "ref/resource"
  std::string ref;       ///< the prompt's name or the template's uriTemplate
  std::string argument;  ///< the argument's (or template variable's) name
  std::string value;     ///< its partial value
  std::map<std::string, std::string> context;  ///< the arguments already resolved
};
/// completion/complete's answer: the candidate values.
struct Completion {
  std::vector<std::string> values;  ///< at most 100 are sent (hasMore then says so)
  std::optional<std::size_t> total;  ///< how many there are in all, if known
  bool has_more = false;  ///< there are more than values holds
  /// The candidates that start with prefix, in their order.
  static Completion matching(std::string_view prefix, const std::vector<std::string>& candidates);
};
/// Completes one argument (Server::on_completion()).
using CompletionHandler = std::function<Coro<Completion>(const CompletionRequest&)>;

}  // namespace corio::mcp
