// One hiredis async context driven by corio's loop.
//
// hiredis asks for read/write interest through its ev hooks; each becomes a
// level-triggered add_reader/add_writer whose callback calls
// redisAsyncHandleRead/Write. hiredis owns the redisAsyncContext and frees
// it itself after a disconnect, calling every pending command's callback
// with a NULL reply first: that is where commands in flight learn the
// connection broke.
//
// Lifetimes: 1. A command's Pending is owned by hiredis from send until its
// callback, which deletes it. 2. The Context outlives its ac: its
// destructor frees a live one (callbacks see `ctx->ac == nullptr` first).
// 3. Pub/sub messages go to `messages`, which lives in the Context; their
// bytes there are bounded (back-pressure below).
// 4. close() frees the ac before the Context: its commands in flight fail
// first, with the reason given; the Context stays, not alive, for `error`.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <hiredis/async.h>

#include <corio/event_loop.hpp>
#include <corio/future.hpp>
#include <corio/queue.hpp>
#include <corio/redis/client.hpp>

#include "redis/reader.hpp"

namespace corio::redis::detail {

struct Context {
  Context(EventLoop& loop, Budget budget) noexcept : loop(loop), budget(std::move(budget)) {}
  Context(const Context&) = delete;
  ~Context();

  // Throws ConnectionError (refused, unresolvable). Replies are read
  // within options.max_reply_bytes and max_reply_elements (reader.hpp).
  static Coro<std::unique_ptr<Context>> connect(ClientOptions options);

  bool alive() const noexcept { return ac != nullptr && connected; }
  // Sends one command; its reply completes the Future. Throws
  // ConnectionError when not alive. `errors_as_values`: an error reply is a
  // Reply of type error instead of a ServerError.
  Future<Reply> send(const std::vector<std::string>& args, bool errors_as_values = false);
  // Sends a (P)SUBSCRIBE whose messages land in `messages`.
  void subscribe(const std::vector<std::string>& args);
  std::size_t in_flight() const noexcept { return pending; }
  // next() took `m` from `messages`: reading may resume.
  void took(const Message& m);
  // Closes the connection now; the commands in flight fail with `why`.
  void close(std::string why);

  EventLoop& loop;
  redisAsyncContext* ac = nullptr;
  int fd = -1;
  bool connected = false;
  std::string error;  // why it is not alive
  Future<void> ready;
  std::size_t pending = 0;
  Queue<Message> messages;
  Queue<std::string> confirmations;  // channels whose (un)subscribe was confirmed
  Budget budget;                     // the reply reader's

  // Back-pressure (a Subscriber's): the socket is read while hiredis asks
  // for it (its ev hooks) and `messages` holds under max_unread_bytes.
  // Past that, reading pauses, so the kernel's buffers fill and Redis keeps
  // the rest under its own client-output-buffer-limit; it resumes at half
  // the bound, so one next() does not flip it back and forth. While a
  // (un)subscribe awaits confirmations, which may sit behind unread
  // messages, it reads anyway: the overshoot is what Redis had buffered.
  void queued(Message m);
  void confirmed(std::string name);
  void expect_confirmations(std::size_t n);
  void update_reading();
  std::size_t max_unread_bytes = 0;
  std::size_t unread_bytes = 0;
  std::size_t confirmations_due = 0;
  bool hiredis_reads = false;  // its ev hooks' last word
  bool paused = false;
};

}  // namespace corio::redis::detail
