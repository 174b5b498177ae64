// Invariant checks: on in Debug and sanitizer builds (FABSIM_CHECKS), compiled out in Release.
// STYLE.md rule 22.
#pragma once

#include <cstdio>   // fprintf
#include <cstdlib>  // abort

namespace fabsim::detail {
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "fabsim: invariant failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}
}  // namespace fabsim::detail

#if defined(FABSIM_CHECKS)
#define FABSIM_ASSERT(expr)                                                                        \
  ((expr) ? static_cast<void>(0) : ::fabsim::detail::assert_fail(#expr, __FILE__, __LINE__))
#else
#define FABSIM_ASSERT(expr) static_cast<void>(0)
#endif

/// A check that stays on in every build: for set-up code (registries, configuration), never on
/// a per-packet path.
#define FABSIM_CHECK(expr)                                                                         \
  ((expr) ? static_cast<void>(0) : ::fabsim::detail::assert_fail(#expr, __FILE__, __LINE__))
