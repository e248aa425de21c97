// STRATA_ASSERT(condition): an invariant, checked in Debug and checked
// builds, compiled out of Release. One macro for the heap layers
// (include/strata/layers), the reap and libstrata alike.
//
// STRATA_ASSERTIONS (0 or 1) decides; CMake sets it (option STRATA_ASSERTIONS,
// on in Debug builds). A project that includes the header-only layers without
// CMake gets the NDEBUG rule of <cassert>: on unless NDEBUG is defined.
//
// A failed assertion writes "strata: assertion failed: <condition> at
// <file>:<line>" to stderr and aborts. It never allocates: it may fire inside
// malloc.
//
// STRATA_ASSERT_VALID(problem) checks a verify() function's answer (nullptr:
// all holds; else what does not) and prints the answer when it fails.
// STRATA_ASSERTS_ON is a constexpr bool for `if constexpr` around a check
// that costs more than a condition (a walk of a list), so that Release code
// never contains it.
#pragma once
#include <unistd.h>
#include <cstdlib>
#include <cstring>

// libstrata's checked build (STRATA_MALLOC_CHECKED) checks them always.
#if defined(STRATA_MALLOC_CHECKED) && defined(STRATA_ASSERTIONS)
#undef STRATA_ASSERTIONS
#define STRATA_ASSERTIONS 1
#endif
#ifndef STRATA_ASSERTIONS
#ifdef NDEBUG
#define STRATA_ASSERTIONS 0
#else
#define STRATA_ASSERTIONS 1
#endif
#endif

namespace strata::detail {

inline constexpr bool kAssertions = STRATA_ASSERTIONS != 0;

inline void assert_write(const char* text) noexcept {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t done = ::write(2, text, left);
    if (done <= 0) return;
    text += done;
    left -= static_cast<std::size_t>(done);
  }
}

[[noreturn, gnu::cold, gnu::noinline]] inline void assertion_failed(const char* condition, const char* detail,
                                                                    const char* file, int line) noexcept {
  char digits[12];
  int n = 0;
  unsigned value = line > 0 ? static_cast<unsigned>(line) : 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < 11);
  char number[12];
  for (int i = 0; i < n; ++i) number[i] = digits[n - 1 - i];
  number[n] = '\0';
  assert_write("strata: assertion failed: ");
  assert_write(condition);
  if (detail) {
    assert_write(" (");
    assert_write(detail);
    assert_write(")");
  }
  assert_write(" at ");
  assert_write(file);
  assert_write(":");
  assert_write(number);
  assert_write("\n");
  std::abort();
}

}  // namespace strata::detail

#define STRATA_ASSERTS_ON (::strata::detail::kAssertions)

#if STRATA_ASSERTIONS
#define STRATA_ASSERT(condition)                     \
  (__builtin_expect(static_cast<bool>(condition), 1) \
       ? static_cast<void>(0)                        \
       : ::strata::detail::assertion_failed(#condition, nullptr, __FILE__, __LINE__))
#define STRATA_ASSERT_VALID(problem)                                                     \
  do {                                                                                   \
    if (const char* strata_problem_ = (problem))                                         \
      ::strata::detail::assertion_failed(#problem, strata_problem_, __FILE__, __LINE__); \
  } while (0)
#else
// Never evaluated, still compiled: a condition that stops compiling is seen
// in Release too.
#define STRATA_ASSERT(condition) static_cast<void>(sizeof(static_cast<bool>(condition)))
#define STRATA_ASSERT_VALID(problem) static_cast<void>(0)
#endif
