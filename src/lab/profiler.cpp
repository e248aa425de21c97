// libstrata-profile.so: the allocation profiler. Counts what the program asks
// of the malloc family (the columns of Table 3 in the 2002 reaps paper plus the
// size histogram the 2026 paper's detection phase records) and writes a JSON
// profile when the process exits. docs/lab.md describes the format.
//
// Environment: STRATA_LAB_PROFILE_OUT (path, "%p" = pid; default
// strata-profile.%p.json), STRATA_LAB_PROFILE_CUTOFF (histogram cutoff, default
// 4096), STRATA_LAB_LIVE_OUT (publish live counters, see live_mirror.hpp),
// STRATA_LAB_MEMORY=1 (the fragmentation meter's memory mode: every requested
// byte is touched when handed out, so that live data is memory in use, and
// memory in use is measured closely at the moments it can peak).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "env.hpp"
#include "file_writer.hpp"
#include "heap_meter.hpp"
#include "lab_config.hpp"
#include "lab_memory.hpp"
#include "live_mirror.hpp"
#include "live_table.hpp"
#include "observer.hpp"
#include "once.hpp"
#include "process_exit.hpp"

namespace strata::lab {
namespace {

using Counter = std::atomic<std::uint64_t>;
using Level = std::atomic<std::int64_t>;  // signed: a level never goes negative, but must not wrap if it did

struct Totals {
  Counter objects{0};
  Counter bytes{0};
  Counter realloc_calls{0};
  Counter free_calls{0};
  Counter large_objects{0};
  Counter large_bytes{0};
  Counter unknown_frees{0};    // free of a pointer this profiler never saw allocated
  Counter untracked{0};        // objects the table could not hold (out of memory)
  Counter missed_frees{0};     // addresses handed out again without the free being seen
};

struct Live {
  Level bytes{0};
  Level objects{0};
  Level peak_bytes{0};
  Level peak_objects{0};
};

constinit Totals g_totals;
constinit Live g_live;
constinit LiveTable<std::uint64_t> g_sizes;  // live object -> requested size
Counter* g_histogram = nullptr;              // g_cutoff counters: requests of size 0 .. cutoff-1
std::uint64_t g_cutoff = config::kDefaultCutoff;
LiveMirrorPage* g_mirror = nullptr;

// Memory in use at new live peaks, while the fragmentation meter watches
// (the live mirror is published, or in memory mode).
constinit PeakHeapSampler g_heap_at_peaks;
bool g_memory_mode = false;
bool g_measuring = false;  // g_heap_at_peaks is in use

// Memory mode: makes the pages of [begin, end) in use — one write per page,
// of the byte already there, so the program sees the same contents (fresh
// memory, a realloc's new tail: nothing it may read yet).
void touch(void* object, std::size_t begin, std::size_t end) noexcept {
  auto* bytes = static_cast<volatile unsigned char*>(object);
  for (std::size_t i = begin; i < end;) {
    bytes[i] = bytes[i];
    const auto address = reinterpret_cast<std::uintptr_t>(object) + i;
    i += config::kPageBytes - address % config::kPageBytes;  // the next page's first byte
  }
}

// Bytes [begin, end) of p were just handed out: in memory mode they become
// memory in use, which may be a new maximum away from a live peak.
void handed_out(void* p, std::size_t begin, std::size_t end) noexcept {
  if (!g_memory_mode || end <= begin) return;
  touch(p, begin, end);
  g_heap_at_peaks.allocated(end - begin, g_mirror);
}

Once g_initialized;

void raise_peak(Level& peak, std::int64_t value) noexcept {
  std::int64_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

void change_live(std::int64_t bytes, std::int64_t objects) noexcept {
  const std::int64_t live_bytes = g_live.bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (bytes > 0) {
    raise_peak(g_live.peak_bytes, live_bytes);
    if (g_measuring) g_heap_at_peaks.rose(static_cast<std::uint64_t>(live_bytes), g_mirror);
  } else if (bytes < 0 && g_measuring) {
    g_heap_at_peaks.fell(static_cast<std::uint64_t>(g_live.peak_bytes.load(std::memory_order_relaxed)), g_mirror);
  }
  std::int64_t live_objects = g_live.objects.load(std::memory_order_relaxed);
  if (objects != 0) {
    live_objects = g_live.objects.fetch_add(objects, std::memory_order_relaxed) + objects;
    if (objects > 0) raise_peak(g_live.peak_objects, live_objects);
  }
  if (LiveMirrorPage* m = g_mirror) {
    m->live_bytes.store(static_cast<std::uint64_t>(live_bytes), std::memory_order_relaxed);
    m->live_objects.store(static_cast<std::uint64_t>(live_objects), std::memory_order_relaxed);
    m->peak_live_bytes.store(static_cast<std::uint64_t>(g_live.peak_bytes.load(std::memory_order_relaxed)),
                             std::memory_order_relaxed);
    m->peak_live_objects.store(static_cast<std::uint64_t>(g_live.peak_objects.load(std::memory_order_relaxed)),
                               std::memory_order_relaxed);
  }
}

void count_request(std::uint64_t size) noexcept {
  g_totals.objects.fetch_add(1, std::memory_order_relaxed);
  g_totals.bytes.fetch_add(size, std::memory_order_relaxed);
  if (size < g_cutoff && g_histogram != nullptr) {
    g_histogram[size].fetch_add(1, std::memory_order_relaxed);
  } else {
    g_totals.large_objects.fetch_add(1, std::memory_order_relaxed);
    g_totals.large_bytes.fetch_add(size, std::memory_order_relaxed);
  }
}

void track(void* p, std::uint64_t size) noexcept {
  std::uint64_t previous = 0;
  switch (g_sizes.insert(p, size, &previous)) {
    case LiveTable<std::uint64_t>::Insert::kAdded: break;
    case LiveTable<std::uint64_t>::Insert::kNoMemory:
      g_totals.untracked.fetch_add(1, std::memory_order_relaxed);
      break;
    case LiveTable<std::uint64_t>::Insert::kReplaced:  // the old object is gone: account its free now
      g_totals.missed_frees.fetch_add(1, std::memory_order_relaxed);
      change_live(-static_cast<std::int64_t>(previous), -1);
      break;
  }
}

// fork: the child keeps its inherited live objects (they are live in it too)
// but starts its own totals, histogram and peaks, and stops publishing to the
// parent's live file (it publishes to its own if the name has "%p").
void before_fork() noexcept { g_sizes.lock_all(); }
void after_fork_in_parent() noexcept { g_sizes.unlock_all(); }
void after_fork_in_child() noexcept {
  g_sizes.unlock_all();
  g_mirror = open_live_mirror(/*in_child=*/true);
  g_measuring = g_memory_mode || g_mirror != nullptr;
  g_heap_at_peaks.reset();
  for (Counter* c : {&g_totals.objects, &g_totals.bytes, &g_totals.realloc_calls, &g_totals.free_calls,
                     &g_totals.large_objects, &g_totals.large_bytes, &g_totals.unknown_frees, &g_totals.untracked,
                     &g_totals.missed_frees})
    c->store(0, std::memory_order_relaxed);
  for (std::uint64_t i = 0; i < g_cutoff && g_histogram != nullptr; ++i)
    g_histogram[i].store(0, std::memory_order_relaxed);
  g_live.peak_bytes.store(g_live.bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_live.peak_objects.store(g_live.objects.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void initialize() noexcept {
  if (const char* text = ::getenv("STRATA_LAB_PROFILE_CUTOFF")) {
    std::uint64_t cutoff = 0;
    if (!parse_u64(text, &cutoff) || cutoff == 0 || cutoff > config::kMaxCutoff) {
      complain("STRATA_LAB_PROFILE_CUTOFF", "expected an integer in 1..16777216, got ", text);
      exit_now(2);
    }
    g_cutoff = cutoff;
  }
  g_histogram = static_cast<Counter*>(map_lab_memory(g_cutoff * sizeof(Counter)));
  if (g_histogram == nullptr) complain("profile", "no memory for the size histogram; all sizes counted as large");
  if (const char* text = ::getenv("STRATA_LAB_MEMORY"); text != nullptr && *text != '\0') {
    if ((text[0] != '0' && text[0] != '1') || text[1] != '\0') {
      complain("STRATA_LAB_MEMORY", "expected 0 or 1, got ", text);
      exit_now(2);
    }
    g_memory_mode = text[0] == '1';
  }
  if (g_memory_mode) g_heap_at_peaks.measure_closely();
  g_mirror = open_live_mirror();
  g_measuring = g_memory_mode || g_mirror != nullptr;
  ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

void ensure_initialized() noexcept { g_initialized.run(initialize); }

std::uint64_t level(const Level& l) noexcept {
  const std::int64_t v = l.load(std::memory_order_relaxed);
  return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

std::uint64_t get(const Counter& c) noexcept { return c.load(std::memory_order_relaxed); }

std::atomic<pid_t> g_written_by{0};  // per pid: a vfork child shares this memory

void write_profile() noexcept {
  const pid_t self = ::getpid();
  if (g_written_by.exchange(self) == self) return;
  ensure_initialized();
  const char* pattern = ::getenv("STRATA_LAB_PROFILE_OUT");
  if (pattern == nullptr || *pattern == '\0') pattern = "strata-profile.%p.json";
  char path[4096];
  if (!expand_path(pattern, path, sizeof path)) {
    complain("STRATA_LAB_PROFILE_OUT", "path too long: ", pattern);
    return;
  }
  const std::uint64_t objects = get(g_totals.objects);
  const std::uint64_t bytes = get(g_totals.bytes);
  const std::uint64_t peak_bytes = level(g_live.peak_bytes);
  if (g_measuring) g_heap_at_peaks.fell(peak_bytes, g_mirror);  // a peak still held at exit
  FileWriter out(path);
  out.text("{\n  \"format\": \"strata-profile\",\n  \"version\": 1,\n  \"pid\": ")
      .number(static_cast<std::uint64_t>(::getpid()))
      .text(",\n  \"cutoff\": ").number(g_cutoff)
      .text(",\n  \"total_objects\": ").number(objects)
      .text(",\n  \"total_bytes\": ").number(bytes)
      .text(",\n  \"average_size\": ").fixed(objects ? double(bytes) / double(objects) : 0.0, 3)
      .text(",\n  \"peak_live_objects\": ").number(level(g_live.peak_objects))
      .text(",\n  \"peak_live_bytes\": ").number(peak_bytes)
      .text(",\n  \"total_to_peak_bytes\": ").fixed(peak_bytes ? double(bytes) / double(peak_bytes) : 0.0, 3)
      .text(",\n  \"realloc_calls\": ").number(get(g_totals.realloc_calls))
      .text(",\n  \"free_calls\": ").number(get(g_totals.free_calls))
      .text(",\n  \"live_objects_at_exit\": ").number(level(g_live.objects))
      .text(",\n  \"live_bytes_at_exit\": ").number(level(g_live.bytes))
      .text(",\n  \"large_objects\": ").number(get(g_totals.large_objects))
      .text(",\n  \"large_bytes\": ").number(get(g_totals.large_bytes))
      .text(",\n  \"unknown_frees\": ").number(get(g_totals.unknown_frees))
      .text(",\n  \"untracked_objects\": ").number(get(g_totals.untracked))
      .text(",\n  \"missed_frees\": ").number(get(g_totals.missed_frees))
      .text(",\n  \"peak_heap_resident_bytes_at_peaks\": ").number(g_heap_at_peaks.peak())
      .text(",\n  \"heap_samples_at_peaks\": ").number(g_heap_at_peaks.samples())
      .text(",\n  \"memory_mode\": ").text(g_memory_mode ? "true" : "false")
      .text(",\n  \"memory_growth_checks\": ").number(g_heap_at_peaks.growth_checks())
      .text(",\n  \"size_histogram\": {");
  bool first = true;
  for (std::uint64_t size = 0; size < g_cutoff && g_histogram != nullptr; ++size) {
    const std::uint64_t count = get(g_histogram[size]);
    if (count == 0) continue;
    out.text(first ? "\n    \"" : ",\n    \"").number(size).text("\": ").number(count);
    first = false;
  }
  out.text(first ? "}\n}\n" : "\n  }\n}\n");
  if (!out.commit()) complain("profile", "cannot write ", path);
}

// Runs from _dl_fini, after the program's atexit handlers.
__attribute__((destructor)) void profile_at_exit() { write_profile(); }

}  // namespace

void on_process_exit() noexcept { write_profile(); }

}  // namespace strata::lab

// The preconditioner calls this (found with dlsym) when it is done: in memory
// mode the peaks are the program's on the preconditioned heap, so they start
// here, with the kept objects live and the pages the preconditioning left held.
extern "C" __attribute__((visibility("default"))) void strata_lab_restart_peaks() noexcept {
  using namespace strata::lab;
  ensure_initialized();
  if (!g_memory_mode) return;
  const std::int64_t live_bytes = g_live.bytes.load(std::memory_order_relaxed);
  g_live.peak_bytes.store(live_bytes, std::memory_order_relaxed);
  g_live.peak_objects.store(g_live.objects.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_heap_at_peaks.reset();
  g_heap_at_peaks.fell(static_cast<std::uint64_t>(live_bytes < 0 ? 0 : live_bytes), g_mirror);
}

namespace strata::lab {

namespace observer {

void allocated(void* p, std::size_t size, std::size_t, Call call) noexcept {
  ensure_initialized();
  if (call == Call::Realloc || call == Call::ReallocArray) g_totals.realloc_calls.fetch_add(1, std::memory_order_relaxed);
  count_request(size);
  track(p, size);
  handed_out(p, 0, size);
  change_live(static_cast<std::int64_t>(size), 1);
}

void freed(void* p) noexcept {
  ensure_initialized();
  g_totals.free_calls.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t size = 0;
  if (g_sizes.take(p, &size))
    change_live(-static_cast<std::int64_t>(size), -1);
  else
    g_totals.unknown_frees.fetch_add(1, std::memory_order_relaxed);
}

Detached detach(void* p) noexcept {
  ensure_initialized();
  g_totals.realloc_calls.fetch_add(1, std::memory_order_relaxed);
  Detached d{false, 0, 0};
  d.known = g_sizes.take(p, &d.size);
  return d;
}

void resized(const Detached& old, void* p, std::size_t size, Call) noexcept {
  track(p, size);
  if (!old.known) {  // first sight of this object: it is new to us (its bytes are kept: touch writes them back)
    count_request(size);
    handed_out(p, 0, size);
    change_live(static_cast<std::int64_t>(size), 1);
    return;
  }
  if (size > old.size) {
    g_totals.bytes.fetch_add(size - old.size, std::memory_order_relaxed);
    handed_out(p, old.size, size);  // only the new tail: the kept bytes are the program's
  }
  change_live(static_cast<std::int64_t>(size) - static_cast<std::int64_t>(old.size), 0);
}

void released(const Detached& old, Call) noexcept {
  if (old.known) change_live(-static_cast<std::int64_t>(old.size), -1);
}

void reattached(const Detached& old, void* p) noexcept {
  if (old.known) track(p, old.size);
}

}  // namespace observer
}  // namespace strata::lab
