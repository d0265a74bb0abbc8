/// \file
/// MCP prompts as a server declares them: the prompt and its arguments
/// (Prompt, PromptArgument) and the handler that makes its messages
/// (PromptHandler, PromptMessage).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

/// An argument a prompt takes.
struct PromptArgument {
  std::string name;  ///< its name
  std::string description = {};  ///< what it is for
  bool required = false;  ///< whether it must be given
};
/// A prompt, as prompts/list shows it.
struct Prompt {
  std::string name;  ///< unique among the server's prompts
  std::string description = {};  ///< what it is for
  std::vector<PromptArgument> arguments = {};  ///< what it takes
  std::string title = {};  ///< optional, for display
  json icons = nullptr;  ///< optional (null: none)
};
/// One message of a prompt: a role, and a text or any content block.
struct PromptMessage {
  std::string role;  ///< "user" or "assistant"
  std::string text = {};  ///< a text message, when content is null
  json content = nullptr;      ///< any content block (content.hpp): image, audio, resource, ...
  /// A message of any content block (content.hpp).
  static PromptMessage with(std::string role, json content) {
    return {std::move(role), {}, std::move(content)};
  }
};
/// Makes a prompt's messages from its arguments (prompts/get).
using PromptHandler = std::function<Coro<std::vector<PromptMessage>>(const json& args)>;

}  // namespace corio::mcp
