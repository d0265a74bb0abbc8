// pg::Pool: a semaphore of max_size permits over a LIFO list of idle
// connections (the most recently used one is the likeliest to be warm).
#include <corio/pg/pool.hpp>

#include <deque>
#include <utility>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/semaphore.hpp>
#include <corio/timeout.hpp>

namespace corio::pg {

namespace detail {

struct PoolState {
  struct Idle {
    Connection conn;
    double created;
    double since;
  };

  PoolState(EventLoop& loop, PoolOptions o)
      : loop(loop), options(std::move(o)), permits(static_cast<int>(options.max_size)) {}

  // The pool's loop, not the running one: a connection may come back from
  // a destructor that runs after the loop stopped.
  double now() const { return loop.time(); }
  bool too_old(double created) const { return now() - created > options.max_lifetime.count(); }

  // Idle connections closed by the server, past their lifetime, or idle
  // too long above min_size, go.
  void prune() {
    const double t = now();
    std::deque<Idle> keep;
    for (Idle& c : idle) {
      const bool stale = t - c.since > options.max_idle.count() && open > options.min_size;
      if (c.conn.is_closed() || too_old(c.created) || stale) {
        --open;  // destroyed with `idle` below
      } else {
        keep.push_back(std::move(c));
      }
    }
    idle = std::move(keep);
  }

  EventLoop& loop;
  PoolOptions options;
  Semaphore permits;
  std::deque<Idle> idle;  // front: most recently returned
  std::size_t open = 0;
  bool closed = false;
};

}  // namespace detail

namespace {

Coro<void> take_permit(Semaphore* permits) { co_await permits->acquire(); }

// A round trip, bounded: a connection that cannot answer in time is dead
// to the pool.
Coro<bool> healthy(Connection* conn) {
  try {
    co_await wait_for(conn->query("SELECT 1"), std::chrono::seconds(5));
    co_return true;
  } catch (const Error&) {
  } catch (const TimeoutError&) {
  }
  co_return false;
}

}  // namespace

Pool::Pool(std::shared_ptr<detail::PoolState> s) noexcept : s_(std::move(s)) {}
Pool::Pool(Pool&&) noexcept = default;
Pool& Pool::operator=(Pool&&) noexcept = default;
Pool::~Pool() { close(); }

Coro<Pool> Pool::create(PoolOptions options) {
  if (options.max_size == 0 || options.min_size > options.max_size) {
    throw ValueError("pool sizes: need 0 <= min_size <= max_size and max_size > 0");
  }
  auto s = std::make_shared<detail::PoolState>(get_running_loop(), std::move(options));
  for (std::size_t i = 0; i < s->options.min_size; ++i) {
    Connection conn = co_await Connection::connect(s->options.conninfo);
    const double t = s->now();
    s->idle.push_back({std::move(conn), t, t});
    ++s->open;
  }
  co_return Pool(std::move(s));
}

Coro<Result> Pool::query_params(std::string sql, std::vector<Param> params) {
  PooledConnection conn = co_await acquire();
  co_return co_await conn->query_params(std::move(sql), std::move(params));
}

Coro<void> Pool::execute(std::string script) {
  PooledConnection conn = co_await acquire();
  co_await conn->execute(std::move(script));
}

Coro<PooledConnection> Pool::acquire() {
  auto s = s_;
  if (!s || s->closed) throw InvalidStateError("the pool is closed");
  co_await wait_for(take_permit(&s->permits), s->options.acquire_timeout);
  try {
    s->prune();
    while (!s->idle.empty()) {
      detail::PoolState::Idle c = std::move(s->idle.front());
      s->idle.pop_front();
      bool usable = s->now() - c.since <= s->options.health_check_after.count();
      if (!usable) usable = co_await healthy(&c.conn);  // not inside the condition: g++ 12
      if (usable) co_return PooledConnection(s, std::move(c.conn), c.created);
      --s->open;
    }
    Connection conn = co_await Connection::connect(s->options.conninfo);
    ++s->open;
    co_return PooledConnection(s, std::move(conn), s->now());
  } catch (...) {
    s->permits.release();
    throw;
  }
}

std::size_t Pool::size() const noexcept { return s_ ? s_->open : 0; }
std::size_t Pool::idle() const noexcept { return s_ ? s_->idle.size() : 0; }

void Pool::close() noexcept {
  if (!s_ || s_->closed) return;
  s_->closed = true;
  s_->open -= s_->idle.size();
  s_->idle.clear();
}

PooledConnection::PooledConnection(std::shared_ptr<detail::PoolState> pool, Connection conn,
                                   double created)
    : pool_(std::move(pool)), conn_(std::move(conn)), created_(created) {}

PooledConnection::PooledConnection(PooledConnection&& o) noexcept
    : pool_(std::move(o.pool_)), conn_(std::move(o.conn_)), created_(o.created_) {}

PooledConnection::~PooledConnection() {
  if (!pool_) return;
  detail::PoolState& p = *pool_;
  if (p.closed || conn_.is_closed() || p.too_old(created_)) {
    --p.open;
  } else {
    if (conn_.transaction_status() != TxStatus::idle) conn_.send_detached("ROLLBACK");
    if (!p.options.reset_sql.empty()) conn_.send_detached(p.options.reset_sql);
    p.idle.push_front({std::move(conn_), created_, p.now()});
    p.prune();
  }
  p.permits.release();
}

}  // namespace corio::pg
