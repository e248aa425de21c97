// STRATA_SHOW_STATS and strata_stats_print: what every layer holds, read
// without the owners' cooperation (exact at exit, approximate while other
// threads run: statistics, not bookkeeping).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>

#include "allocator.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "os.hpp"
#include "per_thread_heap.hpp"
#include "report.hpp"
#include "size_classes.hpp"

namespace strata::malloc_detail {

namespace {

struct ClassTotals {
  std::size_t blocks = 0, full = 0, os_pages = 0, live = 0, remote = 0;
};

struct SmallTotals {
  ClassTotals classes[kClassCount];
  std::size_t heaps = 0, abandoned = 0, retained = 0, largest_limit = 0;
};

void add_page(ClassTotals& totals, const Page* page) noexcept {
  std::size_t bumped = static_cast<std::size_t>(page->bump - page->start());
  std::size_t reached = (bumped + cfg::kOsPageSize - 1) / cfg::kOsPageSize;
  totals.blocks += 1;
  totals.os_pages += reached > page->touched_pages ? reached : page->touched_pages;
  totals.live += std::size_t{page->used()} * page->block_size;
  // Objects other threads freed that the owner has not collected yet (counted
  // in used() too): what remote frees hold back from reuse.
  std::uintptr_t remote = page->remote().load(std::memory_order_relaxed);
  if (remote != kReclaimedBlock) totals.remote += std::size_t{remote_count(remote)} * page->block_size;
  totals.full += page->full();
}

void add_heap(SmallTotals& totals, const PerThreadHeap* heap) noexcept {
  ++totals.heaps;
  totals.abandoned += heap->abandoned;
  totals.retained += heap->empty_pages.count;
  if (heap->retain_limit > totals.largest_limit) totals.largest_limit = heap->retain_limit;
  for (std::size_t cls = 0; cls < kClassCount; ++cls)
    for (const PageList* list : {&heap->queues[cls].available, &heap->queues[cls].full})
      for (const Page* page = list->front(); page; page = PageList::next(page)) add_page(totals.classes[cls], page);
}

// The per-class table, then the small objects' summary line.
void print_small(Report& r, const SmallTotals& totals) noexcept {
  r.str("  class    size  blocks    full  os-pages    live-bytes  remote-bytes\n");
  std::size_t small_live = 0;
  for (std::size_t cls = 0; cls < kClassCount; ++cls) {
    const ClassTotals& c = totals.classes[cls];
    if (!c.blocks) continue;
    small_live += c.live;
    r.str("  ")
        .num(cls, 5)
        .num(kClassSize[cls], 8)
        .num(c.blocks, 8)
        .num(c.full, 8)
        .num(c.os_pages, 10)
        .num(c.live, 14)
        .num(c.remote, 14)
        .put('\n');
  }
  r.str("  small: live ").bytes(small_live).str(", thread heaps ").num(totals.heaps).str(" (").num(totals.abandoned)
      .str(" abandoned), retained empty blocks ").num(totals.retained).str(" (").num(abandoned_kept_blocks())
      .str(" kept by abandoned heaps; largest retain limit ").num(totals.largest_limit)
      .str("), empty blocks adopted by new threads ").num(handed_over_blocks())
      .str(", blocks reclaimed by freeing threads ").num(reclaimed_blocks()).put('\n');
}

void print_large_and_huge(Report& r) noexcept {
  LargeStats large = large_stats();
  r.str("  large: regions ")
      .num(large.regions)
      .str(", live ")
      .num(large.live_objects)
      .str(" objects (")
      .bytes(large.live_bytes)
      .str("), free ")
      .bytes(large.free_bytes)
      .str(" (")
      .bytes(large.dirty_bytes)
      .str(" not yet discarded), spare regions kept per arena up to ")
      .num(large.largest_spare_limit)
      .put('\n');
  HugeStats huge = huge_stats();
  r.str("  huge: live ").num(huge.live_objects).str(" objects (").bytes(huge.live_bytes).str(" mapped), cached ")
      .bytes(huge.cached_bytes).str(" in ").num(huge.cache_entries).str(" runs, reused from the cache ")
      .bytes(huge.reused_bytes).str(", pages moved ").bytes(huge.moved_bytes).str(", discarded ")
      .bytes(huge.discarded_bytes).str(", fresh ").bytes(huge.fresh_bytes).str(", grown in place ")
      .num(huge.grown_in_place).str(" times, regions ").bytes(huge.reserved_bytes).put('\n');
}

void print_process(Report& r) noexcept {
  struct rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  r.str("  mapped now ").bytes(mapped_bytes()).str(", peak RSS ").bytes(static_cast<std::uint64_t>(usage.ru_maxrss) * 1024)
      .str(", pages discarded ").num(discarded_os_pages()).str(" (").bytes(discarded_os_pages() * cfg::kOsPageSize)
      .str(")\n");
}

}  // namespace

void print_stats() noexcept { print_stats_to(2); }

void print_stats_to(int fd) noexcept {
  SmallTotals small;
  for (PerThreadHeap* heap = heap_registry_head(); heap; heap = heap->next_heap) add_heap(small, heap);
  Report r(fd);
  r.str("strata: statistics (pid ").num(static_cast<std::uint64_t>(::getpid())).str(")\n");
  print_small(r, small);
  print_large_and_huge(r);
  print_process(r);
}

}  // namespace strata::malloc_detail
