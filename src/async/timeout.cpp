#include <corio/timeout.hpp>

namespace corio::detail {

TimeoutScope::TimeoutScope(double deadline, bool relative)
    : task_(current_task_for("timeout()")),
      loop_(task_.loop()->loop()),
      cancelling_at_entry_(task_.cancelling()) {
  expire = &on_expire;
  loop_.add_timer(this, relative ? loop_.time() + deadline : deadline);
}

TimeoutScope::~TimeoutScope() {
  loop_.remove_timer(this);
  // The deadline passed but the awaitable finished first: withdraw our
  // cancellation request so it does not hit the task's next await.
  if (expired_ && !settled_) task_.uncancel();
}

void TimeoutScope::on_cancelled() {
  if (!expired_ || settled_) return;
  settled_ = true;
  if (task_.uncancel() <= cancelling_at_entry_) throw TimeoutError();
}

void TimeoutScope::on_expire(TimerNode* n) noexcept {
  auto* self = static_cast<TimeoutScope*>(n);
  self->expired_ = true;
  self->task_.request_cancel({});
}

}  // namespace corio::detail
