// asyncio.Timeout's state machine (Lib/asyncio/timeouts.py): entered, then
// expiring when the deadline cancels the task, expired once the block's end
// has seen it. The timer node is this object: no allocation per timeout.
#include <corio/timeout.hpp>

namespace corio {

Timeout::Timeout(std::optional<double> when)
    : task_(detail::current_task_for("timeout()")),
      loop_(task_.loop()->loop()),
      cancelling_at_entry_(task_.cancelling()) {
  expire = &on_expire;
  reschedule(when);
}

Timeout::~Timeout() {
  loop_.io().remove_timer(this);
  // The deadline passed but the block ended without a CancelledError (it
  // finished first, or raised something else): withdraw our cancellation
  // request so that it does not hit the task's next await.
  if (state_ == State::expiring) task_.uncancel();
}

void Timeout::reschedule(std::optional<double> when) {
  if (state_ != State::entered) {
    throw RuntimeError(state_ == State::expiring ? "Cannot change state of expiring Timeout"
                                                 : "Cannot change state of expired Timeout");
  }
  when_ = when;
  loop_.io().remove_timer(this);
  // A deadline already past fires on the next iteration, as asyncio's call_soon.
  if (when) loop_.io().add_timer(this, *when);
}

void Timeout::on_cancelled() {
  if (state_ != State::expiring) return;
  state_ = State::expired;
  if (task_.uncancel() <= cancelling_at_entry_) throw TimeoutError();
}

void Timeout::on_expire(detail::TimerNode* n) noexcept {
  auto* self = static_cast<Timeout*>(n);
  self->state_ = State::expiring;
  self->task_.request_cancel({});
}

}  // namespace corio
