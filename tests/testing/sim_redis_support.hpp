// A fake Redis server for the simulation's hosts: enough of RESP and of
// GET, SET, INCR, DEL, PING, PUBLISH, (UN)SUBSCRIBE, (P)(UN)SUBSCRIBE for the sweeps of
// corio::redis (sweep_redis_test.cpp). One keyspace and one table of
// subscriptions for all its connections, as one redis-server has.
#pragma once

#include <fnmatch.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <corio/server.hpp>
#include <corio/streams.hpp>

namespace sim_redis {

// A sweep's scenario fails by throwing (the sweep reports what it says).
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

struct Conn {
  corio::StreamWriter w;
  std::set<std::string> channels;
  std::set<std::string> patterns;  // PSUBSCRIBE's, glob-style as Redis's
};

struct State {
  std::map<std::string, std::string> keys;
  std::vector<std::shared_ptr<Conn>> conns;
};

inline std::string bulk(const std::string& s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }
inline std::string integer(long long n) { return ":" + std::to_string(n) + "\r\n"; }
inline std::string array3(const std::string& a, const std::string& b, const std::string& c) {
  return "*3\r\n" + bulk(a) + bulk(b) + c;
}

// One command as its arguments; empty at EOF.
inline corio::Coro<std::vector<std::string>> read_command(corio::StreamReader& r) {
  std::vector<std::string> args;
  std::string line = co_await r.readline();
  if (line.size() < 3 || line[0] != '*') co_return args;
  const int n = std::stoi(line.substr(1));
  for (int i = 0; i < n; ++i) {
    line = co_await r.readline();
    std::string arg = co_await r.readexactly(std::stoul(line.substr(1)) + 2);
    arg.resize(arg.size() - 2);
    args.push_back(std::move(arg));
  }
  co_return args;
}

// Every subscriber of the channel gets the message, and every subscriber
// of a matching pattern a pmessage per pattern; the count answers.
inline std::string publish(State& s, const std::string& channel, const std::string& payload) {
  long long n = 0;
  for (const auto& c : s.conns) {
    if (c->channels.count(channel)) {
      c->w.write(array3("message", channel, bulk(payload)));
      ++n;
    }
    for (const std::string& p : c->patterns) {
      if (::fnmatch(p.c_str(), channel.c_str(), 0) != 0) continue;
      c->w.write("*4\r\n" + bulk("pmessage") + bulk(p) + bulk(channel) + bulk(payload));
      ++n;
    }
  }
  return integer(n);
}

// A confirmation per channel (pattern), with the count of subscriptions
// left, channels and patterns together as Redis counts them.
inline std::string subscription(Conn& c, const std::vector<std::string>& args) {
  const std::string& verb = args[0];
  const bool join = verb == "SUBSCRIBE" || verb == "PSUBSCRIBE";
  std::set<std::string>& names = verb[0] == 'P' ? c.patterns : c.channels;
  std::string kind = verb;
  for (char& ch : kind) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string out;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (join) {
      names.insert(args[i]);
    } else {
      names.erase(args[i]);
    }
    const auto count = static_cast<long long>(c.channels.size() + c.patterns.size());
    out += array3(kind, args[i], integer(count));
  }
  return out;
}

inline std::string answer(State& s, Conn& c, const std::vector<std::string>& a) {
  const std::string& verb = a[0];
  if (verb == "PING") return "+PONG\r\n";
  if (verb == "SET" && a.size() == 3) {
    s.keys[a[1]] = a[2];
    return "+OK\r\n";
  }
  if (verb == "GET" && a.size() == 2) return s.keys.count(a[1]) ? bulk(s.keys[a[1]]) : "$-1\r\n";
  if (verb == "DEL" && a.size() == 2) return integer(static_cast<long long>(s.keys.erase(a[1])));
  if (verb == "INCR" && a.size() == 2) {
    const long long n = (s.keys.count(a[1]) ? std::stoll(s.keys[a[1]]) : 0) + 1;
    s.keys[a[1]] = std::to_string(n);
    return integer(n);
  }
  if (verb == "PUBLISH" && a.size() == 3) return publish(s, a[1], a[2]);
  if (verb == "SUBSCRIBE" || verb == "UNSUBSCRIBE" || verb == "PSUBSCRIBE" ||
      verb == "PUNSUBSCRIBE") {
    return subscription(c, a);
  }
  return "-ERR unknown command '" + verb + "'\r\n";
}

// The connection leaves the table however its handler ends (EOF, a reset,
// cancelled with the simulation).
struct Registered {
  std::shared_ptr<State> s;
  std::shared_ptr<Conn> conn;
  ~Registered() {
    std::erase(s->conns, conn);
    conn->w.close();
  }
};

inline corio::Coro<void> serve(std::shared_ptr<State> s, corio::StreamReader r, corio::StreamWriter w) {
  Registered reg{s, std::make_shared<Conn>(Conn{w, {}, {}})};
  s->conns.push_back(reg.conn);
  try {
    for (;;) {
      std::vector<std::string> args = co_await read_command(r);
      if (args.empty()) break;
      w.write(answer(*s, *reg.conn, args));
      co_await w.drain();
    }
  } catch (const std::system_error&) {  // a client reset: its connection ends
  }
}

// Serves on 0.0.0.0:6379 of its host until cancelled.
inline corio::Coro<void> server() {
  auto state = std::make_shared<State>();
  corio::ClientConnected handler = [state](corio::StreamReader r, corio::StreamWriter w) {
    return serve(state, std::move(r), std::move(w));
  };
  corio::Server server = co_await corio::start_server(handler, "0.0.0.0", 6379);
  co_await server.serve_forever();
}

}  // namespace sim_redis
