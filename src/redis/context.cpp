// hiredis's async context on corio's loop (context.hpp has the lifetimes).
#include "redis/context.hpp"

#include <utility>

#include <corio/c_string.hpp>
#include <corio/errors.hpp>

namespace corio::redis::detail {

namespace {

Context* of(const redisAsyncContext* ac) { return static_cast<Context*>(ac->data); }

std::string context_error(const redisAsyncContext* ac) {
  return ac->errstr[0] ? ac->errstr : "connection lost";
}

// Why the commands in flight fail: a refused reply or close()'s reason
// first, hiredis's own words otherwise.
std::string lost_reason(const redisAsyncContext* ac) {
  if (const Context* ctx = of(ac)) {
    if (!ctx->budget.refused.empty()) return ctx->budget.refused;
    if (!ctx->error.empty()) return ctx->error;
  }
  return context_error(ac);
}

// hiredis reads, takes every whole reply, and leaves the unfinished one
// buffered: that one must fit the budget too, or a server sending a long
// string slowly (or announcing one) would fill memory before it is refused.
void on_readable(Context* ctx) {
  if (!ctx->ac) return;
  redisAsyncHandleRead(ctx->ac);
  if (ctx->ac && !pending_reply_fits(ctx->ac->c.reader, &ctx->budget)) {
    ctx->close(ctx->budget.refused);
  }
}

// hiredis's ev hooks: privdata is the Context. They use the fd saved at
// connect, not ac->c: hiredis calls some of them while freeing ac.
// Reading also answers to back-pressure (update_reading).
void add_read(void* p) {
  auto* ctx = static_cast<Context*>(p);
  ctx->hiredis_reads = true;
  ctx->update_reading();
}
void del_read(void* p) {
  auto* ctx = static_cast<Context*>(p);
  ctx->hiredis_reads = false;
  ctx->loop.remove_reader(ctx->fd);
}
void add_write(void* p) {
  auto* ctx = static_cast<Context*>(p);
  redisAsyncContext* ac = ctx->ac;
  if (ac) ctx->loop.add_writer(ctx->fd, [ac] { redisAsyncHandleWrite(ac); });
}
void del_write(void* p) {
  auto* ctx = static_cast<Context*>(p);
  ctx->loop.remove_writer(ctx->fd);
}
void cleanup(void* p) {
  del_read(p);
  del_write(p);
}

// Called once hiredis frees the context (after a disconnect or an error).
void gone(Context* ctx, const std::string& why) {
  cleanup(ctx);
  ctx->connected = false;
  ctx->ac = nullptr;
  if (ctx->error.empty()) ctx->error = why;
  if (!ctx->ready.done()) ctx->ready.set_exception(std::make_exception_ptr(ConnectionError(why)));
  ctx->messages.shutdown();
  ctx->confirmations.shutdown();
}

void on_connect(const redisAsyncContext* ac, int status) {
  Context* ctx = of(ac);
  if (!ctx) return;
  if (status == REDIS_OK) {
    ctx->connected = true;
    ctx->ready.set_result();
  } else {
    gone(ctx, context_error(ac));  // hiredis frees ac after this returns
  }
}

void on_disconnect(const redisAsyncContext* ac, int) {
  if (Context* ctx = of(ac)) gone(ctx, lost_reason(ac));
}

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::string;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      break;  // nil
  }
  return out;
}

struct Pending {
  Context* ctx;
  Future<Reply> done;
  bool errors_as_values;
};

void on_reply(redisAsyncContext* ac, void* r, void* privdata) {
  std::unique_ptr<Pending> p(static_cast<Pending*>(privdata));
  --p->ctx->pending;
  if (p->done.done()) return;  // its awaiter was cancelled: dropped
  auto* reply = static_cast<redisReply*>(r);
  if (!reply) {
    p->done.set_exception(std::make_exception_ptr(ConnectionError(lost_reason(ac))));
  } else if (reply->type == REDIS_REPLY_ERROR && !p->errors_as_values) {
    p->done.set_exception(std::make_exception_ptr(ServerError(std::string(reply->str, reply->len))));
  } else {
    p->done.set_result(convert(reply));
  }
}

// Every message of a subscription, and its (un)subscribe confirmations.
void on_message(redisAsyncContext* ac, void* r, void*) {
  Context* ctx = of(ac);
  auto* reply = static_cast<redisReply*>(r);
  if (!ctx || !reply || reply->type != REDIS_REPLY_ARRAY || reply->elements < 3) return;
  Reply m = convert(reply);
  const std::string& kind = m.elements[0].str;
  if (kind == "message") {
    ctx->queued(Message{m.elements[1].str, m.elements[2].str, {}});
  } else if (kind == "pmessage" && m.elements.size() >= 4) {
    ctx->queued(Message{m.elements[2].str, m.elements[3].str, m.elements[1].str});
  } else {
    ctx->confirmed(m.elements[1].str);
  }
}

// redisAsyncCommandArgv over our strings; the pointer arrays stay on the
// stack for the usual few arguments (this runs once a command).
int send_argv(redisAsyncContext* ac, redisCallbackFn* fn, void* privdata,
              const std::vector<std::string>& args) {
  constexpr std::size_t kInline = 8;
  const char* argv_inline[kInline];
  std::size_t lens_inline[kInline];
  std::vector<const char*> argv_heap;
  std::vector<std::size_t> lens_heap;
  const char** argv = argv_inline;
  std::size_t* lens = lens_inline;
  if (args.size() > kInline) {
    argv_heap.resize(args.size());
    lens_heap.resize(args.size());
    argv = argv_heap.data();
    lens = lens_heap.data();
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lens[i] = args[i].size();
  }
  return redisAsyncCommandArgv(ac, fn, privdata, static_cast<int>(args.size()), argv, lens);
}

// What a queued message holds: its strings and its own node.
std::size_t cost(const Message& m) {
  return sizeof(Message) + m.channel.size() + m.payload.size() + m.pattern.size();
}

}  // namespace

Context::~Context() {
  if (ac) {
    redisAsyncContext* live = std::exchange(ac, nullptr);
    live->data = nullptr;  // its callbacks must not reach us now
    cleanup(this);
    redisAsyncFree(live);
  }
}

void Context::close(std::string why) {
  if (!ac) return;
  error = std::move(why);
  redisAsyncFree(ac);         // on_reply for each command in flight, then on_disconnect
  if (ac) gone(this, error);  // hiredis skips on_disconnect before the connect finished
}

Coro<std::unique_ptr<Context>> Context::connect(ClientOptions options) {
  // hiredis resolves a C string: it would connect to what precedes a NUL.
  check_c_string(options.host, "the host");
  auto ctx = std::make_unique<Context>(
      get_running_loop(), Budget{options.max_reply_bytes, options.max_reply_elements, 0, {}});
  redisAsyncContext* ac = redisAsyncConnect(options.host.c_str(), options.port);
  if (!ac) throw ConnectionError("out of memory");
  if (ac->err) {
    const std::string why = context_error(ac);
    redisAsyncFree(ac);
    throw ConnectionError(why);
  }
  ctx->ac = ac;
  ctx->fd = ac->c.fd;
  ctx->max_unread_bytes = options.max_unread_bytes;
  use_budget(ac->c.reader, &ctx->budget);
  ac->data = ctx.get();
  ac->ev.data = ctx.get();
  ac->ev.addRead = add_read;
  ac->ev.delRead = del_read;
  ac->ev.addWrite = add_write;
  ac->ev.delWrite = del_write;
  ac->ev.cleanup = cleanup;
  ctx->ready = ctx->loop.create_future<void>();
  redisAsyncSetConnectCallback(ac, on_connect);
  redisAsyncSetDisconnectCallback(ac, on_disconnect);
  add_write(ctx.get());  // hiredis learns the connect finished when writable
  Future<void> ready = ctx->ready;
  co_await ready;
  co_return ctx;
}

Future<Reply> Context::send(const std::vector<std::string>& args, bool errors_as_values) {
  if (!alive()) throw ConnectionError(error.empty() ? "not connected" : error);
  auto p = std::make_unique<Pending>(Pending{this, loop.create_future<Reply>(), errors_as_values});
  Future<Reply> done = p->done;
  if (send_argv(ac, on_reply, p.get(), args) != REDIS_OK) {
    throw ConnectionError(context_error(ac));
  }
  p.release();  // hiredis owns it until on_reply
  ++pending;
  return done;
}

void Context::subscribe(const std::vector<std::string>& args) {
  if (!alive()) throw ConnectionError(error.empty() ? "not connected" : error);
  if (send_argv(ac, on_message, nullptr, args) != REDIS_OK) {
    throw ConnectionError(context_error(ac));
  }
  expect_confirmations(args.size() - 1);  // one a channel, after the verb
}

// hiredis's one read per readable event is at most 16 KiB, so the queue
// passes its bound by that much at most (plus one message).
void Context::queued(Message m) {
  unread_bytes += cost(m);
  messages.put_nowait(std::move(m));
  if (!paused && unread_bytes >= max_unread_bytes) {
    paused = true;
    update_reading();
  }
}

void Context::took(const Message& m) {
  unread_bytes -= cost(m);
  if (paused && unread_bytes <= max_unread_bytes / 2) {
    paused = false;
    update_reading();
  }
}

void Context::expect_confirmations(std::size_t n) {
  confirmations_due += n;
  update_reading();
}

void Context::confirmed(std::string name) {
  confirmations.put_nowait(std::move(name));
  if (confirmations_due > 0 && --confirmations_due == 0) update_reading();
}

void Context::update_reading() {
  if (!ac) return;
  if (hiredis_reads && (!paused || confirmations_due > 0)) {
    loop.add_reader(fd, [this] { on_readable(this); });
  } else {
    loop.remove_reader(fd);
  }
}

}  // namespace corio::redis::detail
