// getaddrinfo: numeric hosts without the thread pool, names through it, the
// wildcard for servers, and the EAI_* error category.
#include <netdb.h>

#include <atomic>
#include <memory>

#include <corio/dns.hpp>

#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

using corio::AddrInfo;

// The default executor, counting what is submitted to it.
class CountingExecutor final : public corio::Executor {
 public:
  explicit CountingExecutor(std::atomic<int>* count) : count_(count) {}
  void submit(std::unique_ptr<corio::ExecutorJob> job) override {
    ++*count_;
    pool_.submit(std::move(job));
  }
  void shutdown(bool wait) override { pool_.shutdown(wait); }

 private:
  std::atomic<int>* count_;
  corio::ThreadPoolExecutor pool_{1};
};

void count_submissions(std::atomic<int>* count) {
  corio::get_running_loop().set_default_executor(std::make_unique<CountingExecutor>(count));
}

bool has_address(const std::vector<AddrInfo>& infos, const std::string& host) {
  for (const AddrInfo& ai : infos) {
    if (ai.address.host() == host) return true;
  }
  return false;
}

Coro<void> numeric_hosts_skip_the_pool(std::atomic<int>* submitted) {
  count_submissions(submitted);
  std::vector<AddrInfo> v4 = co_await corio::getaddrinfo("127.0.0.1", 80);
  CO_ASSERT(v4.size() == 1);
  EXPECT_EQ(v4[0].family, AF_INET);
  EXPECT_EQ(v4[0].type, SOCK_STREAM);
  EXPECT_EQ(v4[0].protocol, IPPROTO_TCP);
  EXPECT_EQ(v4[0].address.to_string(), "127.0.0.1:80");
  std::vector<AddrInfo> v6 = co_await corio::getaddrinfo("::1", 443, AF_INET6, SOCK_DGRAM);
  CO_ASSERT(v6.size() == 1);
  EXPECT_EQ(v6[0].protocol, IPPROTO_UDP);
  EXPECT_EQ(v6[0].address.to_string(), "[::1]:443");
  EXPECT_EQ(submitted->load(), 0);
}

TEST(Dns, NumericHostsSkipTheThreadPool) {
  std::atomic<int> submitted{0};
  run_bounded(numeric_hosts_skip_the_pool(&submitted));
}

Coro<void> names_go_through_the_pool(std::atomic<int>* submitted) {
  count_submissions(submitted);
  std::vector<AddrInfo> infos = co_await corio::getaddrinfo("localhost", 8080);
  EXPECT_EQ(submitted->load(), 1);
  EXPECT_FALSE(infos.empty());
  EXPECT_TRUE(has_address(infos, "127.0.0.1") || has_address(infos, "::1"));
  for (const AddrInfo& ai : infos) {
    EXPECT_EQ(ai.address.port(), 8080);
    EXPECT_EQ(ai.type, SOCK_STREAM);
  }
}

TEST(Dns, LocalhostResolvesThroughThePool) {
  std::atomic<int> submitted{0};
  run_bounded(names_go_through_the_pool(&submitted));
}

Coro<void> wildcard_for_servers() {
  std::vector<AddrInfo> infos = co_await corio::getaddrinfo("", 0, AF_INET, SOCK_STREAM, AI_PASSIVE);
  CO_ASSERT(infos.size() == 1);
  EXPECT_EQ(infos[0].address.host(), "0.0.0.0");
}

TEST(Dns, EmptyHostWithPassiveIsTheWildcard) { run_bounded(wildcard_for_servers()); }

// A name with AI_NUMERICHOST fails in the resolver without any network.
Coro<void> resolver_error() {
  try {
    co_await corio::getaddrinfo("localhost", 80, AF_UNSPEC, SOCK_STREAM, AI_NUMERICHOST);
    ADD_FAILURE() << "expected an error";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().category(), corio::gai_category());
    EXPECT_EQ(e.code().value(), EAI_NONAME);
    EXPECT_NE(std::string(e.what()).find("localhost"), std::string::npos) << e.what();
  }
}

TEST(Dns, ResolverErrorsCarryTheGaiCode) { run_bounded(resolver_error()); }

TEST(Dns, GaiCategoryMessagesAreGaiStrerror) {
  EXPECT_STREQ(corio::gai_category().name(), "getaddrinfo");
  EXPECT_EQ(std::error_code(EAI_NONAME, corio::gai_category()).message(),
            ::gai_strerror(EAI_NONAME));
}

}  // namespace
}  // namespace corio_net_test
