// The C API of strata/reap.h over the reap's layer chain (reap_heap.hpp),
// plus checked mode.
//
// Checked mode (CMake STRATA_REAP_CHECKED=ON, environment STRATA_REAP_CHECK=1,
// always under ASan, and under Valgrind unless STRATA_REAP_CHECK=0) records
// every object of the reap, so a free of a pointer the reap never returned, a
// double free or a free through the wrong reap aborts with a message naming
// the address and the reap; it also tells ASan/Valgrind about every object. A
// checked reap keeps its inline window closed (STRATA_REAP_SLOW_CHECKED), so
// every allocation comes here: checking costs an unchecked reap nothing on the
// inline fast path and one predictable branch in free.
#include "strata/reap.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "reap/reap_heap.hpp"
#include "strata/layers/heap.hpp"

using strata::layers::align_up;
using strata::layers::is_power_of_two;
using namespace strata::reap_detail;
namespace instrument = strata::layers::instrument;
using strata::layers::map_hidden;
using strata::layers::round_to_pages;
using strata::layers::unmap_or_cache;

namespace {

#ifdef STRATA_REAP_CHECKED
constexpr bool kAlwaysChecked = true;
#else
constexpr bool kAlwaysChecked = instrument::kAsan;
#endif

// Objects of one checked reap: true while live, false once freed.
struct CheckedObjects {
  std::unordered_map<const void*, bool> objects;
};

}  // namespace

// The public head first (strata_reap_malloc reads it at the reap's address),
// then the layer chain.
struct strata_reap final : strata_reap_head, ReapHeap {
  bool checked = false;
  CheckedObjects* check = nullptr;
  void* mapping = nullptr;         // the reap's own mapping: this header (colored) + the home chunk
  std::size_t mapping_bytes = 0;
};

namespace {

// The reap's own mapping: its header, then its first (home) chunk.
// Cache colouring: each new reap's header and home chunk start a few cache
// lines further into their pages than the last one's. Page-aligned, the hot
// lines of every reap (the head, the free-list masks, the first objects) fall
// into the same L1 sets, and a program using a dozen reaps at once (scopes: a
// reap per block nesting level) missed L1 half again as often as its
// hand-written obstacks. The step is six lines, not one: a reap's hot lines
// (head, stream and list scalars) lie within its first few lines, so reaps one
// line apart still shared most sets (docs/benchmarks-choices.md, "Reap
// colouring").
constexpr std::size_t kColors = 15;
constexpr std::size_t kColorStep = 384;
constexpr std::size_t kMaxColor = (kColors - 1) * kColorStep;
constexpr std::size_t kHeaderBytes = align_up(sizeof(strata_reap) + kMaxColor, 4096);
// The home chunk keeps at least this much whatever the colour (the mapping
// has room for the largest one).
constexpr std::size_t kHomeChunkBytes = 8 * 1024;

std::size_t next_color() noexcept {
  static std::atomic<unsigned> reaps{0};
  return reaps.fetch_add(1, std::memory_order_relaxed) % kColors * kColorStep;
}

strata_reap* as_reap(ReapHeap* node) noexcept { return static_cast<strata_reap*>(node); }

// The public head, the line every call reads first (the inline path's cursor).
const strata_reap_head& head_of(const strata_reap* reap) noexcept { return *reap; }

// Checked mode, read from the head's flags (a checked reap keeps
// STRATA_REAP_SLOW_CHECKED set for good) rather than from `checked`, some
// three kilobytes further on: free and the slow path then touch one cache
// line fewer per call.
bool is_checked(const strata_reap* reap) noexcept { return (head_of(reap).flags & STRATA_REAP_SLOW_CHECKED) != 0; }

// A flag of the head's only the library sets: the reap has not been flagged
// in the tree (noteInUse) since it was made or last cleared. It keeps the
// window closed, so the reap's next allocation comes to the slow path, which
// tests it together with STRATA_REAP_SLOW_CHECKED in one instruction.
constexpr std::uint32_t kClosedUntilNotedInUse = 8;
static_assert((kClosedUntilNotedInUse &
               (STRATA_REAP_SLOW_CHECKED | STRATA_REAP_SLOW_FREED | STRATA_REAP_SLOW_EMULATOR)) == 0);

// Flags the reap for the next clear of any ancestor; the window opens
// (unless another flag holds).
void note_in_use(strata_reap* reap) noexcept {
  reap->noteInUse();
  reap->openInline(kClosedUntilNotedInUse);
}

// STRATA_REAP_CHECK: unset (checked under Valgrind only), "0" (never, e.g. to
// count the fast path with callgrind), anything else (always). Read once, the
// first time it is needed (a program may set it early in main).
enum class CheckSetting { kDefault, kOff, kOn };

CheckSetting check_setting() noexcept {
  static const CheckSetting setting = [] {
    const char* v = std::getenv("STRATA_REAP_CHECK");
    if (v == nullptr || *v == '\0') return CheckSetting::kDefault;
    return std::strcmp(v, "0") == 0 ? CheckSetting::kOff : CheckSetting::kOn;
  }();
  return setting;
}

// The region layers read no environment: the reap passes its setting in, so
// STRATA_REAP_CHECK=0 also keeps every region layer of the program quiet
// under Valgrind.
bool valgrind_hooks_allowed() noexcept { return check_setting() != CheckSetting::kOff; }
[[maybe_unused]] const bool kValgrindSettingPassed =
    (instrument::set_valgrind_hooks_allowed(valgrind_hooks_allowed), true);

bool checked_by_default() noexcept {
  if (kAlwaysChecked) return true;  // STRATA_REAP_CHECKED build or ASan
  switch (check_setting()) {
    case CheckSetting::kOn: return true;
    case CheckSetting::kOff: return false;
    case CheckSetting::kDefault: break;
  }
  return instrument::valgrind_hooks_on();
}

// ---- checked mode --------------------------------------------------------

std::mutex& check_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_set<const strata_reap*>& checked_reaps() {  // guarded by check_mutex
  static std::unordered_set<const strata_reap*> reaps;
  return reaps;
}

[[noreturn]] void misuse(const char* call, const strata_reap* reap, const void* ptr, const char* what,
                         const void* owner = nullptr) {
  if (owner != nullptr)
    std::fprintf(stderr, "strata reap: %s(reap %p, %p): %s %p\n", call, static_cast<const void*>(reap), ptr,
                 what, owner);
  else
    std::fprintf(stderr, "strata reap: %s(reap %p, %p): %s\n", call, static_cast<const void*>(reap), ptr, what);
  std::fflush(stderr);
  std::abort();
}

// Aborts unless ptr is a live object of reap. Caller holds check_mutex.
void require_live(const char* call, const strata_reap* reap, const void* ptr) {
  auto& objects = reap->check->objects;
  auto it = objects.find(ptr);
  if (it != objects.end() && it->second) return;
  for (const strata_reap* other : checked_reaps()) {
    if (other == reap) continue;
    auto o = other->check->objects.find(ptr);
    if (o != other->check->objects.end() && o->second)
      misuse(call, reap, ptr, "wrong reap: the object belongs to reap", other);
  }
  if (it != objects.end()) misuse(call, reap, ptr, "double free: the object was freed already");
  misuse(call, reap, ptr, "foreign pointer: never returned by this reap (or freed by a clear)");
}

[[gnu::noinline]] void* checked_record(strata_reap* reap, void* ptr) noexcept {
  if (ptr == nullptr) return nullptr;
  try {
    std::lock_guard lock(check_mutex());
    reap->check->objects[ptr] = true;
  } catch (...) {
    reap->free<true>(ptr);
    errno = ENOMEM;
    return nullptr;
  }
  instrument::object_alloc(reap, ptr, reap->getSize(ptr));
  return ptr;
}

// Out of line and cold, like checked_free: the unchecked slow path then needs
// no stack frame of its own.
[[gnu::noinline, gnu::cold]] void* checked_malloc(strata_reap* reap, std::size_t size) noexcept {
  return checked_record(reap, reap->malloc<true>(size));
}

[[gnu::noinline, gnu::cold]] void checked_free(const char* call, strata_reap* reap, void* ptr) {
  {
    std::lock_guard lock(check_mutex());
    require_live(call, reap, ptr);
    reap->check->objects[ptr] = false;
  }
  instrument::object_free(reap, ptr, reap->getSize(ptr));
  reap->free<true>(ptr);
}

bool start_checking(strata_reap* reap) noexcept {
  reap->check = new (std::nothrow) CheckedObjects;
  if (reap->check == nullptr) return false;
  try {
    std::lock_guard lock(check_mutex());
    checked_reaps().insert(reap);
  } catch (...) {
    delete reap->check;
    return false;
  }
  instrument::pool_create(reap);
  return true;
}

void stop_checking(strata_reap* reap) noexcept {
  {
    std::lock_guard lock(check_mutex());
    checked_reaps().erase(reap);
  }
  instrument::pool_destroy(reap);
  delete reap->check;
}

void forget_objects(strata_reap* reap) noexcept {
  {
    std::lock_guard lock(check_mutex());
    reap->check->objects.clear();
  }
  instrument::pool_destroy(reap);  // every object of the pool is gone at once
  instrument::pool_create(reap);
}

// The slow path's rare start: the reap's first allocation since it was made
// or cleared, or a checked reap. Out of line, so that the common slow path
// tests both in one instruction (testb on the head's flags).
[[gnu::noinline, gnu::cold]] void* malloc_unnoted_or_checked(strata_reap* reap, std::size_t size) noexcept {
  if (head_of(reap).flags & kClosedUntilNotedInUse) note_in_use(reap);
  if (is_checked(reap)) return checked_malloc(reap, size);
  return reap->malloc<false>(size);
}

// ---- one node of the tree ------------------------------------------------

void clear_one(strata_reap* reap) noexcept {
  if (is_checked(reap)) forget_objects(reap);
  reap->clear();
  reap->closeInline(kClosedUntilNotedInUse);  // the next allocation notes the reap in use
}

void destroy_one(strata_reap* reap) noexcept {
  if (reap->checked) stop_checking(reap);
  reap->releaseAll();
  void* const base = reap->mapping;
  const std::size_t bytes = reap->mapping_bytes;
  reap->~strata_reap();
  unmap_or_cache(base, bytes);
}

inline void* allocate_any(strata_reap* reap, std::size_t size) noexcept { return strata_reap_malloc(reap, size); }

}  // namespace

extern "C" {

strata_reap* strata_reap_create(strata_reap* parent) {
  const std::size_t bytes = round_to_pages(kHeaderBytes + kMaxColor + kHomeChunkBytes);
  void* base = map_hidden(bytes);  // ENOMEM on failure
  if (base == nullptr) return nullptr;
  instrument::expose(base, kHeaderBytes);
  const std::size_t color = next_color();
  void* const at = static_cast<char*>(base) + color;
  auto* reap = new (at) strata_reap;
  // The inline path finds the head at the reap's own address (first base).
  if (static_cast<void*>(static_cast<strata_reap_head*>(reap)) != at) std::abort();
  reap->version = STRATA_REAP_HEAD_VERSION;
  reap->useCursor(reap);  // the stream bumps through the public head
  reap->mapping = base;
  reap->mapping_bytes = bytes;
  reap->account(bytes);
  char* home = static_cast<char*>(base) + kHeaderBytes + color;
  reap->adoptHome(home, bytes - kHeaderBytes - color);
  reap->checked = checked_by_default();
  if (reap->checked) reap->closeInline(strata::layers::kInlineClosedChecked);  // every allocation is recorded
  if (reap->checked && !start_checking(reap)) {
    reap->~strata_reap();
    unmap_or_cache(base, bytes);
    errno = ENOMEM;
    return nullptr;
  }
  reap->closeInline(kClosedUntilNotedInUse);
  reap->attachTo(parent);
  return reap;
}

void strata_reap_destroy(strata_reap* reap) {
  if (reap == nullptr) return;
  reap->detach();
  reap->forEachPostOrder([](ReapHeap* node) { destroy_one(as_reap(node)); });
}

void strata_reap_clear(strata_reap* reap) {
  if (reap == nullptr) return;
  // Only reaps allocated from since their last clear (noteInUse) are visited.
  reap->forEachMarkedPreOrder([](ReapHeap* node) { clear_one(as_reap(node)); });
}

// Everything the inline window cannot serve: freed objects waiting, a window
// to slide or a new chunk, larger sizes, checked reaps.
// Every allocation after a clear comes here first (kClosedUntilNotedInUse keeps
// the window closed), so this is where a reap is flagged for the next clear.
void* strata_reap_malloc_slow(strata_reap* reap, size_t size) {
  if (head_of(reap).flags & (STRATA_REAP_SLOW_CHECKED | kClosedUntilNotedInUse)) [[unlikely]]
    return malloc_unnoted_or_checked(reap, size);
  return reap->malloc<false>(size);
}

void* strata_reap_calloc(strata_reap* reap, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* ptr = allocate_any(reap, bytes);
  if (ptr != nullptr) std::memset(ptr, 0, bytes);
  return ptr;
}

void strata_reap_free(strata_reap* reap, void* ptr) {
  if (ptr == nullptr) return;
  if (is_checked(reap)) [[unlikely]]
    return checked_free("strata_reap_free", reap, ptr);
  reap->free<false>(ptr);
}

size_t strata_reap_usable_size(const strata_reap* reap, const void* ptr) {
  if (ptr == nullptr) return 0;
  if (reap->checked) {
    std::lock_guard lock(check_mutex());
    require_live("strata_reap_usable_size", reap, ptr);
  }
  return reap->getSize(const_cast<void*>(ptr));
}

// An unchecked reap reads and writes tags with plain loads and stores (as
// free does): neither ASan nor Valgrind watches it.
void* strata_reap_realloc(strata_reap* reap, void* ptr, size_t size) {
  if (ptr == nullptr) return strata_reap_malloc(reap, size);
  std::size_t usable;
  if (is_checked(reap)) [[unlikely]] {
    {
      std::lock_guard lock(check_mutex());
      require_live("strata_reap_realloc", reap, ptr);
    }
    usable = reap->getSize(ptr);
    if (size <= usable) return ptr;
    // A checked reap keeps every object's recorded size, so it always moves.
  } else {
    usable = reap->getSize<false>(ptr);
    if (size <= usable) return ptr;  // grows and shrinks within its slot in place
    // The last object of the stream grows into the free space after it.
    if (reap->growLast<false>(ptr, size)) return ptr;
  }
  void* moved = allocate_any(reap, size);
  if (moved == nullptr) return nullptr;  // the old object stays as it was
  std::memcpy(moved, ptr, usable);
  strata_reap_free(reap, ptr);
  return moved;
}

void* strata_reap_aligned_alloc(strata_reap* reap, size_t alignment, size_t size) {
  if (!is_power_of_two(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  if (alignment <= strata::layers::kAlignment) return strata_reap_malloc(reap, size);
  note_in_use(reap);
  void* ptr = reap->mallocAligned(size, alignment);  // in the stream, after filler slots
  return reap->checked ? checked_record(reap, ptr) : ptr;
}

void strata_reap_get_stats(const strata_reap* reap, strata_reap_stats* stats) {
  stats->objects_live = reap->liveObjects();  // walks what was bumped inline since the last call
  stats->bytes_live = reap->liveBytes();
  stats->bytes_held = reap->bytesHeld();
  stats->chunks = reap->mappings();
}

}  // extern "C"
