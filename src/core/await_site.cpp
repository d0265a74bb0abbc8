// intern_await_site (see detail/await_site.hpp): the await sites of code that
// clang 14 compiled, which has no __builtin_source_location to make a constant
// per site. Each distinct (file, function, line) gets one record, kept for the
// program's life (a program has finitely many co_awaits); a thread's small
// cache in front of the shared table makes a site seen before one lookup.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_set>

#include <corio/detail/await_site.hpp>

namespace corio::detail {

namespace {

// Records compare by the builtins' pointers: the same literal is the same
// text, and a duplicate of a text in another object file only costs a record.
struct SameSite {
  bool operator()(const AwaitSiteRecord& a, const AwaitSiteRecord& b) const noexcept {
    return a.file == b.file && a.function == b.function && a.line == b.line;
  }
};
struct SiteHash {
  std::size_t operator()(const AwaitSiteRecord& r) const noexcept {
    const auto function = reinterpret_cast<std::uintptr_t>(r.function);
    const auto file = reinterpret_cast<std::uintptr_t>(r.file);
    return std::hash<std::uintptr_t>{}((function >> 3) ^ (file << 7) ^ (r.line * 0x9E3779B1u));
  }
};
using SiteTable = std::unordered_set<AwaitSiteRecord, SiteHash, SameSite>;  // nodes never move

const AwaitSiteRecord* shared_record(const AwaitSiteRecord& site) {
  static std::mutex mutex;
  static SiteTable* table = new SiteTable;  // never destroyed: threads may await during exit
  const std::lock_guard lock(mutex);
  return &*table->insert(site).first;
}

constexpr std::size_t kCacheSize = 256;
using SiteCache = std::array<const AwaitSiteRecord*, kCacheSize>;
// Allocated by the first clang-14 site a thread records: g++ code never pays for it.
thread_local std::unique_ptr<SiteCache> tls_cache;

}  // namespace

AwaitSite intern_await_site(const SourceLocation& where) noexcept {
  const AwaitSiteRecord site{where.file_name(), where.function_name(), where.line(), 0};
  try {
    if (!tls_cache) tls_cache = std::make_unique<SiteCache>();
    const AwaitSiteRecord*& slot = (*tls_cache)[SiteHash{}(site) % kCacheSize];
    if (!slot || !SameSite{}(*slot, site)) slot = shared_record(site);
    return AwaitSite(slot);
  } catch (...) {  // no memory for a record, or no lock: this co_await goes unrecorded
    return AwaitSite();
  }
}

}  // namespace corio::detail
