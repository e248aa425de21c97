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

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>
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

// Objects of one checked reap: live or freed, and the size asked (a sized
// reap's free must give it back).
struct CheckedObject {
  bool live;
  std::size_t size;
};
struct CheckedObjects {
  std::unordered_map<const void*, CheckedObject> objects;
};

}  // namespace

// The public head first (the inline paths read it at the reap's address),
// then the tree's links, then (in TaggedReap or SizedReap) the layer chain.
struct strata_reap : strata_reap_head, ReapTree {
  bool is_sized = false;  // a sized reap (SizedReap), else a tagged one (TaggedReap)
  bool checked = false;
  CheckedObjects* check = nullptr;
  void* mapping = nullptr;         // the reap's own mapping: this header (colored) + the home chunk
  std::size_t mapping_bytes = 0;
};

namespace {

struct TaggedReap final : strata_reap {
  TaggedReapHeap heap;
};
struct SizedReap final : strata_reap {
  SizedReapHeap heap;
};

TaggedReapHeap& tagged(strata_reap* reap) noexcept { return static_cast<TaggedReap*>(reap)->heap; }
const TaggedReapHeap& tagged(const strata_reap* reap) noexcept { return static_cast<const TaggedReap*>(reap)->heap; }
SizedReapHeap& sized(strata_reap* reap) noexcept { return static_cast<SizedReap*>(reap)->heap; }
const SizedReapHeap& sized(const strata_reap* reap) noexcept { return static_cast<const SizedReap*>(reap)->heap; }

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
constexpr std::size_t kHeaderBytes = align_up(std::max(sizeof(TaggedReap), sizeof(SizedReap)) + kMaxColor, 4096);
// The home chunk keeps at least this much whatever the colour (the mapping
// has room for the largest one).
constexpr std::size_t kHomeChunkBytes = 8 * 1024;

std::size_t next_color() noexcept {
  static std::atomic<unsigned> reaps{0};
  return reaps.fetch_add(1, std::memory_order_relaxed) % kColors * kColorStep;
}

strata_reap* as_reap(ReapTree* node) noexcept { return static_cast<strata_reap*>(node); }

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
static_assert((kClosedUntilNotedInUse & (STRATA_REAP_SLOW_CHECKED | STRATA_REAP_SLOW_FREED | STRATA_REAP_SLOW_EMULATOR |
                                         STRATA_REAP_SLOW_SIZED)) == 0);

// Flags the reap for the next clear of any ancestor; the window opens
// (unless another flag holds).
void note_in_use(strata_reap* reap) noexcept {
  reap->noteInUse();
  if (reap->is_sized)
    sized(reap).openInline(kClosedUntilNotedInUse);
  else
    tagged(reap).openInline(kClosedUntilNotedInUse);
}

void close_inline(strata_reap* reap, std::uint32_t reason) noexcept {
  if (reap->is_sized)
    sized(reap).closeInline(reason);
  else
    tagged(reap).closeInline(reason);
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

[[noreturn]] void wrong_size(const char* call, const strata_reap* reap, const void* ptr, std::size_t given,
                             const char* expected, std::size_t size) {
  char what[160];
  std::snprintf(what, sizeof what, "wrong size: freed with %zu bytes, %s %zu", given, expected, size);
  misuse(call, reap, ptr, what);
}

// Aborts unless ptr is a live object of reap; returns it. Caller holds check_mutex.
CheckedObject& require_live(const char* call, const strata_reap* reap, const void* ptr) {
  auto& objects = reap->check->objects;
  auto it = objects.find(ptr);
  if (it != objects.end() && it->second.live) return it->second;
  for (const strata_reap* other : checked_reaps()) {
    if (other == reap) continue;
    auto o = other->check->objects.find(ptr);
    if (o != other->check->objects.end() && o->second.live)
      misuse(call, reap, ptr, "wrong reap: the object belongs to reap", other);
  }
  if (it != objects.end()) misuse(call, reap, ptr, "double free: the object was freed already");
  misuse(call, reap, ptr, "foreign pointer: never returned by this reap (or freed by a clear)");
}

// The bytes ASan and Valgrind let the user touch: a tagged object's usable
// size, a sized one's size exactly.
std::size_t exposed_size(strata_reap* reap, void* ptr, std::size_t size) noexcept {
  return reap->is_sized ? size : tagged(reap).getSize(ptr);
}

[[gnu::noinline]] void* checked_record(strata_reap* reap, void* ptr, std::size_t size) noexcept {
  if (ptr == nullptr) return nullptr;
  try {
    std::lock_guard lock(check_mutex());
    reap->check->objects[ptr] = CheckedObject{true, size};
  } catch (...) {
    if (reap->is_sized)
      sized(reap).free<true>(ptr, size);
    else
      tagged(reap).free<true>(ptr);
    errno = ENOMEM;
    return nullptr;
  }
  instrument::object_alloc(reap, ptr, exposed_size(reap, ptr, size));
  return ptr;
}

// Out of line and cold, like checked_free: the unchecked slow path then needs
// no stack frame of its own.
[[gnu::noinline, gnu::cold]] void* checked_malloc(strata_reap* reap, std::size_t size) noexcept {
  if (reap->is_sized) return checked_record(reap, sized(reap).malloc<true>(size), size);
  return checked_record(reap, tagged(reap).malloc<true>(size), size);
}

[[gnu::noinline, gnu::cold]] void checked_free(const char* call, strata_reap* reap, void* ptr) {
  {
    std::lock_guard lock(check_mutex());
    require_live(call, reap, ptr).live = false;
  }
  instrument::object_free(reap, ptr, tagged(reap).getSize(ptr));
  tagged(reap).free<true>(ptr);
}

// A checked reap of either kind freed with a size: the size must be the one
// asked (a sized reap) or fit the object (a tagged reap, whose tag knows only
// its slot).
[[gnu::noinline, gnu::cold]] void checked_free_sized(const char* call, strata_reap* reap, void* ptr, std::size_t size) {
  {
    std::lock_guard lock(check_mutex());
    CheckedObject& object = require_live(call, reap, ptr);
    if (reap->is_sized && size != object.size) wrong_size(call, reap, ptr, size, "allocated with", object.size);
    if (!reap->is_sized && size > tagged(reap).getSize(ptr))
      wrong_size(call, reap, ptr, size, "the object holds", tagged(reap).getSize(ptr));
    object.live = false;
  }
  instrument::object_free(reap, ptr, exposed_size(reap, ptr, size));
  if (reap->is_sized)
    sized(reap).free<true>(ptr, size);
  else
    tagged(reap).free<true>(ptr);
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

// A sized reap's object aligned to `alignment` (strata_reap_malloc,
// aligned_alloc on a sized reap).
void* sized_malloc_aligned(strata_reap* reap, std::size_t size, std::size_t alignment) noexcept {
  note_in_use(reap);
  void* ptr = sized(reap).mallocAligned(size, alignment);
  return reap->checked ? checked_record(reap, ptr, size) : ptr;
}

// The slow path's rare start: the reap's first allocation since it was made
// or cleared, a checked reap, or a sized one (whose tagged window never
// opens). Out of line, so that the common slow path tests all in one
// instruction (testb on the head's flags).
[[gnu::noinline, gnu::cold]] void* malloc_unnoted_or_checked(strata_reap* reap, std::size_t size) noexcept {
  if (reap->is_sized) return sized_malloc_aligned(reap, size, strata::layers::kAlignment);
  if (head_of(reap).flags & kClosedUntilNotedInUse) note_in_use(reap);
  if (is_checked(reap)) return checked_malloc(reap, size);
  return tagged(reap).malloc<false>(size);
}

// The sized slow path's rare start (as above, for the head's sized window):
// a tagged reap (its sized window never opens), a checked reap, or the
// first allocation since the reap was made or cleared.
[[gnu::noinline, gnu::cold]] void* malloc_sized_unusual(strata_reap* reap, std::size_t size) noexcept {
  if (!reap->is_sized) return strata_reap_malloc(reap, size);
  if (head_of(reap).sized.flags & kClosedUntilNotedInUse) note_in_use(reap);
  if (reap->checked) return checked_malloc(reap, size);
  return sized(reap).malloc<false>(size);
}

// ---- one node of the tree ------------------------------------------------

void clear_one(strata_reap* reap) noexcept {
  if (reap->checked) forget_objects(reap);
  if (reap->is_sized)
    sized(reap).clear();
  else
    tagged(reap).clear();
  close_inline(reap, kClosedUntilNotedInUse);  // the next allocation notes the reap in use
}

// Runs the destructor of the reap's own kind.
void destruct(strata_reap* reap) noexcept {
  if (reap->is_sized)
    static_cast<SizedReap*>(reap)->~SizedReap();
  else
    static_cast<TaggedReap*>(reap)->~TaggedReap();
}

void destroy_one(strata_reap* reap) noexcept {
  if (reap->checked) stop_checking(reap);
  if (reap->is_sized)
    sized(reap).releaseAll();
  else
    tagged(reap).releaseAll();
  void* const base = reap->mapping;
  const std::size_t bytes = reap->mapping_bytes;
  destruct(reap);
  unmap_or_cache(base, bytes);
}

// The heap of either kind placed at `at` in a fresh mapping; the head's
// window of the other kind closed for good.
template <class Reap>
void set_up(Reap* reap, void* base, std::size_t bytes, std::size_t color) noexcept {
  reap->version = STRATA_REAP_HEAD_VERSION;
  if constexpr (std::is_same_v<Reap, SizedReap>) {
    reap->bump = reap->limit = 0;
    reap->flags = STRATA_REAP_SLOW_SIZED;  // no tagged inline path
    reap->is_sized = true;
    reap->heap.useCursor(&reap->strata_reap_head::sized);
  } else {
    reap->strata_reap_head::sized = strata_reap_sized_cursor{0, 0, STRATA_REAP_SLOW_SIZED, 0};
    reap->heap.useCursor(reap);  // the stream bumps through the public head
  }
  reap->mapping = base;
  reap->mapping_bytes = bytes;
  reap->heap.account(bytes);
  char* home = static_cast<char*>(base) + kHeaderBytes + color;
  reap->heap.adoptHome(home, bytes - kHeaderBytes - color);
  reap->checked = checked_by_default();
  if (reap->checked) reap->heap.closeInline(strata::layers::kInlineClosedChecked);  // every allocation is recorded
}

strata_reap* create_reap(strata_reap* parent, bool sized_reap) noexcept {
  const std::size_t bytes = round_to_pages(kHeaderBytes + kMaxColor + kHomeChunkBytes);
  void* base = map_hidden(bytes);  // ENOMEM on failure
  if (base == nullptr) return nullptr;
  instrument::expose(base, kHeaderBytes);
  const std::size_t color = next_color();
  void* const at = static_cast<char*>(base) + color;
  strata_reap* reap;
  if (sized_reap) {
    auto* r = new (at) SizedReap;
    set_up(r, base, bytes, color);
    reap = r;
  } else {
    auto* r = new (at) TaggedReap;
    set_up(r, base, bytes, color);
    reap = r;
  }
  // The inline paths find the head at the reap's own address (first base).
  if (static_cast<void*>(static_cast<strata_reap_head*>(reap)) != at) std::abort();
  if (reap->checked && !start_checking(reap)) {
    destruct(reap);
    unmap_or_cache(base, bytes);
    errno = ENOMEM;
    return nullptr;
  }
  close_inline(reap, kClosedUntilNotedInUse);
  reap->attachTo(parent);
  return reap;
}

[[gnu::noinline, gnu::cold]] void free_unusual(strata_reap* reap, void* ptr) {
  if (reap->is_sized)
    misuse("strata_reap_free", reap, ptr, "a sized reap: free with the size (strata_reap_free_sized)");
  checked_free("strata_reap_free", reap, ptr);
}

[[noreturn]] void needs_size(const char* call, const strata_reap* reap, const void* ptr) {
  misuse(call, reap, ptr, "a sized reap keeps no sizes: use the _sized call");
}

inline void* allocate_any(strata_reap* reap, std::size_t size) noexcept { return strata_reap_malloc(reap, size); }

}  // namespace

extern "C" {

strata_reap* strata_reap_create(strata_reap* parent) { return create_reap(parent, false); }

strata_reap* strata_reap_create_sized(strata_reap* parent) { return create_reap(parent, true); }

void strata_reap_destroy(strata_reap* reap) {
  if (reap == nullptr) return;
  reap->detach();
  reap->forEachPostOrder([](ReapTree* node) { destroy_one(as_reap(node)); });
}

void strata_reap_clear(strata_reap* reap) {
  if (reap == nullptr) return;
  // Only reaps allocated from since their last clear (noteInUse) are visited.
  reap->forEachMarkedPreOrder([](ReapTree* node) { clear_one(as_reap(node)); });
}

// Everything the inline window cannot serve: freed objects waiting, a window
// to slide or a new chunk, larger sizes, checked reaps.
// Every allocation after a clear comes here first (kClosedUntilNotedInUse keeps
// the window closed), so this is where a reap is flagged for the next clear.
void* strata_reap_malloc_slow(strata_reap* reap, size_t size) {
  if (head_of(reap).flags & (STRATA_REAP_SLOW_CHECKED | kClosedUntilNotedInUse | STRATA_REAP_SLOW_SIZED)) [[unlikely]]
    return malloc_unnoted_or_checked(reap, size);
  return tagged(reap).malloc<false>(size);
}

// The sized window's slow path: the same, for a sized reap.
void* strata_reap_malloc_sized_slow(strata_reap* reap, size_t size) {
  if (head_of(reap).sized.flags & (STRATA_REAP_SLOW_CHECKED | kClosedUntilNotedInUse | STRATA_REAP_SLOW_SIZED))
      [[unlikely]]
    return malloc_sized_unusual(reap, size);
  return sized(reap).malloc<false>(size);
}

void strata_reap_free_sized(strata_reap* reap, void* ptr, size_t size) {
  if (ptr == nullptr) return;
  if (head_of(reap).sized.flags & (STRATA_REAP_SLOW_CHECKED | STRATA_REAP_SLOW_SIZED)) [[unlikely]] {
    if (reap->checked) return checked_free_sized("strata_reap_free_sized", reap, ptr, size);
    return tagged(reap).free<false>(ptr);  // a tagged reap: its tag knows the size
  }
  sized(reap).free<false>(ptr, size);
}

void* strata_reap_realloc_sized(strata_reap* reap, void* ptr, size_t old_size, size_t new_size) {
  if (!reap->is_sized) {
    if (ptr != nullptr && reap->checked) {
      std::lock_guard lock(check_mutex());
      require_live("strata_reap_realloc_sized", reap, ptr);
      if (old_size > tagged(reap).getSize(ptr))
        wrong_size("strata_reap_realloc_sized", reap, ptr, old_size, "the object holds", tagged(reap).getSize(ptr));
    }
    return strata_reap_realloc(reap, ptr, new_size);
  }
  if (ptr == nullptr) return strata_reap_malloc_sized(reap, new_size);
  using strata::layers::sized_in_stream;
  using strata::layers::sized_slot_taken;
  if (reap->checked) {
    std::lock_guard lock(check_mutex());
    const CheckedObject& object = require_live("strata_reap_realloc_sized", reap, ptr);
    if (object.size != old_size)
      wrong_size("strata_reap_realloc_sized", reap, ptr, old_size, "allocated with", object.size);
    // A checked reap keeps every object's recorded size: it always moves.
  } else if (sized_in_stream(old_size) && sized_in_stream(new_size)) {
    const std::size_t old_slot = sized_slot_taken(old_size), new_slot = sized_slot_taken(new_size);
    // The last object of the stream grows and shrinks at the bump.
    if (sized(reap).resizeLast(ptr, old_slot, new_slot)) return ptr;
    if (new_slot <= old_slot) {  // shrinks where it is; its tail waits for reuse
      if (new_slot < old_slot) sized(reap).free<false>(static_cast<char*>(ptr) + new_slot, old_slot - new_slot);
      return ptr;
    }
  }
  void* moved = strata_reap_malloc_sized(reap, new_size);
  if (moved == nullptr) return nullptr;  // the old object stays as it was
  std::memcpy(moved, ptr, std::min(old_size, new_size));
  strata_reap_free_sized(reap, ptr, old_size);
  return moved;
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
  if (head_of(reap).flags & (STRATA_REAP_SLOW_CHECKED | STRATA_REAP_SLOW_SIZED)) [[unlikely]]
    return free_unusual(reap, ptr);
  tagged(reap).free<false>(ptr);
}

size_t strata_reap_usable_size(const strata_reap* reap, const void* ptr) {
  if (ptr == nullptr) return 0;
  if (reap->is_sized) needs_size("strata_reap_usable_size", reap, ptr);
  if (reap->checked) {
    std::lock_guard lock(check_mutex());
    require_live("strata_reap_usable_size", reap, ptr);
  }
  return tagged(reap).getSize(const_cast<void*>(ptr));
}

// An unchecked reap reads and writes tags with plain loads and stores (as
// free does): neither ASan nor Valgrind watches it.
void* strata_reap_realloc(strata_reap* reap, void* ptr, size_t size) {
  if (ptr == nullptr) return strata_reap_malloc(reap, size);
  if (reap->is_sized) needs_size("strata_reap_realloc", reap, ptr);
  std::size_t usable;
  if (is_checked(reap)) [[unlikely]] {
    {
      std::lock_guard lock(check_mutex());
      require_live("strata_reap_realloc", reap, ptr);
    }
    usable = tagged(reap).getSize(ptr);
    if (size <= usable) return ptr;
    // A checked reap keeps every object's recorded size, so it always moves.
  } else {
    usable = tagged(reap).getSize<false>(ptr);
    if (size <= usable) return ptr;  // grows and shrinks within its slot in place
    // The last object of the stream grows into the free space after it.
    if (tagged(reap).growLast<false>(ptr, size)) return ptr;
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
  if (reap->is_sized) return sized_malloc_aligned(reap, size, alignment);
  if (alignment <= strata::layers::kAlignment) return strata_reap_malloc(reap, size);
  note_in_use(reap);
  void* ptr = tagged(reap).mallocAligned(size, alignment);  // in the stream, after filler slots
  return reap->checked ? checked_record(reap, ptr, size) : ptr;
}

void strata_reap_get_stats(const strata_reap* reap, strata_reap_stats* stats) {
  if (reap->is_sized) {
    const SizedReapHeap& heap = sized(reap);
    stats->objects_live = STRATA_REAP_UNCOUNTED;  // nothing records where an object ends
    stats->bytes_live = heap.liveBytes();
    stats->bytes_held = heap.bytesHeld();
    stats->chunks = heap.mappings();
    return;
  }
  const TaggedReapHeap& heap = tagged(reap);
  stats->objects_live = heap.liveObjects();  // walks what was bumped inline since the last call
  stats->bytes_live = heap.liveBytes();
  stats->bytes_held = heap.bytesHeld();
  stats->chunks = heap.mappings();
}

}  // extern "C"
