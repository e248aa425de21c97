// libstrata-precondition.so: adversarial preconditioning (2026 paper, §3.2,
// Algorithm 3). Before main, allocate multiplier x peak_live_objects objects
// with sizes drawn from the profile's histogram, shuffle them with a seeded
// PRNG, free the first n x (1 - occupancy) and keep the rest live for the whole
// run. Records when preconditioning ended and when the program exited, so the
// program's own time can be reported without the preconditioning.
//
// Environment (docs/lab.md): STRATA_LAB_PRECOND_MULTIPLIER (default 0: do nothing
// but still time the run), STRATA_LAB_PRECOND_OCCUPANCY (0..1), STRATA_LAB_PRECOND_SEED
// (default 1), STRATA_LAB_PRECOND_PROFILE (required when the multiplier is > 0),
// STRATA_LAB_PRECOND_REPORT (JSON report path,
// "%p" = pid; without it a line goes to stderr).
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <strata/random.hpp>

#include "clock.hpp"
#include "env.hpp"
#include "file_writer.hpp"
#include "heap_meter.hpp"
#include "lab_memory.hpp"
#include "process_exit.hpp"
#include "profile_reader.hpp"

namespace strata::lab {
namespace {

using strata::Random;

struct Settings {
  double multiplier = 0;
  double occupancy = 0;
  std::uint64_t seed = 1;
  const char* profile = nullptr;
  const char* report = nullptr;
};

struct Outcome {
  std::uint64_t peak_live_objects = 0;  // from the profile
  std::uint64_t allocated_objects = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t failed_allocations = 0;
  std::uint64_t freed_objects = 0;
  std::uint64_t kept_objects = 0;
  std::uint64_t kept_bytes = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t end_cpu_ns = 0;  // the process's CPU time when preconditioning ended
};

Settings g_settings;
Outcome g_outcome;
pid_t g_pid = 0;

[[noreturn]] void bad_setting(const char* variable, const char* problem, const char* value) noexcept {
  complain(variable, problem, value);
  exit_now(2);
}

Settings read_settings() noexcept {
  Settings s;
  if (const char* v = ::getenv("STRATA_LAB_PRECOND_MULTIPLIER"); v != nullptr && *v != '\0')
    if (!parse_fraction(v, &s.multiplier)) bad_setting("STRATA_LAB_PRECOND_MULTIPLIER", "expected a number >= 0, got ", v);
  if (const char* v = ::getenv("STRATA_LAB_PRECOND_OCCUPANCY"); v != nullptr && *v != '\0')
    if (!parse_fraction(v, &s.occupancy) || s.occupancy > 1)
      bad_setting("STRATA_LAB_PRECOND_OCCUPANCY", "expected a number in [0, 1], got ", v);
  if (const char* v = ::getenv("STRATA_LAB_PRECOND_SEED"); v != nullptr && *v != '\0')
    if (!parse_u64(v, &s.seed)) bad_setting("STRATA_LAB_PRECOND_SEED", "expected an unsigned integer, got ", v);
  s.profile = ::getenv("STRATA_LAB_PRECOND_PROFILE");
  s.report = ::getenv("STRATA_LAB_PRECOND_REPORT");
  if (s.report != nullptr && *s.report == '\0') s.report = nullptr;
  if (s.multiplier > 0 && (s.profile == nullptr || *s.profile == '\0'))
    bad_setting("STRATA_LAB_PRECOND_PROFILE", "required when STRATA_LAB_PRECOND_MULTIPLIER > 0", "");
  return s;
}

struct Slot {
  void* object;
  std::uint64_t size;
};

// Algorithm 3.
void precondition(const Settings& s, const SizeDistribution& d, Outcome* o) noexcept {
  const auto n = static_cast<std::uint64_t>(std::llround(s.multiplier * static_cast<double>(d.peak_live_objects)));
  if (n == 0 || d.total() == 0) return;
  auto* slots = static_cast<Slot*>(map_lab_memory(n * sizeof(Slot)));
  if (slots == nullptr) bad_setting("precondition", "no memory for the object array", "");
  Random random(s.seed);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t size = sample_size(d, random.next());
    slots[i] = Slot{std::malloc(size), size};
    if (slots[i].object == nullptr) {
      ++o->failed_allocations;
      continue;
    }
    ++o->allocated_objects;
    o->allocated_bytes += size;
  }
  for (std::uint64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    const std::uint64_t j = random.below(i + 1);
    const Slot t = slots[i];
    slots[i] = slots[j];
    slots[j] = t;
  }
  const auto to_free = static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * (1.0 - s.occupancy)));
  for (std::uint64_t i = 0; i < n; ++i) {
    if (slots[i].object == nullptr) continue;
    if (i < to_free) {
      std::free(slots[i].object);
      ++o->freed_objects;
    } else {
      ++o->kept_objects;
      o->kept_bytes += slots[i].size;
    }
  }
  unmap_lab_memory(slots, n * sizeof(Slot));  // the kept objects stay live: they are never freed
}

void write_report(const Settings& s, const Outcome& o, std::uint64_t exit_ns, std::uint64_t exit_cpu_ns) noexcept {
  char path[4096];
  if (!expand_path(s.report, path, sizeof path)) {
    complain("STRATA_LAB_PRECOND_REPORT", "path too long: ", s.report);
    return;
  }
  FileWriter out(path);
  out.text("{\n  \"format\": \"strata-precondition\",\n  \"version\": 1,\n  \"pid\": ")
      .number(static_cast<std::uint64_t>(g_pid))
      .text(",\n  \"multiplier\": ").fixed(s.multiplier, 6)
      .text(",\n  \"occupancy\": ").fixed(s.occupancy, 6)
      .text(",\n  \"seed\": ").number(s.seed)
      .text(",\n  \"profile_peak_live_objects\": ").number(o.peak_live_objects)
      .text(",\n  \"allocated_objects\": ").number(o.allocated_objects)
      .text(",\n  \"allocated_bytes\": ").number(o.allocated_bytes)
      .text(",\n  \"failed_allocations\": ").number(o.failed_allocations)
      .text(",\n  \"freed_objects\": ").number(o.freed_objects)
      .text(",\n  \"kept_objects\": ").number(o.kept_objects)
      .text(",\n  \"kept_bytes\": ").number(o.kept_bytes)
      .text(",\n  \"start_ns\": ").number(o.start_ns)
      .text(",\n  \"precondition_end_ns\": ").number(o.end_ns)
      .text(",\n  \"precondition_ns\": ").number(o.end_ns - o.start_ns)
      .text(",\n  \"exit_ns\": ");
  if (exit_ns == 0)
    out.text("null,\n  \"program_ns\": null,\n  \"program_cpu_ns\": null\n}\n");
  else
    out.text("").number(exit_ns).text(",\n  \"program_ns\": ").number(exit_ns - o.end_ns)
        .text(",\n  \"program_cpu_ns\": ").number(exit_cpu_ns - o.end_cpu_ns)
        .text(",\n  \"peak_resident_bytes\": ").number(peak_resident_bytes()).text("\n}\n");
  if (!out.commit()) complain("STRATA_LAB_PRECOND_REPORT", "cannot write ", path);
}

void say_what_was_done(const Settings& s, const Outcome& o) noexcept {
  char line[512];
  char* p = line;
  auto put = [&](const char* text) {
    while (*text != '\0' && p < line + sizeof line - 1) *p++ = *text++;
  };
  auto put_number = [&](std::uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0 && p < line + sizeof line - 1) *p++ = digits[--n];
  };
  put("strata-precondition: allocated ");
  put_number(o.allocated_objects);
  put(" objects (");
  put_number(o.allocated_bytes);
  put(" bytes), freed ");
  put_number(o.freed_objects);
  put(", kept ");
  put_number(o.kept_objects);
  put(" (");
  put_number(o.kept_bytes);
  put(" bytes) in ");
  put_number((o.end_ns - o.start_ns) / 1000);
  put(" us, seed ");
  put_number(s.seed);
  put("\n");
  ssize_t ignored = ::write(2, line, static_cast<std::size_t>(p - line));
  (void)ignored;
}

// A profiler preloaded before this library (the fragmentation meter's memory
// runs) measures the program from here on: the kept objects stay live.
void restart_profiler_peaks() noexcept {
  using Restart = void (*)() noexcept;
  if (auto restart = reinterpret_cast<Restart>(::dlsym(RTLD_DEFAULT, "strata_lab_restart_peaks"))) restart();
}

// Runs before main and before the program's own static constructors (a
// preloaded library is initialised before the executable); the priority only
// puts it first within this library.
__attribute__((constructor(101))) void precondition_before_main() {
  g_pid = ::getpid();
  g_outcome.start_ns = monotonic_ns();
  g_settings = read_settings();
  if (g_settings.multiplier > 0) {
    SizeDistribution distribution;
    if (const char* error = read_size_distribution(g_settings.profile, &distribution))
      bad_setting(g_settings.profile, error, "");
    g_outcome.peak_live_objects = distribution.peak_live_objects;
    precondition(g_settings, distribution, &g_outcome);
  }
  g_outcome.end_ns = monotonic_ns();
  g_outcome.end_cpu_ns = process_cpu_ns();
  restart_profiler_peaks();
  if (g_settings.report != nullptr)
    write_report(g_settings, g_outcome, 0, 0);
  else if (g_settings.multiplier > 0)
    say_what_was_done(g_settings, g_outcome);
}

bool g_exit_recorded = false;

// Runs from _dl_fini, after the program's atexit handlers, or from _exit.
__attribute__((destructor)) void record_program_exit() {
  if (::getpid() != g_pid || g_settings.report == nullptr) return;  // a fork child: not the measured program
  if (g_exit_recorded) return;
  g_exit_recorded = true;
  write_report(g_settings, g_outcome, monotonic_ns(), process_cpu_ns());
}

}  // namespace

void on_process_exit() noexcept { record_program_exit(); }
}  // namespace strata::lab
