// libFuzzer harness for the reap API (strata/reap.h, docs/fuzzing.md).
//
// A forest of up to kReaps reaps (roots and nested children; tagged or sized,
// the two kinds mixed in one tree) and the shared live-object model: each
// op-code byte picks create, destroy, clear, malloc, calloc, aligned_alloc,
// realloc, free, usable_size or a statistics check. A sized reap gets the
// _sized calls (free and realloc with the object's size; no usable_size).
// Clear drops the objects of the reap and of all its descendants from the
// model; destroy also ends those reaps (reap.h). Every object is checked byte
// by byte before it leaves the model, and every survivor after a clear or
// destroy: clearing one reap must not touch another's objects.
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "live_objects.hpp"
#include "strata/layers/region/sized_stream_heap.hpp"
#include "strata/reap.h"

namespace {

using namespace strata::fuzz;

// Which mode every reap must be in (reap.h, STRATA_REAP_SLOW_CHECKED): a
// build with ASan checks every reap, fuzz_reap_unchecked's library none.
enum class Mode { kChecked, kUnchecked, kEither };
#if defined(STRATA_FUZZ_REAP_UNCHECKED)
constexpr Mode kExpectedMode = Mode::kUnchecked;
#elif defined(__SANITIZE_ADDRESS__)
constexpr Mode kExpectedMode = Mode::kChecked;
#elif defined(__has_feature)
constexpr Mode kExpectedMode = __has_feature(address_sanitizer) ? Mode::kChecked : Mode::kEither;
#else
constexpr Mode kExpectedMode = Mode::kEither;
#endif

void check_mode(strata_reap* reap, bool sized) {
  const strata_reap_head* head = reinterpret_cast<const strata_reap_head*>(reap);
  const bool checked = ((sized ? head->sized.flags : head->flags) & STRATA_REAP_SLOW_CHECKED) != 0;
  if (kExpectedMode == Mode::kChecked) expect(checked, "reap not in checked mode under ASan", reap);
  if (kExpectedMode == Mode::kUnchecked) expect(!checked, "reap in checked mode without ASan", reap);
}

constexpr std::size_t kReapAlign = 16;  // reap.h: results are aligned to at least 16 bytes
constexpr int kReaps = 6;

constexpr std::size_t kSizedAlign = STRATA_REAP_SIZED_GRANULE;  // reap.h: strata_reap_malloc_sized's results

struct ReapNode {
  strata_reap* reap = nullptr;  // nullptr: the slot is empty
  int parent = -1;
  bool sized = false;  // strata_reap_create_sized
};

// What a sized reap's statistics count for an object of `size` bytes
// (bytes_live: its slot; the layer's contract, size 0 taking a granule).
std::size_t sized_slot(std::size_t size) {
  using namespace strata::layers;
  return sized_in_stream(size) ? sized_slot_taken(size) : sized_slot_of(size);
}

class ReapSession {
 public:
  explicit ReapSession(FuzzInput& in) : in_(in) {}

  void run() {
    while (!in_.done()) step(in_.byte());
    for (int r = 0; r < kReaps; ++r)
      if (reaps_[r].reap != nullptr && reaps_[r].parent < 0) destroy(r);
  }

 private:
  void step(std::uint8_t op) {
    switch (op % 10) {
      case 0: create(); break;
      case 1: if (const int r = pick_reap(); r >= 0) destroy(r); break;
      case 2: if (const int r = pick_reap(); r >= 0) clear(r); break;
      case 3: do_malloc(); break;
      case 4: do_calloc(); break;
      case 5: do_aligned_alloc(); break;
      case 6: do_realloc(); break;
      case 7: release(objects_.slot(in_.byte())); break;
      case 8: do_usable_size(); break;
      default: if (const int r = pick_reap(); r >= 0) check_stats(r); break;
    }
  }

  // ---- the tree of reaps ----------------------------------------------------

  // The reap a selector byte names, or -1 when that slot holds none.
  int pick_reap() {
    const int r = in_.byte() % kReaps;
    return reaps_[r].reap != nullptr ? r : -1;
  }

  // True when r is `ancestor` or lies below it.
  bool in_subtree(int r, int ancestor) const {
    for (; r >= 0; r = reaps_[r].parent)
      if (r == ancestor) return true;
    return false;
  }

  void create() {
    const int r = in_.byte() % kReaps;
    const int p = in_.byte() % (2 * (kReaps + 1));   // modulo kReaps + 1: kReaps, or an empty slot: a root
    const bool sized = (p / (kReaps + 1)) % 2 == 1;  // the byte's high part picks the kind
    if (reaps_[r].reap != nullptr) return;
    const int parent = p % (kReaps + 1) < kReaps && reaps_[p % (kReaps + 1)].reap != nullptr ? p % (kReaps + 1) : -1;
    strata_reap* under = parent >= 0 ? reaps_[parent].reap : nullptr;
    strata_reap* reap = sized ? strata_reap_create_sized(under) : strata_reap_create(under);
    expect(reap != nullptr, "strata_reap_create failed: slot, parent", nullptr, static_cast<std::size_t>(r),
           static_cast<std::size_t>(parent + 1));
    check_mode(reap, sized);
    reaps_[r] = {reap, parent, sized};
  }

  // Verifies and forgets every object held by the subtree of r: a clear or
  // destroy of r frees them all.
  void drop_objects_of(int r) {
    objects_.for_each_live([&](LiveObject& o) {
      if (!in_subtree(o.owner, r)) return;
      verify(o);
      LiveObjects::forget(o);
    });
  }

  void clear(int r) {
    drop_objects_of(r);
    strata_reap_clear(reaps_[r].reap);
    objects_.verify_all();
  }

  void destroy(int r) {
    drop_objects_of(r);
    strata_reap_destroy(reaps_[r].reap);
    std::array<bool, kReaps> gone{};  // decided before any slot is emptied: the parent links are still intact
    for (int d = 0; d < kReaps; ++d) gone[d] = reaps_[d].reap != nullptr && in_subtree(d, r);
    for (int d = 0; d < kReaps; ++d)
      if (gone[d]) reaps_[d] = {};
    objects_.verify_all();
  }

  // ---- objects ----------------------------------------------------------------

  void release(LiveObject& o) {
    if (!o.live()) return;
    verify(o);
    if (reaps_[o.owner].sized)
      strata_reap_free_sized(reaps_[o.owner].reap, o.ptr, o.size);
    else
      strata_reap_free(reaps_[o.owner].reap, o.ptr);
    LiveObjects::forget(o);
  }

  void check_fresh(int r, void* p, std::size_t size, std::size_t align) const {
    expect(p != nullptr, "reap allocation failed: size, alignment", p, size, align);
    expect(reinterpret_cast<std::uintptr_t>(p) % align == 0, "misaligned: size, alignment", p, size, align);
    if (reaps_[r].sized) return;  // a sized reap keeps no sizes
    const std::size_t usable = strata_reap_usable_size(reaps_[r].reap, p);
    expect(usable >= size, "usable_size below the request: usable, size", p, usable, size);
  }

  // The slot a new object goes to (its old object freed) and the reap it
  // comes from; -1 when the selected reap slot is empty.
  int prepare(LiveObject*& o) {
    o = &objects_.slot(in_.byte());
    release(*o);
    return pick_reap();
  }

  void do_malloc() {
    LiveObject* o;
    const int r = prepare(o);
    const std::size_t size = in_.request_size();
    if (r < 0 || (size > kMostServed && size < kAbsurdSize)) return;
    errno = 0;
    const bool sized = reaps_[r].sized && in_.byte() % 4 != 0;  // strata_reap_malloc works on a sized reap too
    void* p = sized ? strata_reap_malloc_sized(reaps_[r].reap, size) : strata_reap_malloc(reaps_[r].reap, size);
    if (size >= kAbsurdSize) return expect_refused(p, ENOMEM, size);
    check_fresh(r, p, size, sized ? kSizedAlign : kReapAlign);
    objects_.adopt(*o, p, size, r);
  }

  void do_calloc() {
    LiveObject* o;
    const int r = prepare(o);
    const std::size_t count = in_.calloc_count();
    const std::size_t size = in_.request_size();
    std::size_t bytes = 0;
    const bool refuse = __builtin_mul_overflow(count, size, &bytes) || bytes >= kAbsurdSize;
    if (r < 0 || (!refuse && bytes > kMostServed)) return;
    errno = 0;
    void* p = strata_reap_calloc(reaps_[r].reap, count, size);
    if (refuse) return expect_refused(p, ENOMEM, bytes);
    check_fresh(r, p, bytes, kReapAlign);
    verify_zero(p, bytes);
    objects_.adopt(*o, p, bytes, r);
  }

  void do_aligned_alloc() {
    LiveObject* o;
    const int r = prepare(o);
    const std::size_t align = in_.alignment();
    const std::size_t size = in_.request_size();
    const bool valid = is_power_of_two(align);
    if (r < 0 || (valid && size > kMostServed && size < kAbsurdSize)) return;
    errno = 0;
    void* p = strata_reap_aligned_alloc(reaps_[r].reap, align, size);
    if (!valid) return expect_refused(p, EINVAL, size);
    if (size >= kAbsurdSize) return expect_refused(p, ENOMEM, size);
    check_fresh(r, p, size, std::max(align, reaps_[r].sized ? kSizedAlign : kReapAlign));
    objects_.adopt(*o, p, size, r);
  }

  // realloc stays in the object's own reap; an empty slot is realloc(NULL) in a picked reap.
  void do_realloc() {
    LiveObject& o = objects_.slot(in_.byte());
    const int picked = pick_reap();
    const int r = o.live() ? o.owner : picked;
    const std::size_t size = in_.request_size();
    if (r < 0 || (size > kMostServed && size < kAbsurdSize)) return;
    if (o.live()) verify(o);
    errno = 0;
    const bool sized = reaps_[r].sized;
    void* p = sized ? strata_reap_realloc_sized(reaps_[r].reap, o.ptr, o.live() ? o.size : 0, size)
                    : strata_reap_realloc(reaps_[r].reap, o.ptr, size);
    if (size >= kAbsurdSize) {
      expect_refused(p, ENOMEM, size);
      if (o.live()) verify(o);  // a failed realloc leaves the object as it was
      return;
    }
    check_fresh(r, p, size, sized ? kSizedAlign : kReapAlign);
    if (o.live()) return LiveObjects::moved(o, p, size);
    objects_.adopt(o, p, size, r);
  }

  void do_usable_size() {
    LiveObject& o = objects_.slot(in_.byte());
    if (!o.live() || reaps_[o.owner].sized) return;
    verify(o);
    const std::size_t usable = strata_reap_usable_size(reaps_[o.owner].reap, o.ptr);
    expect(usable >= o.size, "usable_size shrank: usable, size", o.ptr, usable, o.size);
    LiveObjects::grow_to(o, usable);
  }

  // The reap's own count of live objects and bytes must match the model's.
  // A sized reap counts the slots' bytes (no objects).
  void check_stats(int r) {
    std::size_t objects = 0;
    std::size_t bytes = 0;
    objects_.for_each_live([&](LiveObject& o) {
      if (o.owner != r) return;
      ++objects;
      bytes += reaps_[r].sized ? sized_slot(o.size) : strata_reap_usable_size(reaps_[r].reap, o.ptr);
    });
    strata_reap_stats stats;
    strata_reap_get_stats(reaps_[r].reap, &stats);
    if (reaps_[r].sized) {
      expect(stats.objects_live == STRATA_REAP_UNCOUNTED, "stats: a sized reap counted objects", reaps_[r].reap);
      expect(stats.bytes_live == bytes, "stats: bytes_live, model", reaps_[r].reap, stats.bytes_live, bytes);
      return;
    }
    expect(stats.objects_live == objects, "stats: objects_live, model", reaps_[r].reap, stats.objects_live, objects);
    expect(stats.bytes_live == bytes, "stats: bytes_live, model", reaps_[r].reap, stats.bytes_live, bytes);
  }

  FuzzInput& in_;
  LiveObjects objects_;
  std::array<ReapNode, kReaps> reaps_{};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  ReapSession(in).run();
  return 0;
}
