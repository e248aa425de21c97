// Reading libstrata's options from the environment (options.hpp), and the
// configuration report STRATA_VERBOSE asks for.
#include "options.hpp"

#include <atomic>
#include <cstddef>
#include <cstring>

#include <unistd.h>

#include "checked.hpp"
#include "config.hpp"
#include "report.hpp"
#include "size_classes.hpp"

extern char** environ;

namespace strata::malloc_detail {

namespace cfg = strata::malloc_config;

std::atomic<std::uint32_t> g_purge_delay_ms{cfg::kPurgeDelayMs};

namespace {

struct Setting {
  const char* name;
  bool* flag;
  std::atomic<bool>* atomic_flag;
};

// The other parts of strata name their variables with these prefixes (the lab,
// the reaps, the benchmarks, the test suite); libstrata leaves them alone.
constexpr const char* kForeignPrefixes[] = {"STRATA_LAB_", "STRATA_REAP_", "STRATA_BENCH_", "STRATA_TEST_"};

bool starts_with(const char* s, const char* prefix) noexcept {
  while (*prefix)
    if (*s++ != *prefix++) return false;
  return true;
}

// Compare an environment entry "NAME=value" with a name; on a match, point at the value.
bool entry_is(const char* entry, const char* name, const char** value) noexcept {
  std::size_t n = std::strlen(name);
  if (std::strncmp(entry, name, n) != 0 || entry[n] != '=') return false;
  *value = entry + n + 1;
  return true;
}

// Applies one "STRATA_..." entry if it names a setting; false if none matches.
bool apply_setting(const char* entry, Setting* settings, std::size_t count) noexcept {
  bool known = false;
  const char* value = nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    Setting& s = settings[i];
    if (!entry_is(entry, s.name, &value)) continue;
    known = true;
    bool on = std::strcmp(value, "1") == 0;
    if (!on && std::strcmp(value, "0") != 0 && *value != '\0') {
      Report().str("strata: ").str(entry).str(": expected 0 or 1; ").str(s.name).str(" stays off\n");
      break;
    }
    if (s.flag) *s.flag = on;
    if (s.atomic_flag) s.atomic_flag->store(on, std::memory_order_relaxed);
  }
  return known;
}

// "NAME=digits" within [0, max], or false.
bool parse_ms(const char* value, std::uint32_t max, std::uint32_t* out) noexcept {
  if (*value == '\0') return false;
  std::uint64_t n = 0;
  for (const char* c = value; *c; ++c) {
    if (*c < '0' || *c > '9') return false;
    n = n * 10 + static_cast<std::uint64_t>(*c - '0');
    if (n > max) return false;
  }
  *out = static_cast<std::uint32_t>(n);
  return true;
}

// STRATA_PURGE_DELAY_MS: a bad value stops the program before it runs (a
// delay silently left at its default would change its memory unnoticed).
bool apply_purge_delay(const char* entry) noexcept {
  const char* value = nullptr;
  if (!entry_is(entry, "STRATA_PURGE_DELAY_MS", &value)) return false;
  std::uint32_t ms = 0;
  if (!parse_ms(value, cfg::kPurgeDelayMaxMs, &ms)) {
    Report()
        .str("strata: ")
        .str(entry)
        .str(": STRATA_PURGE_DELAY_MS expects milliseconds, 0 to ")
        .num(cfg::kPurgeDelayMaxMs)
        .str("\n");
    ::_exit(2);
  }
  g_purge_delay_ms.store(ms, std::memory_order_relaxed);
  return true;
}

void warn_unknown(const char* entry) noexcept {
  Report r;
  r.str("strata: unknown environment variable ");
  for (const char* c = entry; *c && *c != '='; ++c) r.put(*c);
  r.str(" (libstrata reads STRATA_SHOW_STATS, STRATA_VERBOSE, STRATA_CHECK, STRATA_PURGE_DELAY_MS)\n");
}

}  // namespace

Options read_options() noexcept {
  Options options;
  Setting settings[] = {{"STRATA_SHOW_STATS", &options.show_stats, nullptr},
                        {"STRATA_VERBOSE", &options.verbose, nullptr},
                        {"STRATA_CHECK", nullptr, &g_checked}};
  for (char** env = environ; env && *env; ++env) {
    const char* entry = *env;
    if (!starts_with(entry, "STRATA_")) continue;
    bool known = apply_setting(entry, settings, sizeof settings / sizeof settings[0]) || apply_purge_delay(entry);
    for (const char* prefix : kForeignPrefixes) known = known || starts_with(entry, prefix);
    if (!known) warn_unknown(entry);
  }
  return options;
}

void print_config(const Options& options) noexcept {
  Report r;
  r.str("strata: libstrata configuration\n");
  r.str("  segment ").bytes(cfg::kSegmentSize).str(", page block ").bytes(cfg::kPageSize).str("\n");
  r.str("  small classes: ")
      .num(kClassCount)
      .str(" (16 B apart up to ")
      .num(cfg::kExactMax)
      .str(" B, then ")
      .num(cfg::kClassesPerDoubling)
      .str(" per doubling up to ")
      .num(cfg::kSmallMax)
      .str(" B; a snug class just above");
  for (std::size_t base = cfg::kExactMax; base < cfg::kSmallMax; base *= 2)
    if (has_snug_class(base)) r.str(" ").num(base);
  r.str(" B)\n");
  r.str("  large objects up to ").bytes(cfg::kLargeMax).str(" in ").num(cfg::kLargeArenas).str(" arenas; huge beyond\n");
  r.str("  retained empty blocks per thread ").num(cfg::kRetainedEmptyPages).str(" to ").num(cfg::kRetainedEmptyMax)
      .str(" (by demand), in abandoned heaps ").num(cfg::kAbandonedRetainedMax).str(", large dirty limit ")
      .bytes(cfg::kLargeDirtyLimit).str(", huge cache ").bytes(cfg::kHugeCacheBytes).str("\n");
  r.str("  purge delay ")
      .num(purge_delay_ms())
      .str(" ms (empty blocks beyond the limit wait for it, up to ")
      .num(cfg::kDelayedEmptyMax)
      .str(" a thread)\n");
  r.str("  checked mode ").str(checked_mode() ? "on" : "off").str(cfg::kAlwaysChecked ? " (built in)" : "")
      .str(", statistics at exit ").str(options.show_stats ? "on" : "off").str("\n");
}

}  // namespace strata::malloc_detail
