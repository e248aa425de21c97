// Contender "pmr": std::pmr::monotonic_buffer_resource over new/delete (glibc
// malloc), release() as clear.  Called through a memory_resource& the compiler
// cannot see through, as a pmr container would call it.
#include <memory_resource>

#include "workload.hpp"

namespace {

struct Pmr {
  static constexpr const char* kName = "pmr";
  static constexpr bool kCanFree = false;  // deallocate() is a no-op
  static constexpr std::size_t kAlignment = 16;

  Pmr() : resource_ref(&monotonic) {
    asm volatile("" : "+r"(resource_ref));  // hide the dynamic type: no devirtualisation
  }
  void* alloc(std::size_t size) {
    try {
      return resource_ref->allocate(size, kAlignment);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }
  void free(void*, std::size_t) {}
  void clear() { monotonic.release(); }
  std::optional<std::size_t> held() const { return std::nullopt; }

  std::pmr::monotonic_buffer_resource monotonic{std::pmr::new_delete_resource()};
  std::pmr::memory_resource* resource_ref;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Pmr>(argc, argv); }
