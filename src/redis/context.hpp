// One Redis connection on corio's streams: commands are encoded here (RESP
// arrays of bulk strings) and written whole; one reader task per connection
// parses the replies (ReplyParser, reader.hpp) and hands each to the oldest
// command waiting, so concurrent commands pipeline and stay matched FIFO.
//
// Lifetimes: 1. The reader task holds a shared_ptr to the Context, so the
// Context lives until the task ended; its owners (ClientState, Subscriber)
// close() it when they go, which cancels the task. 2. A command's Pending
// sits in `pending` from its write until its reply came or the connection
// closed; its Future is the awaiting task's, which may have given up on it
// (cancelled: the Future is done), and the reply is then read and dropped.
// 3. close() fails every Pending with the reason given and aborts the
// socket; the Context stays, not alive, for `error`.
//
// Out of step is what redis-py #2665 was: a command cancelled after its
// write left its reply to be read as the next command's. Here the reply
// belongs to the Pending, not to the task awaiting it, so a cancelled
// await cannot shift the queue; and a command is written in one piece or
// not at all (write() never suspends), so a cancel cannot cut one in half.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/future.hpp>
#include <corio/handle.hpp>
#include <corio/queue.hpp>
#include <corio/redis/client.hpp>
#include <corio/streams.hpp>
#include <corio/task.hpp>

#include "redis/reader.hpp"

namespace corio::redis::detail {

// A command whose reply has not come yet. A (un)subscribe has one
// confirmation a channel instead of one reply.
struct Pending {
  Future<Reply> done;
  bool errors_as_values = false;
  std::size_t confirmations = 0;
};

// A Subscriber's side: its messages and their bound (back-pressure below).
struct PubSub {
  Queue<Message> messages;
  std::size_t max_unread_bytes = 0;
  std::size_t unread_bytes = 0;
  bool over = false;  // reached max_unread_bytes; cleared at half (Context::paused)
  Event resume;       // the reader task waits on it while paused
};

struct Context : std::enable_shared_from_this<Context> {
  Context(EventLoop& loop, const ClientOptions& options, StreamReader r, StreamWriter w);
  Context(const Context&) = delete;
  ~Context();

  // Throws ConnectionError (refused, unresolvable). Replies are read
  // within options.max_reply_bytes and max_reply_elements (reader.hpp).
  // `pubsub`: a Subscriber's connection.
  static Coro<std::shared_ptr<Context>> connect(ClientOptions options, bool pubsub = false);

  bool alive() const noexcept { return !closed; }
  // Writes one command; its reply completes the Future. Throws
  // ConnectionError when not alive. `errors_as_values`: an error reply is a
  // Reply of type error instead of a ServerError.
  Future<Reply> send(const std::vector<std::string>& args, bool errors_as_values = false);
  // Writes a (P)(UN)SUBSCRIBE; the Future completes once every name after
  // the verb is confirmed.
  Future<Reply> subscribe(const std::vector<std::string>& args);
  std::size_t in_flight() const noexcept { return pending.size() - head; }
  // next() took `m` from the messages: reading may resume.
  void took(const Message& m);
  // Closes the connection now; the commands in flight fail with `why`.
  void close(std::string why);

  EventLoop& loop;
  StreamReader reader;
  StreamWriter writer;
  ReplyParser parser;
  bool closed = false;
  std::string error;  // why it is not alive
  // FIFO: pending[head] is the oldest; cleared when all are answered.
  std::vector<Pending> pending;
  std::size_t head = 0;
  std::unique_ptr<PubSub> pubsub;  // a Subscriber's only
  std::optional<Task<void>> reading;

  // Commands written while others are in flight join `out`, written once
  // per loop iteration: many tasks' commands leave in one write, while a
  // lone command (the common round trip) goes at once, adding no iteration.
  std::string out;
  Handle flushing;

  // The reader task's side.
  void received(std::string_view bytes);
  void dispatch(Reply reply);
  void answer(Reply reply);
  void message(Reply reply);
  bool paused() const noexcept;

 private:
  Future<Reply> write(const std::vector<std::string>& args, Pending p);
  void flush();
};

}  // namespace corio::redis::detail
