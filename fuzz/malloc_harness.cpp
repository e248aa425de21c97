// libFuzzer harness for libstrata's malloc API (strata/strata.h, docs/fuzzing.md).
//
// The input is a program for a small interpreter: each op-code byte picks one
// call, the bytes after it its slot in the live-object table and its
// arguments. Every result is checked against the C rules (alignment,
// usable_size >= the request, calloc zeroes, realloc keeps the prefix,
// absurd sizes give NULL + ENOMEM) and every live byte against the model.
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "live_objects.hpp"
#include "strata/strata.h"

namespace {

using namespace strata::fuzz;

constexpr std::size_t kMinAlign = 16;  // every libstrata object

enum class Outcome { kServe, kRefuse, kSkip };

// Whether a request of `bytes` must succeed, must fail with ENOMEM, or is not tried.
Outcome outcome_of(std::size_t bytes) {
  if (bytes >= kAbsurdSize) return Outcome::kRefuse;
  return bytes <= kMostServed ? Outcome::kServe : Outcome::kSkip;
}

void check_fresh(void* p, std::size_t size, std::size_t align) {
  expect(p != nullptr, "allocation failed: size, alignment", p, size, align);
  expect(reinterpret_cast<std::uintptr_t>(p) % std::max(align, kMinAlign) == 0, "misaligned: size, alignment", p,
         size, align);
  expect(strata_usable_size(p) >= size, "usable_size below the request: usable, size", p, strata_usable_size(p),
         size);
}

class MallocSession {
 public:
  explicit MallocSession(FuzzInput& in) : in_(in) {}

  void run() {
    while (!in_.done()) step(in_.byte());
    objects_.for_each_live([](LiveObject& o) { release(o); });
  }

 private:
  void step(std::uint8_t op) {
    switch (op % 10) {
      case 0: do_malloc(); break;
      case 1: do_calloc(); break;
      case 2: do_realloc(); break;
      case 3: release(objects_.slot(in_.byte())); break;
      case 4: do_posix_memalign(); break;
      case 5: do_aligned_alloc(); break;
      case 6: do_usable_size(); break;
      case 7: do_resize(); break;
      case 8: do_burst(); break;
      default: release_range(); break;
    }
  }

  static void release(LiveObject& o) {
    if (!o.live()) return strata_free(nullptr);
    verify(o);
    strata_free(o.ptr);
    LiveObjects::forget(o);
  }

  // A slot about to receive a new object gives its old one back first.
  LiveObject& empty_slot() {
    LiveObject& o = objects_.slot(in_.byte());
    release(o);
    return o;
  }

  void do_malloc() {
    LiveObject& o = empty_slot();
    const std::size_t size = in_.request_size();
    const Outcome outcome = outcome_of(size);
    if (outcome == Outcome::kSkip) return;
    errno = 0;
    void* p = strata_malloc(size);
    if (outcome == Outcome::kRefuse) return expect_refused(p, ENOMEM, size);
    check_fresh(p, size, kMinAlign);
    objects_.adopt(o, p, size);
  }

  void do_calloc() {
    LiveObject& o = empty_slot();
    const std::size_t count = in_.calloc_count();
    const std::size_t size = in_.request_size();
    std::size_t bytes = 0;
    const bool overflows = __builtin_mul_overflow(count, size, &bytes);
    const Outcome outcome = overflows ? Outcome::kRefuse : outcome_of(bytes);
    if (outcome == Outcome::kSkip) return;
    errno = 0;
    void* p = strata_calloc(count, size);
    if (outcome == Outcome::kRefuse) return expect_refused(p, ENOMEM, bytes);
    check_fresh(p, bytes, kMinAlign);
    verify_zero(p, bytes);
    objects_.adopt(o, p, bytes);
  }

  // realloc of an empty slot is realloc(NULL, size): a malloc.
  void do_realloc() {
    LiveObject& o = objects_.slot(in_.byte());
    realloc_to(o, in_.request_size());
  }

  // realloc by a step from the current size: the in-place paths around it.
  void do_resize() {
    LiveObject& o = objects_.slot(in_.byte());
    const std::uint8_t b = in_.byte();
    const std::size_t step = std::size_t{1} << (b >> 4);
    if (o.live()) realloc_to(o, b & 1 ? o.size + step : o.size - std::min(o.size, step));
  }

  void realloc_to(LiveObject& o, std::size_t size) {
    const Outcome outcome = outcome_of(size);
    if (outcome == Outcome::kSkip) return;
    if (o.live()) verify(o);
    errno = 0;
    void* p = strata_realloc(o.ptr, size);
    if (outcome == Outcome::kRefuse) {
      expect_refused(p, ENOMEM, size);
      if (o.live()) verify(o);  // a failed realloc leaves the object as it was
      return;
    }
    check_fresh(p, size, kMinAlign);
    if (o.live()) return LiveObjects::moved(o, p, size);
    objects_.adopt(o, p, size);
  }

  // Many objects of one small size in consecutive slots: enough to fill a
  // page of its class, and (freed by release_range) to empty it again.
  void do_burst() {
    const std::uint8_t first = in_.byte();
    const std::size_t count = in_.byte();
    const std::size_t size = std::size_t{in_.byte()} * 4;
    for (std::size_t i = 0; i < count; ++i) {
      LiveObject& o = objects_.slot(static_cast<std::uint8_t>(first + i));
      release(o);
      void* p = strata_malloc(size);
      check_fresh(p, size, kMinAlign);
      objects_.adopt(o, p, size);
    }
  }

  // Frees every stride-th slot from `first` on: pages emptied in any order.
  void release_range() {
    const std::uint8_t first = in_.byte();
    const std::size_t count = in_.byte();
    const std::size_t stride = in_.byte() % 4 + 1;
    for (std::size_t i = 0; i < count; ++i) release(objects_.slot(static_cast<std::uint8_t>(first + i * stride)));
  }

  void do_posix_memalign() {
    LiveObject& o = empty_slot();
    const std::size_t align = in_.alignment();
    const std::size_t size = in_.request_size();
    const bool valid = is_power_of_two(align) && align >= sizeof(void*);
    const Outcome outcome = valid ? outcome_of(size) : Outcome::kRefuse;
    if (outcome == Outcome::kSkip) return;
    void* p = &o;  // must stay untouched on failure
    const int error = strata_posix_memalign(&p, align, size);
    if (outcome == Outcome::kRefuse) {
      expect(error == (valid ? ENOMEM : EINVAL), "posix_memalign: wrong error: error, alignment", nullptr,
             static_cast<std::size_t>(error), align);
      expect(p == &o, "posix_memalign wrote *out on failure: size, alignment", p, size, align);
      return;
    }
    expect(error == 0, "posix_memalign failed: error, size", nullptr, static_cast<std::size_t>(error), size);
    check_fresh(p, size, align);
    objects_.adopt(o, p, size);
  }

  void do_aligned_alloc() {
    LiveObject& o = empty_slot();
    const std::size_t align = in_.alignment();
    const std::size_t size = in_.request_size();
    const bool valid = is_power_of_two(align);
    const Outcome outcome = valid ? outcome_of(size) : Outcome::kRefuse;
    if (outcome == Outcome::kSkip) return;
    errno = 0;
    void* p = strata_aligned_alloc(align, size);
    if (outcome == Outcome::kRefuse) return expect_refused(p, valid ? ENOMEM : EINVAL, size);
    check_fresh(p, size, align);
    objects_.adopt(o, p, size);
  }

  // The slack usable_size reports is the caller's to use: the model fills it.
  void do_usable_size() {
    LiveObject& o = objects_.slot(in_.byte());
    if (!o.live()) return expect(strata_usable_size(nullptr) == 0, "usable_size(NULL) != 0");
    verify(o);
    const std::size_t usable = strata_usable_size(o.ptr);
    expect(usable >= o.size, "usable_size shrank: usable, size", o.ptr, usable, o.size);
    LiveObjects::grow_to(o, usable);
  }

  FuzzInput& in_;
  LiveObjects objects_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  MallocSession(in).run();
  return 0;
}
