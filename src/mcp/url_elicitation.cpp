// UrlElicitation and UrlElicitationRequiredError (see url_elicitation.hpp):
// their wire forms.
#include <corio/mcp/url_elicitation.hpp>

#include <algorithm>

#include <corio/errors.hpp>

namespace corio::mcp {

namespace {

// The error's data: {"elicitations": [...]}, each entry a URL elicitation.
json error_data(const std::vector<UrlElicitation>& elicitations) {
  if (elicitations.empty()) throw ValueError("a URLElicitationRequiredError names at least one elicitation");
  json list = json::array();
  for (const UrlElicitation& e : elicitations) list.push_back(e.to_json());
  return {{"elicitations", std::move(list)}};
}

std::string error_message(const std::vector<UrlElicitation>& elicitations, std::string message) {
  if (!message.empty()) return message;
  return elicitations.size() == 1 ? "URL elicitation required" : "URL elicitations required";
}

std::string string_member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

json UrlElicitation::to_json() const {
  return {{"mode", "url"}, {"elicitationId", elicitation_id}, {"url", url}, {"message", message}};
}

UrlElicitationRequiredError::UrlElicitationRequiredError(std::vector<UrlElicitation> elicitations,
                                                         std::string message)
    : RpcError(error_code::url_elicitation_required, error_message(elicitations, std::move(message)),
               error_data(elicitations)),
      elicitations_(std::move(elicitations)) {}

// A peer's data is not trusted to be well formed: what is not a usable
// URL elicitation is dropped, not an exception in the caller's catch.
std::vector<UrlElicitation> UrlElicitationRequiredError::from_data(const json& data) {
  std::vector<UrlElicitation> out;
  const auto list = data.is_object() ? data.find("elicitations") : data.end();
  if (!data.is_object() || list == data.end() || !list->is_array()) return out;
  for (const json& e : *list) {
    if (!e.is_object() || string_member(e, "mode") != "url") continue;
    UrlElicitation u{string_member(e, "elicitationId"), string_member(e, "url"), string_member(e, "message")};
    if (!u.elicitation_id.empty() && !u.url.empty()) out.push_back(std::move(u));
  }
  return out;
}

void ElicitationIds::add(std::string id) {
  if (id.empty() || contains(id)) return;
  ids_.push_back(std::move(id));
  if (ids_.size() > kBound) ids_.erase(ids_.begin());
}

// A search: the ids outstanding at once are few (one per interaction a
// user has yet to finish).
bool ElicitationIds::contains(std::string_view id) const noexcept {
  return std::find(ids_.begin(), ids_.end(), id) != ids_.end();
}

bool ElicitationIds::take(std::string_view id) {
  const auto it = std::find(ids_.begin(), ids_.end(), id);
  if (it == ids_.end()) return false;
  ids_.erase(it);
  return true;
}

}  // namespace corio::mcp
