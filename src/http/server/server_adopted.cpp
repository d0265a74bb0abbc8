// The connections a LoopServer adopted (lifetime rule 6 in
// server_connection.hpp): served by another protocol once their handler
// returned, ended by the server's close() and shutdown() as its own are.
#include "http/server/server_connection.hpp"

namespace corio::http::detail {

// The slot goes too: handles may keep the object long after its socket closed.
void Adopted::release() noexcept {
  if (server_ != nullptr) server_->forget(this);
  const corio::detail::ServerSlot gone = std::move(slot_);
}

void LoopServer::adopt(Adopted* a) {
  a->index_ = static_cast<std::uint32_t>(adopted_.size());
  adopted_.push_back(a);
  a->server_ = this;
  drained_.clear();
}

void LoopServer::forget(Adopted* a) noexcept {
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

}  // namespace corio::http::detail
