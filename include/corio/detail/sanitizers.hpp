// Which sanitizer this translation unit is built under, for the few places
// that must know: g++ says so with __SANITIZE_*__, clang with __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define CORIO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORIO_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define CORIO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CORIO_TSAN 1
#endif
#endif

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define CORIO_MSAN 1
#endif
#endif

namespace corio::detail {

#if defined(CORIO_ASAN) || defined(CORIO_TSAN) || defined(CORIO_MSAN)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace corio::detail
