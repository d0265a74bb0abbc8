// The connections a LoopServer adopted (lifetime rule 6 in
// server_connection.hpp): served by another protocol once their handler
// returned, ended by the server's close() and shutdown() as its own are.
#include "http/server/server_connection.hpp"

#include <corio/event_loop.hpp>

namespace corio::http::detail {

// The slot goes too: handles may keep the object long after its socket closed.
void Adopted::release() noexcept {
  if (server_ != nullptr) server_->forget(this);
  const corio::detail::ServerSlot gone = std::move(slot_);
}

corio::detail::ServerSlot Adopted::another_slot() const noexcept {
  return corio::detail::ServerSlot(corio::detail::Ref<corio::detail::ServerState>::share(&slot_.server()));
}

std::chrono::milliseconds Adopted::ws_shutdown_timeout() const noexcept {
  return server_ != nullptr ? server_->shared().options.ws_shutdown_timeout : std::chrono::milliseconds::max();
}

void LoopServer::adopt(Adopted* a) {
  a->index_ = static_cast<std::uint32_t>(adopted_.size());
  adopted_.push_back(a);
  a->server_ = this;
  drained_.clear();
}

void LoopServer::forget(Adopted* a) noexcept {
  cool(a);
  Adopted* last = adopted_.back();
  adopted_[a->index_] = last;
  last->index_ = a->index_;
  adopted_.pop_back();
  a->server_ = nullptr;
  if (conns_ == 0 && adopted_.empty()) drained_.set();
}

// Collected first: an End may release its connection (and so edit the
// list). Not graceful, each is forgotten before its End: the LoopServer may
// be gone before a task serving it finishes.
void LoopServer::end_adopted(bool graceful) noexcept {
  const std::vector<Adopted*> all = adopted_;
  for (Adopted* a : all) {
    if (!graceful) forget(a);
    a->end_(a, graceful);
  }
}

void Adopted::heat(Tick tick) {
  if (!hot() && server_ != nullptr) server_->heat(this, tick);
}

void Adopted::cool() noexcept {
  if (hot()) server_->cool(this);
}

void LoopServer::heat(Adopted* a, Adopted::Tick tick) {
  hot_.emplace_back(a, tick);
  a->hot_index_ = static_cast<std::uint32_t>(hot_.size() - 1);
  if (!hot_tick_) arm_hot_tick();
}

void LoopServer::cool(Adopted* a) noexcept {
  if (!a->hot()) return;
  hot_[a->hot_index_] = hot_.back();
  hot_[a->hot_index_].first->hot_index_ = a->hot_index_;
  hot_.pop_back();
  a->hot_index_ = Adopted::kCold;
}

// One timer for all the hot connections, not one per connection or per
// message: a busy connection's cost is a flag cleared per message. Its own
// timer, not the HTTP sweeper's: it runs only while a connection is hot.
// Weak: the LoopServer may go first (its connections were forgotten then).
void LoopServer::arm_hot_tick() {
  hot_tick_ = get_running_loop().call_later(std::chrono::seconds(1), [w = weak_from_this()] {
    const std::shared_ptr<LoopServer> self = w.lock();
    if (!self) return;
    self->hot_tick_.reset();
    for (const auto& [a, tick] : self->hot_) tick(a);  // a Tick does not edit the list
    if (!self->hot_.empty()) self->arm_hot_tick();
  });
}

}  // namespace corio::http::detail
