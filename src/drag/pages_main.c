/* strata-pages: a Valgrind tool that measures page-level locality (Vam,
   2005, §4.5-4.6; docs/pages.md).

   It follows every load and store the program makes (its own and its
   allocator's: this tool does not replace malloc, so the program runs with
   whatever malloc it links or preloads), and every buffer the kernel reads or
   writes for a system call, at page granularity (4 KiB; an access belongs to
   the page of its first byte). For each reference it computes the LRU stack
   distance d of the page (Mattson et al., 1970): the number of distinct
   pages referenced since this page's previous reference, plus one. Under LRU
   replacement the reference faults in every memory of fewer than d pages, so
   the histogram of distances gives the fault curve for every memory size at
   once; a page's first reference (distance infinite) faults at every size:
   the compulsory faults.

   How:
     - inline, every reference counts itself and compares its page with the
       most recent page: equal (distance 1, the common case) ends there;
     - the next FRONT_PAGES most recent pages are an array in LRU order: a
       page found there has distance = its position;
     - the rest of the LRU stack is kept as marks in a Fenwick tree indexed
       by the time a page left the array (pages leave the array in LRU order,
       so that order is recency): a page whose mark is at t has distance
       (pages in the array) + (marks after t) + 1, an O(log n) prefix sum;
       the marks are renumbered 0..n-1 when the times run out of room.
   Pages given back to the kernel (munmap, madvise DONTNEED/FREE/REMOVE, a
   shrinking brk) leave the stack, as in Vam's simulator (§4.6): the pages
   below come closer, and touching one again is a demand-zero fault, counted
   at every memory size like a first touch (refilled_pages).
   It also records the working set: distinct pages per window of
   --pages-window references, and simulates swap prefetching (Vam Fig. 9)
   on the misses of each --pages-prefetch-memory size.

   At exit it writes one JSON file (--pages-out; %p is the pid). */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "vg_accesses.h"
#pragma GCC diagnostic pop

#define PAGE_SHIFT 12
#define FRONT_PAGES 8
#define NO_PAGE (~(UWord)0)
#define NOT_IN_TAIL (~(ULong)0)
#define DISCARDED (~(ULong)0 - 1) /* tail_time of a page given back to the kernel */

/* ------------------------------------------------------------------ */
/* Options                                                              */

static const HChar* clo_out = "strata-pages.%p.json";
static Long clo_window = 1000000;
#define MAX_PREFETCH_SIZES 4
static Long clo_prefetch_memory[MAX_PREFETCH_SIZES]; /* memory sizes (pages) of the prefetch simulation */
static Int n_prefetch_memory = 0;

static Bool process_option(const HChar* arg) {
  if VG_STR_CLO(arg, "--pages-out", clo_out) {}
  else if VG_BINT_CLO(arg, "--pages-window", clo_window, 1, 1000000000000LL) {}
  else if VG_BINT_CLO(arg, "--pages-prefetch-memory", clo_prefetch_memory[n_prefetch_memory], 1, 1LL << 40) {
    if (++n_prefetch_memory > MAX_PREFETCH_SIZES) VG_(fmsg_bad_option)(arg, "at most %d sizes\n", MAX_PREFETCH_SIZES);
  } else return False;
  return True;
}

static void print_usage(void) {
  VG_(printf)(
      "    --pages-out=FILE             JSON results [strata-pages.%%p.json]\n"
      "    --pages-window=N             references per working-set window [1000000]\n"
      "    --pages-prefetch-memory=M    simulate swap prefetching for a memory of M pages (repeatable)\n");
}

static void print_debug_usage(void) { VG_(printf)("    (none)\n"); }

/* ------------------------------------------------------------------ */
/* Growable arrays of counters                                          */

typedef struct {
  ULong* at;
  ULong size; /* elements allocated, all zeroed until used */
} Counts;

static void counts_reserve(Counts* c, ULong index) {
  if (index < c->size) return;
  ULong size = c->size ? c->size : 1024;
  while (size <= index) size *= 2;
  c->at = VG_(realloc)("pages.counts", c->at, size * sizeof(ULong));
  VG_(memset)(c->at + c->size, 0, (size - c->size) * sizeof(ULong));
  c->size = size;
}

static void counts_add(Counts* c, ULong index, ULong n) {
  counts_reserve(c, index);
  c->at[index] += n;
}

/* ------------------------------------------------------------------ */
/* Pages seen: an open-addressing table, page -> time its tail mark was set */

typedef struct {
  UWord page; /* NO_PAGE: empty slot */
  ULong tail_time; /* NOT_IN_TAIL while the page is in the front array, DISCARDED while out of the stack */
  ULong window_plus1; /* the last window it was counted in, plus one (0: none) */
} PageEntry;

static PageEntry* table;
static ULong table_bits = 0, table_used = 0;

static ULong slot_of(UWord page) { return (page * 0x9E3779B97F4A7C15ULL) >> (64 - table_bits); }

static void table_init(ULong bits) {
  table_bits = bits;
  table = VG_(malloc)("pages.table", (1ULL << bits) * sizeof(PageEntry));
  for (ULong i = 0; i < (1ULL << bits); i++) table[i].page = NO_PAGE;
}

static PageEntry* table_find(UWord page) {
  const ULong mask = (1ULL << table_bits) - 1;
  for (ULong i = slot_of(page);; i = (i + 1) & mask)
    if (table[i].page == page || table[i].page == NO_PAGE) return &table[i];
}

static void table_grow(void) {
  PageEntry* old = table;
  const ULong old_size = 1ULL << table_bits;
  table_init(table_bits + 1);
  for (ULong i = 0; i < old_size; i++)
    if (old[i].page != NO_PAGE) *table_find(old[i].page) = old[i];
  VG_(free)(old);
}

/* The entry of a page, inserted (new: *fresh) if absent. */
static PageEntry* table_get(UWord page, Bool* fresh) {
  PageEntry* e = table_find(page);
  *fresh = e->page == NO_PAGE;
  if (*fresh) {
    if (2 * (table_used + 1) > (1ULL << table_bits)) {
      table_grow();
      e = table_find(page);
    }
    e->page = page;
    e->tail_time = NOT_IN_TAIL;
    e->window_plus1 = 0;
    table_used++;
  }
  return e;
}

/* ------------------------------------------------------------------ */
/* The LRU stack's tail: marks at the times pages left the front array   */

static UInt* fenwick; /* 1-based: fenwick[i] sums marks (i - lowbit(i), i] */
static ULong fenwick_size = 0, next_time = 0, tail_marks = 0;

static void fenwick_add(ULong time, Int delta) {
  for (ULong i = time + 1; i <= fenwick_size; i += i & (~i + 1)) fenwick[i] = (UInt)((Int)fenwick[i] + delta);
}

static ULong fenwick_prefix(ULong time) { /* marks at times <= time */
  ULong sum = 0;
  for (ULong i = time + 1; i > 0; i -= i & (~i + 1)) sum += fenwick[i];
  return sum;
}

static Int cmp_entry_time(const void* a, const void* b) {
  const ULong x = (*(PageEntry* const*)a)->tail_time, y = (*(PageEntry* const*)b)->tail_time;
  return x < y ? -1 : x > y;
}

/* Times ran out: renumbers the marks 0..n-1 in order and rebuilds the tree,
   with room for as many again (at least 2^20). */
static void renumber_tail(void) {
  PageEntry** marked = VG_(malloc)("pages.renumber", (tail_marks + 1) * sizeof(PageEntry*));
  ULong n = 0;
  for (ULong i = 0; i < (1ULL << table_bits); i++)
    if (table[i].page != NO_PAGE && table[i].tail_time < DISCARDED) marked[n++] = &table[i];
  tl_assert(n == tail_marks);
  VG_(ssort)(marked, n, sizeof(PageEntry*), cmp_entry_time);
  for (ULong i = 0; i < n; i++) marked[i]->tail_time = i;
  VG_(free)(marked);
  VG_(free)(fenwick);
  fenwick_size = 2 * n > (1ULL << 20) ? 2 * n : (1ULL << 20);
  fenwick = VG_(calloc)("pages.fenwick", fenwick_size + 1, sizeof(UInt));
  for (ULong i = 1; i <= n; i++) { /* linear build: each node passes its sum to its parent */
    fenwick[i] += 1;
    const ULong parent = i + (i & (~i + 1));
    if (parent <= fenwick_size) fenwick[parent] += fenwick[i];
  }
  for (ULong i = n + 1; i <= fenwick_size; i++) {
    const ULong parent = i + (i & (~i + 1));
    if (parent <= fenwick_size) fenwick[parent] += fenwick[i];
  }
  next_time = n;
}

static void tail_push(PageEntry* e) {
  if (next_time == fenwick_size) renumber_tail();
  e->tail_time = next_time++;
  fenwick_add(e->tail_time, 1);
  tail_marks++;
}

/* Its mark removed; returns the marks after it. */
static ULong tail_take(PageEntry* e) {
  const ULong after = tail_marks - fenwick_prefix(e->tail_time);
  fenwick_add(e->tail_time, -1);
  tail_marks--;
  e->tail_time = NOT_IN_TAIL;
  return after;
}

/* ------------------------------------------------------------------ */
/* Swap prefetching (Vam §4.6, Fig. 9)                                  */

/* For a memory of M pages, the references that miss under LRU (distance > M;
   not first touches nor refills, which read no swap) go through a model of
   Linux's swap read-around: a buffer of the last PREFETCH_BUFFER pages read
   ahead. A miss found there is prefetchable (and leaves the buffer); any
   other miss reads its aligned group of PREFETCH_GROUP pages, the others
   entering the buffer in place of the oldest. */
#define PREFETCH_BUFFER 256
#define PREFETCH_GROUP 8

typedef struct {
  UWord buffer[PREFETCH_BUFFER]; /* a ring; NO_PAGE: empty */
  Int next; /* the oldest slot, replaced next */
  ULong misses, prefetchable;
} Prefetch;

static Prefetch prefetch[MAX_PREFETCH_SIZES];

static Int prefetch_slot(const Prefetch* p, UWord page) {
  for (Int i = 0; i < PREFETCH_BUFFER; i++)
    if (p->buffer[i] == page) return i;
  return -1;
}

static void prefetch_miss(Prefetch* p, UWord page) {
  p->misses++;
  const Int slot = prefetch_slot(p, page);
  if (slot >= 0) {
    p->prefetchable++;
    p->buffer[slot] = NO_PAGE;
    return;
  }
  const UWord group = page & ~(UWord)(PREFETCH_GROUP - 1);
  for (UWord other = group; other < group + PREFETCH_GROUP; other++) {
    if (other == page || prefetch_slot(p, other) >= 0) continue;
    p->buffer[p->next] = other;
    p->next = (p->next + 1) % PREFETCH_BUFFER;
  }
}

/* A reference at LRU distance d (not a first touch). */
static void prefetch_reference(UWord page, ULong d) {
  for (Int i = 0; i < n_prefetch_memory; i++)
    if (d > (ULong)clo_prefetch_memory[i]) prefetch_miss(&prefetch[i], page);
}

/* ------------------------------------------------------------------ */
/* References                                                           */

/* Read and written by the inline code. */
static ULong references = 0; /* every reference, counted inline */
static UWord top_page = NO_PAGE; /* the most recent page: front[0] */

typedef struct {
  UWord page;
  ULong window_plus1;
} FrontEntry;

static FrontEntry front[FRONT_PAGES]; /* the most recent pages, most recent first */
static Int front_used = 0;
static ULong slow_references = 0; /* references to a page other than the most recent */
static ULong distinct_pages = 0;
static ULong refilled_pages = 0; /* references to a page after it was discarded */
static ULong discarded_pages = 0; /* pages taken out of the stack by munmap, madvise, brk */
static Counts distances; /* distances.at[d]: references at stack distance d (1 counted at exit) */
static Counts working_set; /* working_set.at[w]: distinct pages referenced in window w */
static ULong current_window = 0;

/* Counts front[0]'s page in window w unless it already is. */
static void count_in_window(FrontEntry* f, ULong w) {
  if (f->window_plus1 == w + 1) return;
  f->window_plus1 = w + 1;
  counts_add(&working_set, w, 1);
}

/* The reference with 0-based index `index` starts a new window: the run of
   references to the previous page reached every window up to the one of index - 1. */
static void enter_window(ULong index) {
  const ULong window = index / (ULong)clo_window;
  if (window == current_window) return;
  if (front_used > 0) {
    const ULong last = (index - 1) / (ULong)clo_window;
    for (ULong w = current_window + 1; w <= last; w++) count_in_window(&front[0], w);
  }
  current_window = window;
}

/* Moves the page at front[i] (or a page from outside, i == front_used) to front[0]. */
static void move_to_front(Int i, FrontEntry entry) {
  for (; i > 0; i--) front[i] = front[i - 1];
  front[0] = entry;
}

static void reference(UWord page, ULong index) {
  enter_window(index);
  Int i = 0;
  while (i < front_used && front[i].page != page) i++;
  if (i < front_used) { /* distance i + 1 */
    counts_add(&distances, (ULong)i + 1, 1);
    prefetch_reference(page, (ULong)i + 1);
    move_to_front(i, front[i]);
  } else {
    Bool fresh;
    PageEntry* e = table_get(page, &fresh);
    if (fresh) {
      distinct_pages++;
    } else if (e->tail_time == DISCARDED) { /* a demand-zero page again: faults at every size */
      refilled_pages++;
      e->tail_time = NOT_IN_TAIL;
    } else { /* in the tail: below every front page and the tail marks after it */
      const ULong distance = (ULong)front_used + tail_take(e) + 1;
      counts_add(&distances, distance, 1);
      prefetch_reference(page, distance);
    }
    FrontEntry entry = {page, e->window_plus1};
    if (front_used == FRONT_PAGES) { /* the last one joins the tail */
      Bool unused;
      PageEntry* leaving = table_get(front[FRONT_PAGES - 1].page, &unused);
      leaving->window_plus1 = front[FRONT_PAGES - 1].window_plus1;
      tail_push(leaving);
    } else {
      front_used++;
    }
    move_to_front(front_used - 1, entry);
  }
  count_in_window(&front[0], current_window);
  top_page = page;
}

static VG_REGPARM(1) void on_new_page(Addr a) {
  slow_references++;
  reference(a >> PAGE_SHIFT, references - 1);
}

/* Buffers the kernel reads or writes: one reference per page. */
static void touch_range(Addr a, SizeT size) {
  if (size == 0) return;
  for (UWord page = a >> PAGE_SHIFT; page <= (a + size - 1) >> PAGE_SHIFT; page++) {
    references++;
    if (page != top_page) {
      slow_references++;
      reference(page, references - 1);
    } else {
      enter_window(references - 1);
      count_in_window(&front[0], current_window);
    }
  }
}

/* The kernel's accesses (system calls, signal frames); not the core's own
   look at code it translates (Vg_CoreTranslate) nor its start-up. */
static Bool kernel_access(CorePart part) {
  return part == Vg_CoreSysCall || part == Vg_CoreSysCallArgInMem || part == Vg_CoreSignal;
}

static void on_pre_mem_read(CorePart part, ThreadId tid, const HChar* s, Addr a, SizeT size) {
  (void)tid, (void)s;
  if (kernel_access(part)) touch_range(a, size);
}
static void on_pre_mem_read_asciiz(CorePart part, ThreadId tid, const HChar* s, Addr a) {
  (void)tid, (void)s;
  if (kernel_access(part)) touch_range(a, 1);
}
static void on_post_mem_write(CorePart part, ThreadId tid, Addr a, SizeT size) {
  (void)tid;
  if (kernel_access(part)) touch_range(a, size);
}

/* ------------------------------------------------------------------ */
/* Pages given back to the kernel (munmap, madvise, a shrinking brk)    */

/* Vam (§4.6) keeps such pages out of the LRU queue: their frames are free at
   once, so the pages below them come closer, and touching one again is a
   demand-zero fault (counted at every memory size, like a first touch). */
static void discard_page(UWord page) {
  Int i = 0;
  while (i < front_used && front[i].page != page) i++;
  if (i < front_used) {
    if (i == 0) enter_window(references); /* the run of references to it ends here */
    PageEntry* e = table_find(page);
    e->window_plus1 = front[i].window_plus1;
    e->tail_time = DISCARDED;
    for (; i + 1 < front_used; i++) front[i] = front[i + 1];
    front_used--;
    top_page = front_used > 0 ? front[0].page : NO_PAGE;
    discarded_pages++;
    return;
  }
  PageEntry* e = table_find(page);
  if (e->page == NO_PAGE || e->tail_time == DISCARDED) return; /* never touched, or already out */
  tail_take(e);
  e->tail_time = DISCARDED;
  discarded_pages++;
}

static void discard_range(Addr a, SizeT len) {
  if (len == 0) return;
  /* The kernel rounds the end up; a start inside a page (a brk) keeps that page. */
  const UWord first = (a + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT, end = (a + len + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT;
  if (end <= first) return;
  if (end - first <= table_used + FRONT_PAGES) {
    for (UWord page = first; page < end; page++) discard_page(page);
    return;
  }
  for (ULong i = 0; i < (1ULL << table_bits); i++) /* a large range: walk the pages seen instead */
    if (table[i].page != NO_PAGE && table[i].page >= first && table[i].page < end) discard_page(table[i].page);
}

static void on_die_mem(Addr a, SizeT len) { discard_range(a, len); }

#define MADV_DONTNEED 4
#define MADV_FREE 8
#define MADV_REMOVE 9

static void pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt n_args) { (void)tid, (void)sysno, (void)args, (void)n_args; }

static void post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt n_args, SysRes res) {
  (void)tid, (void)n_args;
  if (sysno != __NR_madvise || sr_isError(res)) return;
  if (args[2] == MADV_DONTNEED || args[2] == MADV_FREE || args[2] == MADV_REMOVE) discard_range(args[0], args[1]);
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                      */

/* One reference, inline:
     references += guard
     if (guard && (addr >> 12) != top_page) on_new_page(addr)   */
static void add_reference(IRSB* sb, IRExpr* addr, IRExpr* guard, void* opaque) {
  (void)opaque;
  IRExpr* one = guard == NULL ? mkIRExpr_HWord(1) : vg_bind(sb, Ity_I64, IRExpr_Unop(Iop_1Uto64, guard));
  IRExpr* count = vg_bind(sb, Ity_I64, IRExpr_Binop(Iop_Add64, vg_load_word(sb, &references), one));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&references), count));
  IRExpr* page = vg_bind(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, addr, IRExpr_Const(IRConst_U8(PAGE_SHIFT))));
  IRExpr* other = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, page, vg_load_word(sb, &top_page)));
  if (guard != NULL) other = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_And1, other, guard));
  IRDirty* d = unsafeIRDirty_0_N(1, "pages_on_new_page", VG_(fnptr_to_fnentry)(on_new_page), mkIRExprVec_1(addr));
  d->guard = other;
  addStmtToIRSB(sb, IRStmt_Dirty(d));
}

static IRSB* instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                        const VexGuestExtents* vge, const VexArchInfo* archinfo, IRType gWordTy, IRType hWordTy) {
  (void)closure, (void)layout, (void)vge, (void)archinfo, (void)gWordTy, (void)hWordTy;
  return vg_instrument_accesses(sb_in, NULL, add_reference, NULL);
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

static void write_results(Int exitcode) {
  const HChar* path = VG_(expand_file_name)("--pages-out", clo_out);
  VgFile* f = VG_(fopen)(path, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, VKI_S_IRUSR | VKI_S_IWUSR | VKI_S_IRGRP | VKI_S_IROTH);
  if (f == NULL) {
    VG_(umsg)("strata-pages: cannot write %s\n", path);
    return;
  }
  if (references > 0) enter_window(references); /* the last page's run reaches the last window */
  /* Distance 1: every reference that was not a distinct page's first nor at a larger distance. */
  ULong larger = 0;
  for (ULong d = 2; d < distances.size; d++) larger += distances.at[d];
  counts_add(&distances, 1, 0);
  distances.at[1] = references - distinct_pages - refilled_pages - larger;
  VG_(fprintf)(f, "{\n  \"format\": \"strata-pages\",\n  \"version\": 1,\n  \"pid\": %d,\n  \"exit_code\": %d,\n",
               VG_(getpid)(), exitcode);
  VG_(fprintf)(f, "  \"page_size\": %d,\n  \"references\": %llu,\n  \"references_to_another_page\": %llu,\n",
               1 << PAGE_SHIFT, references, slow_references);
  VG_(fprintf)(f, "  \"distinct_pages\": %llu,\n  \"discarded_pages\": %llu,\n  \"refilled_pages\": %llu,\n",
               distinct_pages, discarded_pages, refilled_pages);
  VG_(fprintf)(f, "  \"distances\": [");
  Bool first = True;
  for (ULong d = 1; d < distances.size; d++) {
    if (distances.at[d] == 0) continue;
    VG_(fprintf)(f, "%s[%llu, %llu]", first ? "" : ", ", d, distances.at[d]);
    first = False;
  }
  const ULong windows = references == 0 ? 0 : (references - 1) / (ULong)clo_window + 1;
  VG_(fprintf)(f, "],\n  \"window_references\": %lld,\n  \"working_set\": [", clo_window);
  for (ULong w = 0; w < windows; w++) {
    counts_reserve(&working_set, w);
    VG_(fprintf)(f, "%s%llu", w ? ", " : "", working_set.at[w]);
  }
  VG_(fprintf)(f, "],\n  \"prefetch\": [");
  for (Int i = 0; i < n_prefetch_memory; i++)
    VG_(fprintf)(f, "%s{\"memory_pages\": %lld, \"misses\": %llu, \"prefetchable\": %llu}", i ? ", " : "",
                 clo_prefetch_memory[i], prefetch[i].misses, prefetch[i].prefetchable);
  VG_(fprintf)(f, "]\n}\n");
  VG_(fclose)(f);
}

static void fini(Int exitcode) { write_results(exitcode); }

/* ------------------------------------------------------------------ */
/* Initialisation                                                       */

static void post_clo_init(void) {
  for (Int i = 0; i < MAX_PREFETCH_SIZES; i++)
    for (Int j = 0; j < PREFETCH_BUFFER; j++) prefetch[i].buffer[j] = NO_PAGE;
  table_init(16);
  fenwick_size = 1ULL << 20;
  fenwick = VG_(calloc)("pages.fenwick", fenwick_size + 1, sizeof(UInt));
}

static void pre_clo_init(void) {
  VG_(details_name)("strata-pages");
  VG_(details_version)("1");
  VG_(details_description)("page-level locality: LRU stack distances of page references");
  VG_(details_copyright_author)("strata authors");
  VG_(details_bug_reports_to)("the strata issue tracker");
  VG_(details_avg_translation_sizeB)(400);

  VG_(basic_tool_funcs)(post_clo_init, instrument, fini);
  VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
  VG_(track_pre_mem_read)(on_pre_mem_read);
  VG_(track_pre_mem_read_asciiz)(on_pre_mem_read_asciiz);
  VG_(track_post_mem_write)(on_post_mem_write);
  VG_(track_die_mem_munmap)(on_die_mem);
  VG_(track_die_mem_brk)(on_die_mem);
  VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
