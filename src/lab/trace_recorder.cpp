// libstrata-trace.so: records every malloc-family operation of the program
// (trace_format.hpp) so strata-replay can repeat it against any allocator.
//
// One lock orders all records: the object table, the live counters and the
// file see the operations in the same order, so the peak recorded in the
// trailer is exactly the peak the replay reaches.
//
// Environment: STRATA_LAB_TRACE_OUT (path, "%p" = pid; default strata-trace.%p.bin).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "clock.hpp"
#include "env.hpp"
#include "file_writer.hpp"
#include "live_table.hpp"
#include "observer.hpp"
#include "once.hpp"
#include "process_exit.hpp"
#include "trace_format.hpp"

namespace strata::lab {
namespace {

struct ObjectRecord {
  std::uint64_t size;
  std::uint64_t id;
};

struct Recorder {
  bool open = false;
  pid_t owner = 0;  // the process writing this trace (a vfork child shares the memory, not the trace)
  std::uint64_t next_id = 1;
  std::uint64_t records = 0;
  std::uint64_t threads = 0;
  std::uint64_t unknown_frees = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t live_objects = 0;
  std::uint64_t peak_live_bytes = 0;
  std::uint64_t peak_live_objects = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t last_ns = 0;
};

YieldingLock g_lock;  // guards everything below
constinit Recorder g;
constinit LiveTable<ObjectRecord> g_objects;
alignas(FileWriter) unsigned char g_writer_storage[sizeof(FileWriter)];
FileWriter* g_out = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_thread = 0;

Once g_initialized;

void open_trace() noexcept {
  const char* pattern = ::getenv("STRATA_LAB_TRACE_OUT");
  if (pattern == nullptr || *pattern == '\0') pattern = "strata-trace.%p.bin";
  char path[4096];
  if (!expand_path(pattern, path, sizeof path)) {
    complain("STRATA_LAB_TRACE_OUT", "path too long: ", pattern);
    return;
  }
  g_out = new (g_writer_storage) FileWriter(path);
  if (!g_out->ok()) {
    complain("STRATA_LAB_TRACE_OUT", "cannot create ", path);
    return;
  }
  std::uint8_t header[trace::kHeaderBytes] = {};
  std::memcpy(header, trace::kHeaderMagic, 8);
  const std::uint32_t version = trace::kVersion;
  std::memcpy(header + 8, &version, 4);
  g_out->bytes(header, sizeof header);
  g.open = true;
  g.owner = ::getpid();
  g.start_ns = g.last_ns = monotonic_ns();
}

void finish_trace() noexcept {
  if (!g.open || g.owner != ::getpid()) return;
  g.open = false;
  const trace::Trailer trailer{g.records, g.next_id - 1, g.peak_live_bytes, g.peak_live_objects,
                               g.threads, g.last_ns - g.start_ns, g.unknown_frees, g.live_bytes};
  g_out->bytes(trace::kTrailerMagic, 8).bytes(&trailer, sizeof trailer);
  if (!g_out->commit()) complain("trace", "cannot write the trace file", "");
}

// fork: the child starts its own trace (new file, new ids); objects inherited
// from the parent are unknown to it, and their frees are counted, not recorded.
void before_fork() noexcept {
  g_lock.lock();
  g_objects.lock_all();
}
void after_fork_in_parent() noexcept {
  g_objects.unlock_all();
  g_lock.unlock();
}
void after_fork_in_child() noexcept {
  g_objects.unlock_all();
  g_lock.reset_after_fork();
  g_objects.clear();
  if (g_out != nullptr) g_out->abandon();
  g = Recorder{};
  t_thread = 0;
  open_trace();
}

void ensure_initialized() noexcept {
  g_initialized.run([] {
    {
      Hold hold(g_lock);
      open_trace();
    }
    ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  });
}

// Appends one record; the caller holds g_lock.
void emit(std::uint8_t op, std::uint64_t id, std::uint64_t size, std::uint64_t alignment) noexcept {
  if (!g.open) return;
  if (t_thread == 0) t_thread = ++g.threads;
  const std::uint64_t now = monotonic_ns();
  std::uint8_t record[trace::kMaxRecordBytes];
  std::uint8_t* end = record;
  *end++ = op;
  end = trace::put_varint(end, now - g.last_ns);
  end = trace::put_varint(end, t_thread);
  end = trace::put_varint(end, id);
  if (trace::creates_object(op) || op == trace::kResize) end = trace::put_varint(end, size);
  if (trace::has_alignment(op)) end = trace::put_varint(end, alignment);
  g_out->bytes(record, static_cast<std::size_t>(end - record));
  g.last_ns = now;
  ++g.records;
}

void grow_live(std::uint64_t bytes, std::uint64_t objects) noexcept {
  g.live_bytes += bytes;
  g.live_objects += objects;
  if (g.live_bytes > g.peak_live_bytes) g.peak_live_bytes = g.live_bytes;
  if (g.live_objects > g.peak_live_objects) g.peak_live_objects = g.live_objects;
}

void shrink_live(std::uint64_t bytes, std::uint64_t objects) noexcept {
  g.live_bytes -= bytes;
  g.live_objects -= objects;
}

// Remembers p's object. If p was still in the table, its free went unseen
// (an entry point not interposed): record that free now, so the trace stays
// replayable. Caller holds g_lock.
void remember(void* p, const ObjectRecord& object) noexcept {
  ObjectRecord previous;
  if (g_objects.insert(p, object, &previous) == LiveTable<ObjectRecord>::Insert::kReplaced) {
    shrink_live(previous.size, 1);
    emit(trace::kFree, previous.id, 0, 0);
  }
}

// A new object: give it an id, remember it, record it. Caller holds g_lock.
void create(void* p, std::uint64_t size, std::uint8_t op, std::uint64_t alignment) noexcept {
  const ObjectRecord object{size, g.next_id++};
  remember(p, object);
  grow_live(size, 1);
  emit(op, object.id, size, alignment);
}

__attribute__((destructor)) void trace_at_exit() {
  ensure_initialized();
  Hold hold(g_lock);
  finish_trace();  // once: it closes the trace
}

}  // namespace

void on_process_exit() noexcept { trace_at_exit(); }

namespace observer {

void allocated(void* p, std::size_t size, std::size_t alignment, Call call) noexcept {
  ensure_initialized();
  Hold hold(g_lock);
  create(p, size, static_cast<std::uint8_t>(call), alignment);
}

void freed(void* p) noexcept {
  ensure_initialized();
  Hold hold(g_lock);
  ObjectRecord object;
  if (!g_objects.take(p, &object)) {
    ++g.unknown_frees;
    return;
  }
  shrink_live(object.size, 1);
  emit(trace::kFree, object.id, 0, 0);
}

Detached detach(void* p) noexcept {
  ensure_initialized();
  Hold hold(g_lock);
  ObjectRecord object{0, 0};
  const bool known = g_objects.take(p, &object);
  return Detached{known, object.size, object.id};
}

void resized(const Detached& old, void* p, std::size_t size, Call) noexcept {
  Hold hold(g_lock);
  if (!old.known) {  // never seen: from here on it is a new object
    create(p, size, trace::kMalloc, 0);
    return;
  }
  remember(p, ObjectRecord{size, old.id});
  if (size >= old.size)
    grow_live(size - old.size, 0);
  else
    shrink_live(old.size - size, 0);
  emit(trace::kResize, old.id, size, 0);
}

void released(const Detached& old, Call) noexcept {
  Hold hold(g_lock);
  if (!old.known) return;
  shrink_live(old.size, 1);
  emit(trace::kReallocFree, old.id, 0, 0);
}

void reattached(const Detached& old, void* p) noexcept {
  Hold hold(g_lock);
  if (old.known) remember(p, ObjectRecord{old.size, old.id});
}

}  // namespace observer
}  // namespace strata::lab
