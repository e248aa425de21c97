// The two reap benchmark workloads, generic over a "contender": any region-like
// allocator wrapped in a small adapter.  Each contender is its own executable
// (contender_*.cpp), so that e.g. libmimalloc, which replaces malloc when
// linked, cannot change what "glibc malloc" means in another contender.
//
// A contender adapter provides:
//   static constexpr const char* kName;
//   static constexpr bool kCanFree;          // individual free supported
//   static constexpr std::size_t kAlignment; // alignment every result has
//   void* alloc(std::size_t size);           // nullptr on failure
//   void free(void* p, std::size_t size);    // only called when kCanFree
//   void clear();                            // frees every object at once
//   std::optional<std::size_t> held();       // bytes held from the system, if known
//
// Workloads (see docs/benchmarks-reap.md):
//   region: per round, allocate N objects of 8..64 bytes, touch each, clear.
//   drag:   phases of allocation where objects die at different times and a
//           few survive into later phases; reports peak live bytes (the ideal),
//           peak bytes held (contender's own figure) and peak RSS added.
#pragma once

#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <strata/random.hpp>

namespace strata::bench_reap {

// ---------------------------------------------------------------- utilities

// strata's one generator: deterministic, seeded; the same stream for every contender.
using Rng = strata::Random;

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "bench-reap: %s\n", what);
  std::exit(1);
}

inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline double wall_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// A "VmXXX:   1234 kB" line of /proc/self/status, in bytes (0 if absent).
inline std::size_t proc_status_bytes(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::size_t kib = 0;
  const std::size_t key_len = std::strlen(key);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
      kib = std::strtoull(line + key_len + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kib * 1024;
}

// Command line: `<binary> region|drag [--name value]... [--flag]...`
class Args {
 public:
  Args(int argc, char** argv) : argv_(argv + 2, argv + argc) {}
  std::uint64_t number(std::string_view name, std::uint64_t fallback) const {
    for (std::size_t i = 0; i + 1 < argv_.size(); ++i) {
      if (argv_[i] == name) {
        char* end = nullptr;
        const std::uint64_t v = std::strtoull(argv_[i + 1], &end, 10);
        if (end == argv_[i + 1] || *end != '\0') {
          std::fprintf(stderr, "bench-reap: %s wants a number, got '%s'\n", argv_[i], argv_[i + 1]);
          std::exit(2);
        }
        return v;
      }
    }
    return fallback;
  }
  bool flag(std::string_view name) const {
    for (const char* a : argv_) {
      if (a == name) return true;
    }
    return false;
  }

 private:
  std::vector<const char*> argv_;
};

// ---------------------------------------------------------------- region workload

struct RegionOptions {
  std::size_t objects = 1'000'000;  // per round
  std::size_t rounds = 10;
  std::uint64_t seed = 42;
  bool verify = false;  // walk every object before each clear and check it
};

// Sizes 8..64 from a 1 KiB table (stays in L1, costs one load per object).
inline std::vector<std::uint8_t> region_size_table(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::uint8_t> table(1024);
  for (auto& s : table) s = static_cast<std::uint8_t>(rng.between(8, 64));
  return table;
}

inline std::uint8_t object_tag(std::size_t i, std::size_t size) {
  return static_cast<std::uint8_t>(i * 31 + size);
}

// Each object's first word links to the previous object (so the verifier can
// walk them); its last byte gets a tag.  Together they touch every cache line
// an object of <= 64 bytes spans, as a program initialising it would.
template <class C>
bool verify_round(const std::vector<std::uint8_t>& sizes, void* last, std::size_t objects,
                  std::size_t round) {
  void* p = last;
  for (std::size_t i = objects; i-- > 0;) {
    if (p == nullptr) return false;
    if (reinterpret_cast<std::uintptr_t>(p) % C::kAlignment != 0) return false;
    const std::size_t size = sizes[(i + round) & 1023];
    if (size > sizeof(void*) && static_cast<std::uint8_t*>(p)[size - 1] != object_tag(i, size)) {
      return false;
    }
    std::memcpy(&p, p, sizeof p);
  }
  return p == nullptr;
}

template <class C>
int run_region(C& contender, const RegionOptions& opt) {
  const std::vector<std::uint8_t> sizes = region_size_table(opt.seed);
  std::uint64_t bytes = 0;
  const double cpu0 = cpu_seconds();
  const double wall0 = wall_seconds();
  for (std::size_t round = 0; round < opt.rounds; ++round) {
    void* prev = nullptr;
    for (std::size_t i = 0; i < opt.objects; ++i) {
      const std::size_t size = sizes[(i + round) & 1023];
      void* p = contender.alloc(size);
      if (p == nullptr) fail("allocation failed in the region workload");
      std::memcpy(p, &prev, sizeof prev);
      if (size > sizeof(void*)) static_cast<std::uint8_t*>(p)[size - 1] = object_tag(i, size);
      prev = p;
      bytes += size;
    }
    if (opt.verify && !verify_round<C>(sizes, prev, opt.objects, round)) {
      std::fprintf(stderr, "bench-reap: %s: round %zu: object list corrupt or misaligned\n", C::kName,
                   round);
      return 1;
    }
    contender.clear();
  }
  const double cpu = cpu_seconds() - cpu0;
  const double wall = wall_seconds() - wall0;
  const std::size_t allocations = opt.objects * opt.rounds;
  std::printf(
      "{\"workload\":\"region\",\"contender\":\"%s\",\"objects\":%zu,\"rounds\":%zu,"
      "\"allocations\":%zu,\"bytes\":%" PRIu64 ",\"cpu_s\":%.6f,\"wall_s\":%.6f,"
      "\"ns_per_alloc\":%.3f,\"peak_rss\":%zu,\"verified\":%s}\n",
      C::kName, opt.objects, opt.rounds, allocations, bytes, cpu, wall,
      allocations ? cpu * 1e9 / static_cast<double>(allocations) : 0.0, proc_status_bytes("VmHWM"),
      opt.verify ? "true" : "false");
  return 0;
}

// ---------------------------------------------------------------- drag workload

struct DragOptions {
  std::size_t phases = 40;
  std::size_t objects = 50'000;      // allocated per phase
  std::size_t survive_permille = 20; // of the objects still live at a phase's end
  std::uint64_t seed = 7;
  bool free = true;                  // false: the same program on a region that cannot free
};

struct DragObject {
  void* ptr;
  std::uint32_t size;
  std::uint32_t death_phase;  // survivors only
  std::uint64_t tag;
};

struct DragResult {
  std::uint64_t allocated_bytes = 0;
  std::uint64_t peak_live_bytes = 0;  // the ideal: free each object when it dies
  std::optional<std::size_t> peak_held;
  std::size_t peak_rss_added = 0;     // VmHWM at the end minus VmRSS before the run
  std::size_t corrupt = 0;            // objects whose contents changed while live
};

// Write a tag into the first word and into the last bytes (a word from 16
// bytes up, else the last byte), so reuse of a live object's memory is noticed
// when it is freed.
inline void drag_fill(const DragObject& o) {
  char* p = static_cast<char*>(o.ptr);
  std::memcpy(p, &o.tag, sizeof o.tag);
  if (o.size >= 2 * sizeof o.tag) {
    std::memcpy(p + o.size - sizeof o.tag, &o.tag, sizeof o.tag);
  } else if (o.size > sizeof o.tag) {
    p[o.size - 1] = static_cast<char>(o.tag >> 56);
  }
}
inline bool drag_intact(const DragObject& o) {
  const char* p = static_cast<const char*>(o.ptr);
  std::uint64_t head = 0;
  std::memcpy(&head, p, sizeof head);
  if (head != o.tag) return false;
  if (o.size >= 2 * sizeof o.tag) {
    std::uint64_t tail = 0;
    std::memcpy(&tail, p + o.size - sizeof tail, sizeof tail);
    return tail == o.tag;
  }
  return o.size == sizeof o.tag || p[o.size - 1] == static_cast<char>(o.tag >> 56);
}

// Mostly 8..64 bytes, one object in 16 up to 1 KiB.
inline std::uint32_t drag_size(Rng& rng) {
  return static_cast<std::uint32_t>(rng.below(16) == 0 ? rng.between(65, 1024) : rng.between(8, 64));
}

// Held bytes grow only when the contender takes a chunk, so sampling every
// few allocations and at each phase's end sees the peak without making the
// statistics call (which may cost more than an allocation) the workload.
inline constexpr std::size_t kHeldSampleEvery = 4096;

template <class C>
DragResult run_drag(C& contender, const DragOptions& opt) {
  DragResult r;
  Rng rng(opt.seed);
  std::uint64_t live = 0;

  // Bookkeeping is allocated and touched before the baseline RSS is taken.
  std::vector<DragObject> phase_live(opt.objects);
  phase_live.clear();
  std::vector<DragObject> survivors(opt.phases * opt.objects * opt.survive_permille / 1000 * 2 + 1024);
  survivors.clear();
  const std::size_t rss_before = proc_status_bytes("VmRSS");

  auto note_held = [&] {
    if (auto h = contender.held()) r.peak_held = std::max(r.peak_held.value_or(0), *h);
  };
  auto release = [&](const DragObject& o) {
    if (!drag_intact(o)) ++r.corrupt;
    live -= o.size;
    if constexpr (C::kCanFree) {
      if (opt.free) contender.free(o.ptr, o.size);
    }
  };

  for (std::uint32_t phase = 0; phase < opt.phases; ++phase) {
    // Survivors of earlier phases whose time has come.
    std::size_t kept = 0;
    for (const DragObject& o : survivors) {
      if (o.death_phase == phase) {
        release(o);
      } else {
        survivors[kept++] = o;
      }
    }
    survivors.resize(kept);

    // Allocate; after each allocation a random live object of this phase dies
    // with probability 1/2, so lifetimes vary from one step to the whole phase.
    for (std::size_t i = 0; i < opt.objects; ++i) {
      DragObject o{nullptr, drag_size(rng), 0, rng.next()};
      o.ptr = contender.alloc(o.size);
      if (o.ptr == nullptr) fail("allocation failed in the drag workload");
      if (reinterpret_cast<std::uintptr_t>(o.ptr) % C::kAlignment != 0) fail("misaligned object");
      drag_fill(o);
      phase_live.push_back(o);
      live += o.size;
      r.allocated_bytes += o.size;
      r.peak_live_bytes = std::max(r.peak_live_bytes, live);
      if (i % kHeldSampleEvery == 0) note_held();
      if (rng.below(2) == 0) {
        const std::size_t victim = rng.next() % phase_live.size();
        release(phase_live[victim]);
        phase_live[victim] = phase_live.back();
        phase_live.pop_back();
      }
    }

    note_held();
    // Phase end: most remaining objects die, a few survive 1..all phases more.
    for (DragObject& o : phase_live) {
      if (rng.next() % 1000 < opt.survive_permille) {
        o.death_phase = static_cast<std::uint32_t>(rng.between(phase + 1, opt.phases));
        survivors.push_back(o);
      } else {
        release(o);
      }
    }
    phase_live.clear();
  }
  for (const DragObject& o : survivors) {
    if (!drag_intact(o)) ++r.corrupt;
  }
  note_held();
  const std::size_t hwm = proc_status_bytes("VmHWM");
  r.peak_rss_added = hwm > rss_before ? hwm - rss_before : 0;
  contender.clear();
  return r;
}

inline void print_drag(const char* name, const DragOptions& opt, const DragResult& r) {
  char held[32] = "null";
  if (r.peak_held) std::snprintf(held, sizeof held, "%zu", *r.peak_held);
  std::printf(
      "{\"workload\":\"drag\",\"contender\":\"%s\",\"free\":%s,\"phases\":%zu,\"objects\":%zu,"
      "\"allocated_bytes\":%" PRIu64 ",\"peak_live_bytes\":%" PRIu64
      ",\"peak_held_bytes\":%s,\"peak_rss_added\":%zu,\"corrupt\":%zu}\n",
      name, opt.free ? "true" : "false", opt.phases, opt.objects, r.allocated_bytes,
      r.peak_live_bytes, held, r.peak_rss_added, r.corrupt);
}

// Checks a drag result can make: no live object was overwritten, and the
// contender holds at least the live bytes (else its figure is wrong).
inline bool drag_consistent(const DragResult& r) {
  if (r.corrupt != 0) {
    std::fprintf(stderr, "bench-reap: drag: %zu live objects were overwritten\n", r.corrupt);
    return false;
  }
  if (r.peak_held && *r.peak_held < r.peak_live_bytes) {
    std::fprintf(stderr, "bench-reap: drag: peak held %zu < peak live %" PRIu64 "\n", *r.peak_held,
                 r.peak_live_bytes);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- main

inline void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s region [--objects N] [--rounds R] [--seed S] [--verify]\n"
               "       %s drag [--phases P] [--objects N] [--survive-permille K] [--seed S]\n"
               "               [--no-free] [--check]\n"
               "  --check (drag): run with and without frees in this process and require\n"
               "  peak live <= peak held with frees <= peak held without frees\n",
               argv0, argv0);
}

template <class C>
int drag_main(const Args& args) {
  DragOptions opt;
  opt.phases = args.number("--phases", opt.phases);
  opt.objects = args.number("--objects", opt.objects);
  opt.survive_permille = args.number("--survive-permille", opt.survive_permille);
  opt.seed = args.number("--seed", opt.seed);
  if (opt.phases == 0 || opt.objects == 0 || opt.survive_permille > 1000) {
    std::fprintf(stderr, "bench-reap: drag: --phases and --objects must be > 0, --survive-permille <= 1000\n");
    return 2;
  }
  opt.free = C::kCanFree && !args.flag("--no-free");
  if (!args.flag("--check")) {
    C contender;
    const DragResult r = run_drag(contender, opt);
    print_drag(C::kName, opt, r);
    return drag_consistent(r) ? 0 : 1;
  }
  // --check: both variants in one process; only the contender's own held
  // figure is compared (RSS is per process and monotone).
  DragOptions region = opt;
  region.free = false;
  DragResult with_free;
  DragResult without_free;
  {
    C contender;
    with_free = run_drag(contender, opt);
  }
  {
    C contender;
    without_free = run_drag(contender, region);
  }
  print_drag(C::kName, opt, with_free);
  print_drag(C::kName, region, without_free);
  if (!drag_consistent(with_free) || !drag_consistent(without_free)) return 1;
  if (with_free.peak_live_bytes != without_free.peak_live_bytes) {
    std::fprintf(stderr, "bench-reap: drag: the two runs differ in live bytes\n");
    return 1;
  }
  // Most objects die early, so a contender whose frees are reused must hold
  // less than the same program without frees.
  if (with_free.peak_held && without_free.peak_held && opt.free &&
      *with_free.peak_held >= *without_free.peak_held) {
    std::fprintf(stderr, "bench-reap: drag: freeing did not lower peak held memory (%zu >= %zu)\n",
                 *with_free.peak_held, *without_free.peak_held);
    return 1;
  }
  // A region that cannot free holds every byte ever allocated.
  if (without_free.peak_held && *without_free.peak_held < without_free.allocated_bytes) {
    std::fprintf(stderr, "bench-reap: drag: region held %zu < %" PRIu64 " allocated\n",
                 *without_free.peak_held, without_free.allocated_bytes);
    return 1;
  }
  return 0;
}

template <class C>
int region_main(const Args& args) {
  RegionOptions opt;
  opt.objects = args.number("--objects", opt.objects);
  opt.rounds = args.number("--rounds", opt.rounds);
  opt.seed = args.number("--seed", opt.seed);
  opt.verify = args.flag("--verify");
  C contender;
  return run_region(contender, opt);
}

template <class C>
int contender_main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  const Args args(argc, argv);
  if (mode == "region") return region_main<C>(args);
  if (mode == "drag") return drag_main<C>(args);
  usage(argv[0]);
  return 2;
}

}  // namespace strata::bench_reap
