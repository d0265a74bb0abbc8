// Router precedence, as aiohttp's UrlDispatcher resolves it: the exact path,
// then patterns by leading literal segments, then the order of adding; a
// route without the method passes to the next; 405 only when no route
// matching the path takes the method, with every such route's methods in Allow.
#include <string>

#include <gtest/gtest.h>

#include <corio/http/router.hpp>

namespace {

using corio::http::MatchInfo;
using corio::http::Router;

// A handler that says which route it is; resolve() is checked without running it.
struct Named {
  std::string name;
  corio::Coro<corio::http::Response> operator()(corio::http::Request&) const { return {}; }
};

struct Route {
  const char* method;
  const char* pattern;
  const char* name;
};

// The routes, added in this order.
Router routes(std::initializer_list<Route> list) {
  Router r;
  for (const Route& route : list) r.add(route.method, route.pattern, Named{route.name});
  return r;
}

// "name" of the handler found, or the status and Allow: "405 GET, HEAD".
std::string resolve(const Router& router, std::string_view method, std::string_view path,
                    MatchInfo* params_out = nullptr) {
  MatchInfo params;
  const Router::Match m = router.resolve(method, path, params);
  if (params_out) *params_out = params;
  if (m.handler) return m.handler->target<Named>()->name;
  return std::to_string(m.status) + (m.allow.empty() ? "" : " " + m.allow);
}

TEST(RouterPrecedence, ALiteralWithoutTheMethodPassesToAParameter) {
  const Router r = routes({{"POST", "/a/b", "post literal"}, {"GET", "/a/{x}", "get param"}});
  MatchInfo params;
  EXPECT_EQ(resolve(r, "GET", "/a/b", &params), "get param") << "aiohttp routes it to {x}";
  EXPECT_EQ(params, (MatchInfo{{"x", "b"}}));
  EXPECT_EQ(resolve(r, "POST", "/a/b"), "post literal");
  EXPECT_EQ(resolve(r, "HEAD", "/a/b"), "get param") << "HEAD falls back to the GET route";
  EXPECT_EQ(resolve(r, "POST", "/a/c"), "405 GET, HEAD");
}

TEST(RouterPrecedence, ALiteralWithTheMethodWinsWhateverTheOrder) {
  const Router r = routes({{"GET", "/a/{x}", "param"}, {"GET", "/a/b", "literal"}});
  EXPECT_EQ(resolve(r, "GET", "/a/b"), "literal");
  EXPECT_EQ(resolve(r, "GET", "/a/c"), "param");
}

TEST(RouterPrecedence, MoreLeadingLiteralsFirstThenTheOrderOfAdding) {
  const Router r = routes({{"GET", "/{x}/b", "param first"},
                           {"GET", "/a/{y}", "literal first"},
                           {"GET", "/a/{z}", "literal first, added later"}});
  EXPECT_EQ(resolve(r, "GET", "/a/b"), "literal first");
  EXPECT_EQ(resolve(r, "GET", "/c/b"), "param first");
}

TEST(RouterPrecedence, ARefusedRouteLeavesNoParameters) {
  const Router r = routes({{"POST", "/{x}/{y}", "post"}, {"GET", "/{z}/b", "get"}});
  MatchInfo params;
  EXPECT_EQ(resolve(r, "GET", "/a/b", &params), "get");
  EXPECT_EQ(params, (MatchInfo{{"z", "a"}}));
}

TEST(RouterPrecedence, MethodNotAllowedListsEveryMatchingRoutesMethods) {
  const Router r = routes({{"POST", "/a/b", "post"},
                           {"PUT", "/a/{x}", "put"},
                           {"GET", "/a/{x}", "get"},
                           {"POST", "/{x}/{y}", "post any"}});
  EXPECT_EQ(resolve(r, "DELETE", "/a/b"), "405 POST, PUT, GET, HEAD") << "each method once";
  EXPECT_EQ(resolve(r, "DELETE", "/c/d"), "405 POST");
  EXPECT_EQ(resolve(r, "OPTIONS", "/c/d"), "405 POST") << "OPTIONS is a method like any other";
  EXPECT_EQ(resolve(r, "GET", "/a/b/c"), "404") << "no route matches the path";
}

TEST(RouterPrecedence, AnExplicitHeadRouteIsListedOnce) {
  const Router r = routes({{"GET", "/a", "get"}, {"HEAD", "/a", "head"}});
  EXPECT_EQ(resolve(r, "HEAD", "/a"), "head");
  EXPECT_EQ(resolve(r, "POST", "/a"), "405 GET, HEAD");
}

}  // namespace
