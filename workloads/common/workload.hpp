// workload.hpp — what every workload program shares: its command line, a
// deterministic random source, the checksum of its result, and main().
//
//   int main(int argc, char** argv) {
//     return strata::workload::main(argc, argv, "cfrac", {Mode::naive},
//                                   [](const Options& o) { return factor(o); });  // -> checksum
//   }
// or, when the modes are one template over three allocation policies,
//   return strata::workload::main_with_policies<PerClassPolicy, MallocPolicy, ReapPolicy>(
//       argc, argv, "boxed-sim", []<class Policy>(const Options& o) { return simulate<Policy>(o); });
//
// Command line: strata-wl-<name> --mode custom|naive|reap --scale N [--seed S]
// Bad input is reported on stderr with exit status 2 before any work is done.
// The last line of output is "checksum <16 hex digits>", the same in every
// mode and under every allocator for the same scale and seed.
#pragma once
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <strata/random.hpp>

namespace strata::workload {

enum class Mode { custom, naive, reap };

inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::custom: return "custom";
    case Mode::naive: return "naive";
    case Mode::reap: return "reap";
  }
  return "?";
}

struct Options {
  Mode mode = Mode::custom;
  std::uint64_t scale = 1;
  std::uint64_t seed = 1;  // the default seed: the stored checksums are for it
};

// The deterministic random source: strata's one generator (the stored
// checksums are for its sequence).
using Rng = strata::Random;

// Order-sensitive 64-bit digest of the program's result (FNV-1a over words).
class Checksum {
 public:
  void add(std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (word >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ULL;
    }
  }
  void add(std::string_view bytes) {
    add(bytes.size());
    for (unsigned char c : bytes) {
      h_ ^= c;
      h_ *= 0x100000001b3ULL;
    }
  }
  // Doubles by their bits: the same operations in the same order give the
  // same bits under every allocator (keep the arithmetic order independent
  // of addresses and of the mode).
  void add_double(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    add(bits);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

namespace detail {

[[noreturn]] inline void usage_error(const char* name, const std::string& message) {
  std::fprintf(stderr, "strata-wl-%s: %s\nusage: strata-wl-%s --mode MODE --scale N [--seed S]\n", name,
               message.c_str(), name);
  std::exit(2);
}

inline std::uint64_t parse_count(const char* name, const char* flag, const char* text, bool positive) {
  if (text == nullptr) usage_error(name, std::string(flag) + " needs a value");
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*text == '\0' || *text == '-' || *text == '+' || *end != '\0' || errno != 0 || (positive && v == 0)) {
    usage_error(name, std::string(flag) + " '" + text + "': must be a " +
                          (positive ? "positive" : "non-negative") + " integer");
  }
  return v;
}

}  // namespace detail

// Parses the command line; exits with status 2 and a message on bad input.
inline Options parse(int argc, char** argv, const char* name, std::initializer_list<Mode> modes) {
  Options options;
  bool have_mode = false, have_scale = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--mode") {
      if (value == nullptr) detail::usage_error(name, "--mode needs a value");
      std::string known;
      bool found = false;
      for (Mode m : modes) {
        known += (known.empty() ? "" : ", ") + std::string(mode_name(m));
        if (std::strcmp(value, mode_name(m)) == 0) {
          options.mode = m;
          found = true;
        }
      }
      if (!found) detail::usage_error(name, std::string("unknown mode '") + value + "'; this workload has: " + known);
      have_mode = true;
      ++i;
    } else if (arg == "--scale") {
      options.scale = detail::parse_count(name, "--scale", value, true);
      have_scale = true;
      ++i;
    } else if (arg == "--seed") {
      options.seed = detail::parse_count(name, "--seed", value, false);
      ++i;
    } else {
      detail::usage_error(name, "unknown argument '" + std::string(arg) + "'");
    }
  }
  if (!have_mode) detail::usage_error(name, "--mode is required");
  if (!have_scale) detail::usage_error(name, "--scale is required");
  return options;
}

// Parses, runs run(options) -> checksum, prints "checksum <hex>" last.
// An exception (std::bad_alloc included) is reported with exit status 1.
template <class Run>
int main(int argc, char** argv, const char* name, std::initializer_list<Mode> modes, Run run) {
  const Options options = parse(argc, argv, name, modes);
  try {
    const std::uint64_t checksum = run(options);
    std::printf("checksum %016" PRIx64 "\n", checksum);
    return std::fflush(stdout) == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "strata-wl-%s: %s\n", name, error.what());
    return 1;
  }
}

// main() for a workload whose three modes differ only in the allocation
// policy its code is instantiated with: run is a template lambda,
//   []<class Policy>(const Options& o) { return simulate<Policy>(o); },
// called with Custom, Naive or Reap as the mode says.
template <class Custom, class Naive, class Reap, class Run>
int main_with_policies(int argc, char** argv, const char* name, Run run) {
  return main(argc, argv, name, {Mode::custom, Mode::naive, Mode::reap}, [&](const Options& o) -> std::uint64_t {
    switch (o.mode) {
      case Mode::custom: return run.template operator()<Custom>(o);
      case Mode::naive: return run.template operator()<Naive>(o);
      case Mode::reap: return run.template operator()<Reap>(o);
    }
    return 0;
  });
}

}  // namespace strata::workload
