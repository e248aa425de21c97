// Reading the STRATA_* environment without allocating.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::lab {

// Parses a decimal unsigned integer; false if the text is not exactly one.
bool parse_u64(const char* text, std::uint64_t* out) noexcept;
// Parses a non-negative decimal number (digits, optional fraction); false otherwise.
bool parse_fraction(const char* text, double* out) noexcept;

// Copies `pattern` into out, replacing each "%p" by the process id. False if
// it does not fit.
bool expand_path(const char* pattern, char* out, std::size_t capacity) noexcept;

// Writes "strata-lab: <who>: <a><b>\n" to stderr.
void complain(const char* who, const char* a, const char* b = "") noexcept;

// Ends the process at once with `status`, bypassing exit handlers and the
// shims' own _exit (which would try to write results of a process that
// failed to start being measured).
[[noreturn]] void exit_now(int status) noexcept;

}  // namespace strata::lab
