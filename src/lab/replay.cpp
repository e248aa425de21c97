// strata-replay TRACE: performs a recorded allocation trace (trace_format.hpp)
// against whatever malloc this process has (LD_PRELOAD picks it), writing to
// every byte of each object as the program would, and reports the time taken
// and the peak live bytes and objects it reached.
//
// The replay runs on one thread in the recorded order (the order the
// recorder's lock fixed), so its live-data curve is the recorded one exactly.
// Its own memory (object table, the mapped trace) never comes from malloc.
//
// Environment: STRATA_REPLAY_REPORT (JSON report path; default stdout),
// STRATA_LIVE_OUT (publish live counters for the fragmentation meter).
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "clock.hpp"
#include "env.hpp"
#include "file_writer.hpp"
#include "lab_memory.hpp"
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

[[noreturn]] void fail(const char* problem) noexcept {
  complain(g_trace_path, problem);
  ::_exit(2);
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

Stats replay(const std::uint8_t* at, const std::uint8_t* end, Object* objects, std::uint64_t object_count,
             LiveMirrorPage* mirror) noexcept {
  Stats s;
  const std::uint64_t start = monotonic_ns();
  while (at < end) {
    const std::uint8_t op = *at++;
    std::uint64_t delta, thread, id, size = 0, alignment = 0;
    if (!trace::is_known_op(op)) fail("unknown operation code in the trace");
    if (!trace::get_varint(&at, end, &delta) || !trace::get_varint(&at, end, &thread) ||
        !trace::get_varint(&at, end, &id))
      fail("truncated record");
    if ((trace::creates_object(op) || op == trace::kResize) && !trace::get_varint(&at, end, &size))
      fail("truncated record");
    if (trace::has_alignment(op) && !trace::get_varint(&at, end, &alignment)) fail("truncated record");
    if (id == 0 || id > object_count) fail("object id out of range");
    Object& o = objects[id];
    ++s.records;
    if (trace::creates_object(op)) {
      if (o.p != nullptr) fail("object id created twice");
      o.p = create(op, size, alignment);
      if (o.p == nullptr) {
        ++s.failed_allocations;
        continue;
      }
      o.size = size;
      touch(o.p, 0, size, id);
      s.live_bytes += size;
      ++s.live_objects;
    } else if (op == trace::kResize) {
      if (o.p == nullptr) fail("resize of an object that is not live");
      // A resize to 0 is a free plus a 0-byte object: realloc(p, 0) frees under some allocators.
      void* p = size == 0 ? (::free(o.p), ::malloc(0)) : ::realloc(o.p, size);
      if (p == nullptr) {
        ++s.failed_allocations;
        continue;
      }
      touch(p, o.size, size, id);
      s.live_bytes = s.live_bytes - o.size + size;
      o.p = p;
      o.size = size;
    } else {  // kFree, kReallocFree
      if (o.p == nullptr) fail("free of an object that is not live");
      ::free(o.p);
      s.live_bytes -= o.size;
      --s.live_objects;
      o.p = nullptr;
      o.size = 0;
    }
    if (s.live_bytes > s.peak_live_bytes) s.peak_live_bytes = s.live_bytes;
    if (s.live_objects > s.peak_live_objects) s.peak_live_objects = s.live_objects;
    publish(s, mirror);
  }
  s.elapsed_ns = monotonic_ns() - start;
  return s;
}

void report(const trace::Trailer& recorded, const Stats& s) noexcept {
  const char* path = ::getenv("STRATA_REPLAY_REPORT");
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
      .text(",\n  \"live_bytes_at_end\": ").number(s.live_bytes)
      .text(",\n  \"failed_allocations\": ").number(s.failed_allocations)
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
  void* mapped = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) fail("cannot map the trace");
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
  const Stats stats = replay(bytes + trace::kHeaderBytes, trailer_at, objects, object_count, open_live_mirror());
  report(recorded, stats);
  return stats.failed_allocations == 0 ? 0 : 3;
}
