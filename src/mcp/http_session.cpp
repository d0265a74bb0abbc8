// HttpSessionTransport (see http_session.hpp): the session's inbox and the
// routing of its output to response streams.
#include "mcp/http_session.hpp"

namespace corio::mcp::detail {

Coro<std::optional<Received>> HttpSessionTransport::receive() {
  while (inbox_.empty() && !closed_) {
    inbox_ready_.clear();
    co_await inbox_ready_.wait();
  }
  if (inbox_.empty()) co_return std::nullopt;
  Received r{std::move(inbox_.front()), false};
  inbox_.pop_front();
  co_return r;
}

void HttpSessionTransport::deliver(std::string text) {
  if (closed_) return;
  inbox_.push_back(std::move(text));
  inbox_ready_.set();
}

Coro<void> HttpSessionTransport::send(std::string_view message, const json& related_request) {
  std::shared_ptr<Outbox> box = standalone_;  // held: the stream may end while we wait
  if (!related_request.is_null()) {
    if (const auto it = by_request_.find(related_request.dump()); it != by_request_.end()) box = it->second;
  }
  if (!box) co_return;  // nowhere to route it: dropped, as the spec allows
  std::string copy(message);  // message refers to the caller's buffer, which a wait may outlive
  while (box->full() && !box->done) co_await box->room.wait();
  if (!box->done) box->push(std::move(copy));
}

void HttpSessionTransport::request_done(const json& id) noexcept {
  const auto it = by_request_.find(id.dump());
  if (it == by_request_.end()) return;
  it->second->finish();
  by_request_.erase(it);
}

std::shared_ptr<Outbox> HttpSessionTransport::open_request(const json& id) {
  auto [it, fresh] = by_request_.try_emplace(id.dump());
  if (!fresh) return nullptr;
  it->second = std::make_shared<Outbox>();
  return it->second;
}

std::shared_ptr<Outbox> HttpSessionTransport::open_standalone() {
  if (standalone_) return nullptr;
  standalone_ = std::make_shared<Outbox>();
  return standalone_;
}

void HttpSessionTransport::close_standalone(const std::shared_ptr<Outbox>& box) noexcept {
  if (standalone_ == box) standalone_.reset();
}

void HttpSessionTransport::close() noexcept {
  closed_ = true;
  inbox_ready_.set();
  for (auto& [id, box] : by_request_) box->finish();
  by_request_.clear();
  if (standalone_) standalone_->finish();
  standalone_.reset();
}

}  // namespace corio::mcp::detail
