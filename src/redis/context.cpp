// A Redis connection on corio's streams (context.hpp has the lifetimes).
#include "redis/context.hpp"

#include <charconv>
#include <system_error>
#include <utility>

#include <corio/c_string.hpp>
#include <corio/errors.hpp>

namespace corio::redis::detail {

namespace {

// RESP: an array of bulk strings, "*N\r\n" then "$LEN\r\nBYTES\r\n" each.
void append_number(std::string& out, char tag, std::size_t n) {
  char digits[24];
  digits[0] = tag;
  const auto [end, ec] = std::to_chars(digits + 1, digits + sizeof digits, n);
  out.append(digits, end);
  out += "\r\n";
}

void encode(std::string& out, const std::vector<std::string>& args) {
  std::size_t size = 16;
  for (const std::string& a : args) size += a.size() + 16;
  out.reserve(out.size() + size);
  append_number(out, '*', args.size());
  for (const std::string& a : args) {
    append_number(out, '$', a.size());
    out += a;
    out += "\r\n";
  }
}

// What a queued message holds: its strings and its own node.
std::size_t cost(const Message& m) {
  return sizeof(Message) + m.channel.size() + m.payload.size() + m.pattern.size();
}

Budget budget_of(const ClientOptions& o) {
  return Budget{o.max_reply_bytes, o.max_reply_elements, 0, {}};
}

// Reads until the connection ends: each read's bytes go to the parser at
// once, so nothing stays in the stream's buffer (an idle connection holds
// none). A Subscriber over its bound waits instead (PubSub).
// However the task ends, the connection ends with it: cancelled from
// outside (the loop shutting down) or failed, it must not leave commands
// waiting for replies nobody will read.
struct EndsWithTheReader {
  Context& ctx;
  ~EndsWithTheReader() { ctx.close("connection closed: its reader stopped"); }
};

Coro<void> read_replies(std::shared_ptr<Context> ctx) {
  StreamReader r = ctx->reader;
  const EndsWithTheReader guard{*ctx};
  try {
    while (!ctx->closed) {
      if (ctx->paused()) {
        ctx->pubsub->resume.clear();
        co_await ctx->pubsub->resume.wait();
        continue;
      }
      const std::optional<std::size_t> got = r.try_fill();
      if (!got) {
        co_await r.readable();
      } else if (*got == 0) {
        ctx->close("connection closed by the server");
      } else {
        const std::string_view bytes = r.buffered();
        ctx->received(bytes);
        r.consume(bytes.size());
      }
    }
  } catch (const std::system_error& e) {
    ctx->close(e.what());
  }
}

}  // namespace

Context::Context(EventLoop& loop, const ClientOptions& options, StreamReader r, StreamWriter w)
    : loop(loop), reader(std::move(r)), writer(std::move(w)), parser(budget_of(options)) {}

Context::~Context() { flushing.cancel(); }

Coro<std::shared_ptr<Context>> Context::connect(ClientOptions options, bool pubsub) {
  // Resolved as a C string: it would connect to what precedes a NUL.
  check_c_string(options.host, "the host");
  std::pair<StreamReader, StreamWriter> streams;
  try {
    streams = co_await open_connection(options.host, static_cast<std::uint16_t>(options.port));
  } catch (const std::system_error& e) {
    throw ConnectionError(e.what());
  }
  auto ctx = std::make_shared<Context>(get_running_loop(), options, std::move(streams.first),
                                       std::move(streams.second));
  if (pubsub) {
    ctx->pubsub = std::make_unique<PubSub>();
    ctx->pubsub->max_unread_bytes = options.max_unread_bytes;
  }
  ctx->reading.emplace(ctx->loop.create_task(read_replies(ctx), "redis reader"));
  co_return ctx;
}

Future<Reply> Context::send(const std::vector<std::string>& args, bool errors_as_values) {
  return write(args, Pending{loop.create_future<Reply>(), errors_as_values, 0});
}

Future<Reply> Context::subscribe(const std::vector<std::string>& args) {
  Future<Reply> done = write(args, Pending{loop.create_future<Reply>(), false, args.size() - 1});
  pubsub->resume.set();  // reads on to the confirmations, bound or not
  return done;
}

Future<Reply> Context::write(const std::vector<std::string>& args, Pending p) {
  if (!alive()) throw ConnectionError(error.empty() ? "not connected" : error);
  Future<Reply> done = p.done;
  if (in_flight() == 0 && out.empty()) {
    std::string bytes;
    encode(bytes, args);
    writer.write(bytes);
  } else {
    if (out.empty()) flushing = loop.call_soon([this] { flush(); });
    encode(out, args);
  }
  pending.push_back(std::move(p));
  return done;
}

void Context::flush() {
  if (!closed) writer.write(out);
  out.clear();
}

void Context::received(std::string_view bytes) {
  parser.feed(bytes);
  Reply reply;
  while (!closed && parser.next(reply)) dispatch(std::move(reply));
  if (!closed && !parser.settle()) close(parser.error());
}

void Context::dispatch(Reply reply) {
  if (pubsub && reply.type == Reply::Type::array && reply.elements.size() >= 3) {
    message(std::move(reply));
  } else if (in_flight() == 0) {
    close("protocol error: a reply no command was waiting for");
  } else {
    answer(std::move(reply));
  }
}

// The oldest command's reply; dropped if its awaiter gave up on it.
void Context::answer(Reply reply) {
  Pending& p = pending[head];
  if (p.confirmations > 1 && reply.type != Reply::Type::error) {
    --p.confirmations;
    return;
  }
  Future<Reply> done = std::move(p.done);
  const bool errors_as_values = p.errors_as_values;
  if (++head == pending.size()) {
    pending.clear();
    head = 0;
  } else if (head >= 64 && head * 2 >= pending.size()) {
    // Answered entries go once they are half the vector: under steady
    // pipelining the queue never empties, and they would pile up for good.
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
  if (done.done()) return;
  if (reply.type == Reply::Type::error && !errors_as_values) {
    done.set_exception(std::make_exception_ptr(ServerError(std::move(reply.str))));
  } else {
    done.set_result(std::move(reply));
  }
}

// A pub/sub message goes to the queue; anything else on a Subscriber's
// connection is a (un)subscribe confirmation.
void Context::message(Reply reply) {
  const std::string& kind = reply.elements[0].str;
  Message m;
  if (kind == "message") {
    m = Message{std::move(reply.elements[1].str), std::move(reply.elements[2].str), {}};
  } else if (kind == "pmessage" && reply.elements.size() >= 4) {
    m = Message{std::move(reply.elements[2].str), std::move(reply.elements[3].str),
                std::move(reply.elements[1].str)};
  } else {
    if (in_flight() == 0) return close("protocol error: a confirmation nobody asked for");
    return answer(std::move(reply));
  }
  pubsub->unread_bytes += cost(m);
  pubsub->messages.put_nowait(std::move(m));
  if (pubsub->unread_bytes >= pubsub->max_unread_bytes) pubsub->over = true;
}

// Back-pressure: past max_unread_bytes of messages next() has not taken,
// the socket is not read, so the kernel's buffers fill and Redis keeps the
// rest under its own client-output-buffer-limit; reading resumes at half
// the bound, so one next() does not flip it back and forth. While a
// (un)subscribe awaits confirmations, which may sit behind unread
// messages, it reads anyway: the overshoot is what Redis had buffered.
// A stream read is at most 64 KiB, so the queue passes its bound by that
// much at most (plus one message).
bool Context::paused() const noexcept {
  return pubsub && pubsub->over && in_flight() == 0;
}

void Context::took(const Message& m) {
  pubsub->unread_bytes -= cost(m);
  if (pubsub->over && pubsub->unread_bytes <= pubsub->max_unread_bytes / 2) {
    pubsub->over = false;
    pubsub->resume.set();
  }
}

void Context::close(std::string why) {
  if (closed) return;
  closed = true;
  error = std::move(why);
  flushing.cancel();
  out.clear();
  writer.abort();
  // The reader task ends here or at its next step (it checks `closed`).
  if (reading && !reading->done()) reading->cancel();
  std::vector<Pending> failed = std::move(pending);
  pending.clear();
  for (std::size_t i = std::exchange(head, 0); i < failed.size(); ++i) {
    if (!failed[i].done.done()) {
      failed[i].done.set_exception(std::make_exception_ptr(ConnectionError(error)));
    }
  }
  if (pubsub) pubsub->messages.shutdown();
}

}  // namespace corio::redis::detail
