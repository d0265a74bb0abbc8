// Router (see router.hpp).
#include <corio/errors.hpp>
#include <corio/http/router.hpp>
#include <corio/http/url.hpp>

namespace corio::http {

namespace {

std::string decode_segment(std::string_view raw) {
  if (raw.find('%') == std::string_view::npos) return std::string(raw);
  try {
    return percent_decode(raw, false);
  } catch (const ValueError& e) {
    throw HTTPException(400, std::string("bad path: ") + e.what());
  }
}

}  // namespace

void Router::add_method(Methods& methods, std::string method, Handler handler) {
  for (MethodHandler& m : methods) {
    if (m.method == method) {
      m.handler = std::move(handler);  // the later route wins, as re-registering means to
      return;
    }
  }
  methods.push_back({std::move(method), std::move(handler)});
}

void Router::add(std::string method, std::string_view pattern, Handler handler) {
  if (pattern.empty() || pattern.front() != '/') {
    throw ValueError("a route pattern starts with '/': " + std::string(pattern));
  }
  if (pattern.find('{') == std::string_view::npos) {
    add_method(static_[std::string(pattern)], std::move(method), std::move(handler));
    return;
  }
  Dynamic route;
  std::string_view rest = pattern.substr(1);
  for (bool last = false; !last;) {
    const std::size_t slash = rest.find('/');
    last = slash == std::string_view::npos;
    const std::string_view piece = rest.substr(0, slash);
    rest = last ? std::string_view() : rest.substr(slash + 1);
    Segment seg{std::string(piece), Segment::literal};
    if (!piece.empty() && piece.front() == '{') {
      if (piece.back() != '}' || piece.size() < 3) {
        throw ValueError("bad parameter in route pattern: " + std::string(pattern));
      }
      seg.text = std::string(piece.substr(1, piece.size() - 2));
      seg.kind = Segment::param;
      const std::size_t colon = seg.text.find(':');
      if (colon != std::string::npos) {
        if (seg.text.substr(colon) != ":.*" || !last) {
          throw ValueError("only a last {name:.*} parameter may span segments: " +
                           std::string(pattern));
        }
        seg.text.resize(colon);
        seg.kind = Segment::tail;
      }
    } else if (piece.find_first_of("{}") != std::string_view::npos) {
      throw ValueError("a parameter must be a whole segment: " + std::string(pattern));
    }
    route.segments.push_back(std::move(seg));
  }
  for (Dynamic& existing : dynamic_) {
    bool same = existing.segments.size() == route.segments.size();
    for (std::size_t i = 0; same && i < route.segments.size(); ++i) {
      same = existing.segments[i].text == route.segments[i].text &&
             existing.segments[i].kind == route.segments[i].kind;
    }
    if (same) {
      add_method(existing.methods, std::move(method), std::move(handler));
      return;
    }
  }
  add_method(route.methods, std::move(method), std::move(handler));
  route.literal_prefix = literal_prefix(route.segments);
  // aiohttp's order: more leading literal segments first, then the order of adding.
  auto at = dynamic_.begin();
  while (at != dynamic_.end() && at->literal_prefix >= route.literal_prefix) ++at;
  dynamic_.insert(at, std::move(route));
}

const Handler* Router::pick(const Methods& methods, std::string_view method) {
  const MethodHandler* get = nullptr;
  for (const MethodHandler& m : methods) {
    if (m.method == method) return &m.handler;
    if (m.method == "GET") get = &m;
  }
  return get && method == "HEAD" ? &get->handler : nullptr;
}

// A route that matched the path but not the method: its methods join the
// 405's Allow, each once (aiohttp's set of allowed methods), HEAD with GET.
void Router::refuse(const Methods& methods, Match& refused) {
  refused.status = 405;
  const auto add = [&refused](std::string_view m) {
    for (std::string_view rest = refused.allow; !rest.empty();) {
      const std::size_t comma = rest.find(", ");
      if (rest.substr(0, comma) == m) return;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
    }
    if (!refused.allow.empty()) refused.allow += ", ";
    refused.allow += m;
  };
  for (const MethodHandler& m : methods) add(m.method);
  for (const MethodHandler& m : methods) {
    if (m.method == "GET") add("HEAD");
  }
}

bool Router::match(const Dynamic& route, std::string_view raw_path, MatchInfo& params) {
  const std::size_t mark = params.size();
  std::string_view rest = raw_path.substr(1);
  bool end = false;  // every segment of the path is used
  for (const Segment& seg : route.segments) {
    if (seg.kind == Segment::tail) {
      params.emplace_back(seg.text, decode_segment(end ? std::string_view() : rest));
      return true;
    }
    if (end) {  // the path ran out first
      params.resize(mark);
      return false;
    }
    const std::size_t slash = rest.find('/');
    const std::string_view piece = rest.substr(0, slash);
    end = slash == std::string_view::npos;
    rest = end ? std::string_view() : rest.substr(slash + 1);
    if (seg.kind == Segment::literal) {
      if (piece == seg.text || decode_segment(piece) == seg.text) continue;
    } else if (!piece.empty()) {
      params.emplace_back(seg.text, decode_segment(piece));
      continue;
    }
    params.resize(mark);
    return false;
  }
  if (end) return true;
  params.resize(mark);
  return false;
}

// aiohttp's precedence: the exact path first, then the patterns with more
// leading literal segments; a route that matches the path but not the method
// passes to the next, and only when none takes the method is it a 405.
Router::Match Router::resolve(std::string_view method, std::string_view raw_path,
                              MatchInfo& params) const {
  auto it = static_.find(raw_path);
  if (it == static_.end() && raw_path.find('%') != std::string_view::npos) {
    it = static_.find(decode_segment(raw_path));
  }
  if (it == static_.end()) return resolve_patterns(method, raw_path, params, nullptr);
  if (const Handler* h = pick(it->second, method)) return Match{h, 200, {}};
  return resolve_patterns(method, raw_path, params, &it->second);
}

// The patterns, after the exact path found nothing or was refused (literal).
// Apart from resolve() so that its exact-path hit builds no refusal.
Router::Match Router::resolve_patterns(std::string_view method, std::string_view raw_path,
                                       MatchInfo& params, const Methods* literal) const {
  Match refused{nullptr, 404, {}};
  if (literal) refuse(*literal, refused);
  for (const Dynamic& route : dynamic_) {
    if (!match(route, raw_path, params)) continue;
    if (const Handler* h = pick(route.methods, method)) return Match{h, 200, {}};
    params.clear();
    refuse(route.methods, refused);
  }
  return refused;
}

std::size_t Router::literal_prefix(const std::vector<Segment>& segments) {
  std::size_t n = 0;
  while (n < segments.size() && segments[n].kind == Segment::literal) ++n;
  return n;
}

}  // namespace corio::http
