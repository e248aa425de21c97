// strata-replay TRACE: performs a recorded allocation trace (trace_format.hpp)
// against whatever malloc this process has (LD_PRELOAD picks it), writing to
// every byte of each object as the program would, and reports the time taken
// and the peak live bytes and objects it reached.
//
// The replay runs in the recorded order (the order the recorder's lock fixed),
// so its live-data curve is the recorded one exactly: by default on one thread
// (the timing then measures the allocator, not thread hand-offs), or with
// STRATA_LAB_REPLAY_THREADS=1 each recorded thread on a thread of its own.
// Its own memory (object table, the mapped trace) never comes from malloc.
//
// Environment: STRATA_LAB_REPLAY_REPORT (JSON report path; default stdout),
// STRATA_LAB_LIVE_OUT (publish live counters for the fragmentation meter).
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include <strata/platform.hpp>

#include "clock.hpp"
#include "env.hpp"
#include "file_writer.hpp"
#include "lab_memory.hpp"
#include "heap_meter.hpp"
#include "live_mirror.hpp"
#include "trace_format.hpp"

namespace strata::lab {
namespace {

struct Object {
  void* p;
  std::uint64_t size;
};

struct Stats {
  std::uint64_t records = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t live_objects = 0;
  std::uint64_t peak_live_bytes = 0;
  std::uint64_t peak_live_objects = 0;
  std::uint64_t failed_allocations = 0;
  std::uint64_t elapsed_ns = 0;
};

const char* g_trace_path = "";
// Memory in use at new live peaks, while the fragmentation meter watches.
constinit PeakHeapSampler g_heap_at_peaks;

[[noreturn]] void fail(const char* problem) noexcept {
  complain(g_trace_path, problem);
  exit_now(2);
}

void publish(const Stats& s, LiveMirrorPage* mirror) noexcept {
  if (mirror == nullptr) return;
  mirror->live_bytes.store(s.live_bytes, std::memory_order_relaxed);
  mirror->live_objects.store(s.live_objects, std::memory_order_relaxed);
  mirror->peak_live_bytes.store(s.peak_live_bytes, std::memory_order_relaxed);
  mirror->peak_live_objects.store(s.peak_live_objects, std::memory_order_relaxed);
}

void* create(std::uint8_t op, std::uint64_t size, std::uint64_t alignment) noexcept {
  void* p = nullptr;
  switch (op) {
    case trace::kMalloc: return ::malloc(size);
    case trace::kCalloc: return ::calloc(1, size);
    case trace::kReallocNew:
    case trace::kReallocArrayNew: return ::realloc(nullptr, size);
    case trace::kPosixMemalign: return ::posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
    case trace::kAlignedAlloc: return ::aligned_alloc(alignment, size);
    case trace::kMemalign: return ::memalign(alignment, size);
    // valloc/pvalloc (page-aligned, pvalloc's size already rounded in the trace)
    // through memalign: not every allocator defines them, and glibc's would
    // then hand out memory the preloaded allocator's free cannot take.
    default: return ::memalign(alignment, size);
  }
}

// The program wrote its objects; so does the replay (a distinct byte per object).
void touch(void* p, std::uint64_t from, std::uint64_t to, std::uint64_t id) noexcept {
  if (to > from) std::memset(static_cast<char*>(p) + from, static_cast<int>(id | 1) & 0xff, to - from);
}

struct Record {
  std::uint8_t op;
  std::uint64_t thread;
  std::uint64_t id;
  std::uint64_t size;
  std::uint64_t alignment;
};

struct TraceBody {
  const std::uint8_t* begin;
  const std::uint8_t* end;
  std::uint64_t objects;  // ids run 1..objects
  std::uint64_t threads;  // thread indices run 1..threads
};

// Decodes the record at *at, advancing it; exits with a message on malformed input.
Record decode(const std::uint8_t** at, const TraceBody& body) noexcept {
  Record r{*(*at)++, 0, 0, 0, 0};
  std::uint64_t delta;
  if (!trace::is_known_op(r.op)) fail("unknown operation code in the trace");
  if (!trace::get_varint(at, body.end, &delta) || !trace::get_varint(at, body.end, &r.thread) ||
      !trace::get_varint(at, body.end, &r.id))
    fail("truncated record");
  if ((trace::creates_object(r.op) || r.op == trace::kResize) && !trace::get_varint(at, body.end, &r.size))
    fail("truncated record");
  if (trace::has_alignment(r.op) && !trace::get_varint(at, body.end, &r.alignment)) fail("truncated record");
  if (r.id == 0 || r.id > body.objects) fail("object id out of range");
  if (r.thread == 0 || r.thread > body.threads) fail("thread index out of range");
  return r;
}

// The replayed heap: objects by id and the live-data accounting.
class Replay {
 public:
  Replay(Object* objects, LiveMirrorPage* mirror) noexcept : objects_(objects), mirror_(mirror) {}

  void perform(const Record& r) noexcept {
    Object& o = objects_[r.id];
    ++stats.records;
    if (trace::creates_object(r.op)) {
      if (o.p != nullptr) fail("object id created twice");
      o.p = create(r.op, r.size, r.alignment);
      if (o.p == nullptr) {
        ++stats.failed_allocations;
        return;
      }
      o.size = r.size;
      touch(o.p, 0, r.size, r.id);
      stats.live_bytes += r.size;
      ++stats.live_objects;
    } else if (r.op == trace::kResize) {
      if (o.p == nullptr) fail("resize of an object that is not live");
      // A resize to 0 is a free plus a 0-byte object: realloc(p, 0) frees under some allocators.
      void* p = r.size == 0 ? (::free(o.p), ::malloc(0)) : ::realloc(o.p, r.size);
      if (p == nullptr) {
        ++stats.failed_allocations;
        return;
      }
      touch(p, o.size, r.size, r.id);
      stats.live_bytes = stats.live_bytes - o.size + r.size;
      o.p = p;
      o.size = r.size;
    } else {  // kFree, kReallocFree
      if (o.p == nullptr) fail("free of an object that is not live");
      if (mirror_ != nullptr) g_heap_at_peaks.fell(stats.peak_live_bytes, mirror_);  // before memory goes back
      ::free(o.p);
      stats.live_bytes -= o.size;
      --stats.live_objects;
      o.p = nullptr;
      o.size = 0;
    }
    if (stats.live_bytes > stats.peak_live_bytes) {
      stats.peak_live_bytes = stats.live_bytes;
      if (mirror_ != nullptr) g_heap_at_peaks.rose(stats.live_bytes, mirror_);
    }
    if (stats.live_objects > stats.peak_live_objects) stats.peak_live_objects = stats.live_objects;
    publish(stats, mirror_);
  }

  Stats stats;

 private:
  Object* objects_;
  LiveMirrorPage* mirror_;
};

// Every operation on this thread, in the recorded order.
void replay_on_one_thread(const TraceBody& body, Replay& replay) noexcept {
  for (const std::uint8_t* at = body.begin; at < body.end;) replay.perform(decode(&at, body));
}

// Decodes the whole trace once, so workers never meet a malformed record.
void replay_validate(const TraceBody& body) noexcept {
  for (const std::uint8_t* at = body.begin; at < body.end;) decode(&at, body);
}

// Each recorded thread on a thread of its own, still in the recorded order: an
// operation waits for its turn, so frees by another thread than the allocating
// one happen as recorded (thread-caching allocators see the same remote frees).
struct Worker {
  const TraceBody* body;
  Replay* replay;
  std::atomic<std::uint64_t>* turn;  // index of the record whose turn it is
  std::uint64_t thread;
  pthread_t handle;
};

void wait_for_turn(const std::atomic<std::uint64_t>& turn, std::uint64_t index) noexcept {
  for (int spins = 0; turn.load(std::memory_order_acquire) != index; ++spins) {
    if (spins < 128) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      ::sched_yield();
    }
  }
}

void* run_worker(void* argument) noexcept {
  auto* w = static_cast<Worker*>(argument);
  std::uint64_t index = 0;
  for (const std::uint8_t* at = w->body->begin; at < w->body->end; ++index) {
    const Record r = decode(&at, *w->body);
    if (r.thread != w->thread) continue;
    wait_for_turn(*w->turn, index);
    w->replay->perform(r);
    w->turn->store(index + 1, std::memory_order_release);
  }
  return nullptr;
}

void replay_on_recorded_threads(const TraceBody& body, Replay& replay) noexcept {
  replay_validate(body);
  auto* workers = static_cast<Worker*>(map_lab_memory(body.threads * sizeof(Worker)));
  if (workers == nullptr) fail("no memory for the replay threads");
  std::atomic<std::uint64_t> turn{0};
  for (std::uint64_t t = 0; t < body.threads; ++t) {
    workers[t] = Worker{&body, &replay, &turn, t + 1, {}};
    if (::pthread_create(&workers[t].handle, nullptr, run_worker, &workers[t]) != 0) fail("cannot create a thread");
  }
  for (std::uint64_t t = 0; t < body.threads; ++t) ::pthread_join(workers[t].handle, nullptr);
  unmap_lab_memory(workers, body.threads * sizeof(Worker));
}

void report(const trace::Trailer& recorded, const Stats& s, bool on_recorded_threads) noexcept {
  const char* path = ::getenv("STRATA_LAB_REPLAY_REPORT");
  if (path == nullptr || *path == '\0') path = "-";
  FileWriter out(path);
  out.text("{\n  \"format\": \"strata-replay\",\n  \"version\": 1,\n  \"records\": ").number(s.records)
      .text(",\n  \"replay_ns\": ").number(s.elapsed_ns)
      .text(",\n  \"recorded_ns\": ").number(recorded.duration_ns)
      .text(",\n  \"peak_live_bytes\": ").number(s.peak_live_bytes)
      .text(",\n  \"peak_live_objects\": ").number(s.peak_live_objects)
      .text(",\n  \"recorded_peak_live_bytes\": ").number(recorded.peak_live_bytes)
      .text(",\n  \"recorded_peak_live_objects\": ").number(recorded.peak_live_objects)
      .text(",\n  \"recorded_threads\": ").number(recorded.threads)
      .text(",\n  \"replayed_on_recorded_threads\": ").text(on_recorded_threads ? "true" : "false")
      .text(",\n  \"live_bytes_at_end\": ").number(s.live_bytes)
      .text(",\n  \"failed_allocations\": ").number(s.failed_allocations)
      .text(",\n  \"peak_heap_resident_bytes_at_peaks\": ").number(g_heap_at_peaks.peak())
      .text(",\n  \"heap_samples_at_peaks\": ").number(g_heap_at_peaks.samples())
      .text("\n}\n");
  if (!out.commit()) complain("strata-replay", "cannot write the report to ", path);
}

}  // namespace
}  // namespace strata::lab

int main(int argc, char** argv) {
  using namespace strata::lab;
  if (argc != 2) {
    complain("strata-replay", "usage: strata-replay TRACE");
    return 2;
  }
  g_trace_path = argv[1];
  const int fd = ::open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open the trace");
  struct stat st;
  if (::fstat(fd, &st) != 0) fail("cannot stat the trace");
  const auto length = static_cast<std::size_t>(st.st_size);
  if (length < trace::kHeaderBytes + trace::kTrailerBytes) fail("too short to be a trace");
  void* mapped = strata::platform::map_file(fd, length, strata::platform::FileAccess::read_only);
  ::close(fd);
  if (mapped == nullptr) fail("cannot map the trace");
  const auto* bytes = static_cast<const std::uint8_t*>(mapped);
  std::uint32_t version;
  std::memcpy(&version, bytes + 8, 4);
  if (std::memcmp(bytes, trace::kHeaderMagic, 8) != 0) fail("not a strata trace (bad magic)");
  if (version != trace::kVersion) fail("unsupported trace version");
  const std::uint8_t* trailer_at = bytes + length - trace::kTrailerBytes;
  if (std::memcmp(trailer_at, trace::kTrailerMagic, 8) != 0)
    fail("incomplete trace (no trailer: the recorded program did not exit normally)");
  trace::Trailer recorded;
  std::memcpy(&recorded, trailer_at + 8, sizeof recorded);
  const std::uint64_t object_count = recorded.objects;
  auto* objects = static_cast<Object*>(map_lab_memory((object_count + 1) * sizeof(Object)));
  if (objects == nullptr) fail("no memory for the object table");
  const TraceBody body{bytes + trace::kHeaderBytes, trailer_at, object_count, recorded.threads};
  LiveMirrorPage* const mirror = open_live_mirror();
  Replay replay(objects, mirror);
  const char* threaded = ::getenv("STRATA_LAB_REPLAY_THREADS");
  const bool on_recorded_threads = threaded != nullptr && std::strcmp(threaded, "1") == 0;
  const std::uint64_t start = monotonic_ns();
  if (on_recorded_threads)
    replay_on_recorded_threads(body, replay);
  else
    replay_on_one_thread(body, replay);
  replay.stats.elapsed_ns = monotonic_ns() - start;
  if (mirror != nullptr) g_heap_at_peaks.fell(replay.stats.peak_live_bytes, mirror);  // a peak held to the end
  report(recorded, replay.stats, on_recorded_threads);
  return replay.stats.failed_allocations == 0 ? 0 : 3;
}
