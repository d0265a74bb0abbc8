// HttpSessionTransport and Outbox (see http_session.hpp): the routing of
// a session's output to response streams, and the streams' bounded event
// stores.
#include "mcp/http_session.hpp"
#include "mcp/request_key.hpp"

#include <algorithm>
#include <charconv>

namespace corio::mcp::detail {

void Outbox::drop_front() noexcept {
  const std::size_t size = events.front().size();
  stored_bytes -= size;
  if (cursor == first) {
    ++cursor;
    unwritten_bytes -= size;
  }
  events.pop_front();
  ++first;
}

void Outbox::push(std::string message) {
  if (keep_last_only) {
    while (!events.empty()) drop_front();
  }
  stored_bytes += message.size();
  unwritten_bytes += message.size();
  events.push_back(std::move(message));
  ++next;
  // Nobody drains the stream (full() waits only while a writer does): the
  // oldest events go, so a client that never resumes costs a bounded store.
  while (unwritten() > kMaxQueued ||
         (!draining() && unwritten() > 1 && unwritten_bytes > kMaxQueuedBytes)) {
    drop_front();
  }
  ready.set();
  if (full()) room.clear();
}

std::pair<std::uint64_t, std::string_view> Outbox::take() {
  const std::uint64_t n = cursor++;
  unwritten_bytes -= events[static_cast<std::size_t>(n - first)].size();
  // Never n (cursor - first > 1 keeps it): the view below points into it.
  while (cursor - first > kKeptWritten ||
         (cursor - first > 1 && stored_bytes - unwritten_bytes > kKeptWrittenBytes)) {
    drop_front();
  }
  room.set();
  return {n, events[static_cast<std::size_t>(n - first)]};  // kept: the client may miss it
}

void Outbox::finish() noexcept {
  done = true;
  ready.set();
  room.set();
}

std::uint64_t Outbox::attach(std::uint64_t from, bool resumption) noexcept {
  cursor = std::clamp(from, first, next);
  unwritten_bytes = 0;  // a resumption may go back over events written before
  for (std::size_t i = static_cast<std::size_t>(cursor - first); i < events.size(); ++i) {
    unwritten_bytes += events[i].size();
  }
  if (resumption) writer_end = UINT64_MAX;
  attached = true;
  answering = false;
  ready.set();  // the writer before sees it is no longer in charge
  if (full()) room.clear();
  return ++writer;
}

void Outbox::detach(std::uint64_t w) noexcept {
  if (w != writer) return;  // another took over already
  attached = false;
  room.set();
}

void Outbox::close_writer() noexcept {
  writer_end = next;
  ready.set();
}

Coro<void> HttpSessionTransport::send(std::string_view message, const json& related_request) {
  std::shared_ptr<Outbox> box = standalone_;  // held: the stream may end while we wait
  if (!related_request.is_null()) {
    if (const auto it = by_request_.find(request_key(related_request)); it != by_request_.end()) box = it->second;
  }
  if (!box) co_return;  // nowhere to route it: dropped, as the spec allows
  std::string copy(message);  // message refers to the caller's buffer, which a wait may outlive
  while (box->full() && !box->done) {
    box->room.clear();
    co_await box->room.wait();
  }
  if (!box->done) box->push(std::move(copy));
}

void HttpSessionTransport::request_done(const json& id) noexcept {
  const auto it = by_request_.find(request_key(id));
  if (it == by_request_.end()) return;
  const std::shared_ptr<Outbox> box = it->second;
  by_request_.erase(it);
  box->finish();
  // Kept for a while if no writer is there to write its end (the stream
  // was closed mid-call, or its client went away): the client resumes with
  // Last-Event-ID. A writer still there writes the rest; a stream kept for
  // every call would cost every call (measured: the allocator's churn).
  if (box->attached || box->answering || box->keep_last_only) return;
  finished_.push_back(box);
  if (finished_.size() > kKeptFinished) finished_.erase(finished_.begin());
}

void HttpSessionTransport::request_answered(const json& id) noexcept {
  if (const auto it = by_request_.find(request_key(id)); it != by_request_.end()) it->second->answered = true;
}

void HttpSessionTransport::close_stream(const json& id) noexcept {
  if (const auto it = by_request_.find(request_key(id)); it != by_request_.end()) it->second->close_writer();
}

std::shared_ptr<Outbox> HttpSessionTransport::new_outbox() {
  auto box = std::make_shared<Outbox>();
  box->stream_id = next_stream_++;
  return box;
}

// The streams a client may resume are few (its requests running, its GET
// stream, the finished ones kept): a search, no index to keep per call.
std::shared_ptr<Outbox> HttpSessionTransport::find_stream(std::uint64_t id) const noexcept {
  if (standalone_ && standalone_->stream_id == id) return standalone_;
  for (const auto& [request, box] : by_request_) {
    if (box->stream_id == id) return box;
  }
  for (const auto& box : finished_) {
    if (box->stream_id == id) return box;
  }
  return nullptr;
}

std::shared_ptr<Outbox> HttpSessionTransport::open_request(const json& id) {
  auto [it, fresh] = by_request_.try_emplace(request_key(id));
  if (!fresh) return nullptr;
  it->second = new_outbox();
  return it->second;
}

std::shared_ptr<Outbox> HttpSessionTransport::open_standalone() {
  if (standalone_ && standalone_->attached) return nullptr;
  // A GET without Last-Event-ID is a new stream: what waited is not replayed
  // on it (the spec: never on another stream than the one it was sent on).
  standalone_ = new_outbox();
  return standalone_;
}

std::optional<std::pair<std::shared_ptr<Outbox>, std::uint64_t>> HttpSessionTransport::resume(
    std::string_view last_event_id) {
  const std::size_t dash = last_event_id.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::uint64_t stream = 0, n = 0;
  const std::string_view a = last_event_id.substr(0, dash), b = last_event_id.substr(dash + 1);
  const auto [ea, ra] = std::from_chars(a.data(), a.data() + a.size(), stream);
  const auto [eb, rb] = std::from_chars(b.data(), b.data() + b.size(), n);
  if (ra != std::errc() || rb != std::errc() || ea != a.data() + a.size() || eb != b.data() + b.size()) {
    return std::nullopt;
  }
  std::shared_ptr<Outbox> box = find_stream(stream);
  if (!box || n >= box->next) return std::nullopt;
  return std::pair{std::move(box), n + 1};
}

bool HttpSessionTransport::busy() const noexcept {
  return !by_request_.empty() || (standalone_ && standalone_->attached);
}

void HttpSessionTransport::close() noexcept {
  for (auto& [id, box] : by_request_) box->finish();
  if (standalone_) standalone_->finish();
  by_request_.clear();
  finished_.clear();
  standalone_.reset();
}

}  // namespace corio::mcp::detail
