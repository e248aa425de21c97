/* strata-drag: a Valgrind tool that measures object drag (2002 reaps paper,
   §6.2 and §7; docs/drag.md).

   For every heap object it records three times, measured in bytes allocated
   so far ("allocation time"): when it was allocated, when the program last
   loaded or stored any byte of it, and when it was reclaimed (free, realloc,
   or the end of its Valgrind mempool: a reap or region cleared or destroyed).
   At exit it writes one JSON file: the areas under the memory-in-use curve
   and under the ideal curve (every object freed right after its last
   access), their ratio (total drag), both curves sampled, their peaks, and
   the figures per allocation site.

   Objects:
     - malloc-family blocks: this tool replaces malloc (like DHAT);
     - mempool objects (VALGRIND_MEMPOOL_ALLOC) and MALLOCLIKE blocks: a
       malloc block that holds such objects is a pool's chunk and is left
       out (its objects are counted instead).
   Time: an object of s bytes allocated when the clock reads t occupies
   [t, end) and the clock then reads t + s. Allocating counts as an access,
   so an object's ideal life is at least [t, t + s).
   Left out of the figures (they do not advance the clock either): objects
   allocated before main (--drag-from-main=yes), and malloc blocks allocated
   while a function matching --drag-ignore-alloc-fn is on the stack.
   Accesses made by code inside a function matching --drag-ignore-fn
   (including code inlined into it) are not counted. */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_execontext.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_oset.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_seqmatch.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "libvex_guest_amd64.h"
#include "valgrind.h"
#include "vg_accesses.h"
#pragma GCC diagnostic pop
#include "pub_tool_xarray.h"

typedef unsigned __int128 Area; /* bytes x bytes of allocation time: can pass 2^64 */

/* ------------------------------------------------------------------ */
/* Options                                                              */

#define MAX_PATTERNS 16

static const HChar* clo_out = "strata-drag.%p.json";
static Bool clo_from_main = True;
static Long clo_curve_points = 2000;
static const HChar* clo_ignore_fn[MAX_PATTERNS];
static Int n_ignore_fn = 0;
static const HChar* clo_ignore_alloc_fn[MAX_PATTERNS];
static Int n_ignore_alloc_fn = 0;

static Bool add_pattern(const HChar* arg, const HChar* pattern, const HChar** list, Int* n) {
  if (*n == MAX_PATTERNS) VG_(fmsg_bad_option)(arg, "at most %d patterns of each kind\n", MAX_PATTERNS);
  list[(*n)++] = pattern;
  return True;
}

static Bool process_option(const HChar* arg) {
  const HChar* tmp;
  if VG_STR_CLO(arg, "--drag-out", clo_out) {}
  else if VG_BOOL_CLO(arg, "--drag-from-main", clo_from_main) {}
  else if VG_BINT_CLO(arg, "--drag-curve-points", clo_curve_points, 2, 1000000) {}
  else if VG_STR_CLO(arg, "--drag-ignore-fn", tmp) {
    return add_pattern(arg, tmp, clo_ignore_fn, &n_ignore_fn);
  } else if VG_STR_CLO(arg, "--drag-ignore-alloc-fn", tmp) {
    return add_pattern(arg, tmp, clo_ignore_alloc_fn, &n_ignore_alloc_fn);
  } else {
    return VG_(replacement_malloc_process_cmd_line_option)(arg);
  }
  return True;
}

static void print_usage(void) {
  VG_(printf)(
      "    --drag-out=FILE              JSON results [strata-drag.%%p.json]\n"
      "    --drag-from-main=yes|no      leave out objects allocated before main [yes]\n"
      "    --drag-ignore-fn=PATTERN     accesses made inside matching functions do not count (repeatable;\n"
      "                                 a glob on the name or on \"NAME (FILE:LINE)\")\n"
      "    --drag-ignore-alloc-fn=PAT   leave out malloc blocks allocated under a matching function\n"
      "    --drag-curve-points=N        points of the sampled curves [2000]\n");
}

static void print_debug_usage(void) { VG_(printf)("    (none)\n"); }

/* ------------------------------------------------------------------ */
/* Allocation sites                                                     */

typedef struct Site {
  struct Site* next; /* VgHashNode: next, key (the ExeContext's unique number) */
  UWord key;
  ExeContext* ec;
  Bool ignored; /* a frame matches --drag-ignore-alloc-fn */
  ULong objects, bytes, live_at_exit;
  Area in_use_area, ideal_area;
  Area drag_time; /* sum over its objects of (reclaimed - last access), allocation-time bytes */
} Site;

static VgHashTable* sites;

/* A VG_(describe_IP) line "0x...: NAME (FILE:LINE)" without its address. */
static const HChar* frame_text(const HChar* described) {
  const HChar* after = VG_(strstr)(described, ": ");
  return after ? after + 2 : described;
}

/* Its function name: up to the last " (", which starts the location. Inlined
   frames carry the short name (no namespace): patterns can match the file. */
static void fn_name_of(const HChar* frame, HChar* out, SizeT out_size) {
  const HChar* end = frame + VG_(strlen)(frame);
  for (const HChar* p = frame; *p; p++)
    if (p[0] == ' ' && p[1] == '(') end = p;
  SizeT n = (SizeT)(end - frame);
  if (n >= out_size) n = out_size - 1;
  VG_(memcpy)(out, frame, n);
  out[n] = 0;
}

/* A pattern matches the function's name or the whole frame "NAME (FILE:LINE)". */
static Bool frame_matches(const HChar* frame, const HChar** patterns, Int n) {
  static HChar name[4096];
  fn_name_of(frame, name, sizeof name);
  for (Int i = 0; i < n; i++)
    if (VG_(string_match)(patterns[i], name) || VG_(string_match)(patterns[i], frame)) return True;
  return False;
}

/* Does ip, or any function inlined at ip, match one of the patterns? */
static Bool ip_matches(DiEpoch ep, Addr ip, const HChar** patterns, Int n) {
  Bool found = False;
  InlIPCursor* iipc = VG_(new_IIPC)(ep, ip);
  do {
    if (frame_matches(frame_text(VG_(describe_IP)(ep, ip, iipc)), patterns, n)) found = True;
  } while (!found && VG_(next_IIPC)(iipc));
  VG_(delete_IIPC)(iipc);
  return found;
}

/* Sites share most of their frames (a recursive program's stacks differ in
   depth only): each code address is described once, in the "frames" table at
   the end, and a site lists indices into it. An address inlined into others
   describes as several consecutive frames. */
typedef struct CodeAddress {
  struct CodeAddress* next; /* VgHashNode: next, key (the address) */
  UWord key;
  UInt first, count;  /* its frames' indices in the table */
  Bool alloc_checked; /* matched against --drag-ignore-alloc-fn yet */
  Bool ignored_alloc; /* it, or a function inlined at it, matches */
} CodeAddress;

static VgHashTable* code_addresses;
typedef struct {
  Addr ip;
  DiEpoch ep; /* of the first stack it was seen in: code unloaded since still describes */
} Described;
static XArray* described; /* Described: the table's addresses, in index order */
static UInt frames_in_table = 0;

static CodeAddress* code_address_of(DiEpoch ep, Addr ip) {
  CodeAddress* c = VG_(HT_lookup)(code_addresses, ip);
  if (c != NULL) return c;
  c = VG_(malloc)("drag.code_address", sizeof(CodeAddress));
  c->key = ip;
  c->first = frames_in_table;
  c->count = 0;
  c->alloc_checked = c->ignored_alloc = False;
  InlIPCursor* iipc = VG_(new_IIPC)(ep, ip);
  do c->count++;
  while (VG_(next_IIPC)(iipc));
  VG_(delete_IIPC)(iipc);
  frames_in_table += c->count;
  const Described d = {ip, ep};
  VG_(addToXA)(described, &d);
  VG_(HT_add_node)(code_addresses, c);
  return c;
}

typedef struct {
  Bool found;
} MatchState;

static void match_frame(UInt n, DiEpoch ep, Addr ip, void* opaque) {
  (void)n;
  MatchState* state = opaque;
  if (state->found) return;
  /* Every new site asks about its frames: each address is matched once. */
  CodeAddress* c = code_address_of(ep, ip);
  if (!c->alloc_checked) {
    c->ignored_alloc = ip_matches(ep, ip, clo_ignore_alloc_fn, n_ignore_alloc_fn);
    c->alloc_checked = True;
  }
  state->found = c->ignored_alloc;
}

static Site* site_of(ThreadId tid, Bool heap_block) {
  ExeContext* ec = VG_(record_ExeContext)(tid, 0);
  UWord key = VG_(get_ECU_from_ExeContext)(ec);
  Site* site = VG_(HT_lookup)(sites, key);
  if (site == NULL) {
    site = VG_(calloc)("drag.site", 1, sizeof(Site));
    site->key = key;
    site->ec = ec;
    if (heap_block && n_ignore_alloc_fn > 0) {
      MatchState state = {False};
      VG_(apply_ExeContext)(match_frame, &state, ec);
      site->ignored = state.found;
    }
    VG_(HT_add_node)(sites, site);
  }
  return site;
}

/* ------------------------------------------------------------------ */
/* Objects                                                              */

enum { KIND_HEAP, KIND_POOL };

typedef struct Block {
  Addr lo; /* the OSet key */
  SizeT size;
  ULong alloc_t, last_t;
  Site* site;
  struct Pool* pool; /* pool objects: their pool (NULL for MALLOCLIKE blocks) */
  struct Block *pool_prev, *pool_next;
  UChar kind;
  Bool counted;   /* in the figures */
  Bool container; /* a heap block holding pool objects */
} Block;

typedef struct Pool {
  struct Pool* next; /* VgHashNode */
  UWord key;         /* the pool's address */
  Block* objects;    /* doubly linked through pool_prev/pool_next */
} Pool;

static OSet* heap_blocks; /* malloc blocks, by address */
static OSet* pool_blocks; /* mempool objects and MALLOCLIKE blocks */
static VgHashTable* pools;

static Word cmp_interval(const void* key, const void* elem) {
  Addr a = *(const Addr*)key;
  const Block* b = elem;
  if (a < b->lo) return -1;
  if (a >= b->lo + (b->size ? b->size : 1)) return 1;
  return 0;
}

/* The clock and the figures. */
static ULong clock_bytes = 0; /* allocation time: bytes allocated by counted objects */
static Bool main_seen = False;
static ULong objects_counted = 0, objects_live_at_exit = 0, bytes_live_at_exit = 0;
static ULong before_main_objects = 0, ignored_alloc_objects = 0, pool_chunks = 0;
static ULong ended_free = 0, ended_realloc = 0, ended_pool_free = 0, ended_pool_end = 0;
static ULong in_use_now = 0, peak_in_use = 0;
static Area in_use_area = 0, ideal_area = 0;

/* The two curves as difference arrays over bucket boundaries k * 2^shift:
   curve(T_k) = sum of diff[0..k]. An object present on [a, b) adds +s at the
   first boundary >= a and -s at the first boundary >= b. When the clock
   outgrows the array, boundaries are halved (the resolution doubles). */
#define CURVE_BOUNDARIES (1 << 20)
static Long* in_use_diff;
static Long* ideal_diff;
static UInt curve_shift = 0;

static ULong boundary_index(ULong t) { return (t + (1ULL << curve_shift) - 1) >> curve_shift; }

static void coarsen(Long* diff) {
  for (ULong i = 0; i <= CURVE_BOUNDARIES / 2; i++)
    diff[i] = (i > 0 ? diff[2 * i - 1] : 0) + diff[2 * i];
  for (ULong i = CURVE_BOUNDARIES / 2 + 1; i <= CURVE_BOUNDARIES; i++) diff[i] = 0;
}

static void advance_clock(SizeT n) {
  clock_bytes += n;
  while (boundary_index(clock_bytes) > CURVE_BOUNDARIES) {
    coarsen(in_use_diff);
    coarsen(ideal_diff);
    curve_shift++;
  }
}

static void add_interval(Long* diff, ULong from, ULong to, SizeT size) {
  if (to <= from) return;
  diff[boundary_index(from)] += (Long)size;
  diff[boundary_index(to)] -= (Long)size;
}

/* Where recent accesses went. cache[0]: the last block hit, checked inline
   by the instrumentation (most accesses hit it again); cache[1]: the one
   before (a copy alternates between two blocks). Behind them, a
   direct-mapped table by address (32-byte granules): a block is entered in
   the slot of each address it was found for, and cleared from every slot of
   its range when it dies. Only a miss in both searches the ordered set. */
typedef struct {
  Addr lo;
  SizeT len;
  Block* block;
} CacheEntry;
#define TABLE_BITS 16
#define GRANULE_SHIFT 5
static CacheEntry cache[2]; /* the last block hit, and the one before */
static CacheEntry table[1 << TABLE_BITS];
/* Every block ever tracked lies in [bounds_lo, bounds_lo + bounds_span): the
   instrumentation skips other addresses (the stack, globals) inline. */
static Addr bounds_lo = 0, bounds_hi = 0;
static SizeT bounds_span = 0;

static CacheEntry* slot_of(Addr a) { return &table[(a >> GRANULE_SHIFT) & ((1 << TABLE_BITS) - 1)]; }

static void forget_cache(const Block* b) {
  for (Int i = 0; i < 2; i++)
    if (cache[i].block == b) cache[i] = (CacheEntry){0, 0, NULL};
  const Addr first = b->lo >> GRANULE_SHIFT, last = (b->lo + (b->size ? b->size - 1 : 0)) >> GRANULE_SHIFT;
  if (last - first < (1 << TABLE_BITS)) {
    for (Addr g = first; g <= last; g++) {
      CacheEntry* e = slot_of(g << GRANULE_SHIFT);
      if (e->block == b) *e = (CacheEntry){0, 0, NULL};
    }
  } else {
    for (Int i = 0; i < (1 << TABLE_BITS); i++)
      if (table[i].block == b) table[i] = (CacheEntry){0, 0, NULL};
  }
}

static void widen_bounds(const Block* b) {
  if (bounds_span == 0 || b->lo < bounds_lo) bounds_lo = b->lo;
  if (b->lo + b->size > bounds_hi) bounds_hi = b->lo + b->size;
  bounds_span = bounds_hi - bounds_lo;
}

/* Ends an object's life now: its contribution to both curves. */
static void end_object(Block* b, Bool at_exit) {
  forget_cache(b);
  if (!b->counted) return;
  const ULong a = b->alloc_t, l = b->last_t, f = clock_bytes;
  const SizeT s = b->size;
  in_use_area += (Area)s * (f - a);
  ideal_area += (Area)s * (l - a);
  add_interval(in_use_diff, a, f, s);
  add_interval(ideal_diff, a, l, s);
  b->site->in_use_area += (Area)s * (f - a);
  b->site->ideal_area += (Area)s * (l - a);
  b->site->drag_time += f - l;
  in_use_now -= s;
  if (at_exit) {
    objects_live_at_exit++;
    bytes_live_at_exit += s;
    b->site->live_at_exit++;
  }
}

static void start_object(Block* b, ThreadId tid, Bool heap_block) {
  b->site = site_of(tid, heap_block);
  b->counted = (main_seen || !clo_from_main) && !b->site->ignored;
  if (!main_seen && clo_from_main) before_main_objects++;
  else if (b->site->ignored) ignored_alloc_objects++;
  b->alloc_t = clock_bytes;
  if (b->counted) {
    advance_clock(b->size);
    objects_counted++;
    b->site->objects++;
    b->site->bytes += b->size;
    in_use_now += b->size;
    if (in_use_now > peak_in_use) peak_in_use = in_use_now;
  }
  b->last_t = clock_bytes;
  widen_bounds(b);
}

static Block* lookup(OSet* set, Addr a) {
  Block* b = VG_(OSetGen_Lookup)(set, &a);
  return b != NULL && a < b->lo + b->size ? b : NULL;
}

/* The object holding address a: a pool object inside a pool's chunk wins. */
static Block* find_object(Addr a) {
  Block* b = lookup(heap_blocks, a);
  if (b != NULL && !b->container) return b;
  if (VG_(OSetGen_Size)(pool_blocks) == 0) return b;
  Block* inner = lookup(pool_blocks, a);
  return inner != NULL ? inner : b;
}

static void make_first(CacheEntry entry) {
  cache[1] = cache[0];
  cache[0] = entry;
}

static void touch_slow(Addr a) {
  if (a - cache[1].lo < cache[1].len) { /* the one before: copies alternate between two blocks */
    cache[1].block->last_t = clock_bytes;
    make_first(cache[1]);
    return;
  }
  CacheEntry* e = slot_of(a);
  if (a - e->lo < e->len) {
    e->block->last_t = clock_bytes;
    make_first(*e);
    return;
  }
  if (a - bounds_lo >= bounds_span) return;
  Block* b = find_object(a);
  if (b == NULL) return;
  b->last_t = clock_bytes;
  if (!b->container) {
    *e = (CacheEntry){b->lo, b->size, b};
    make_first(*e);
  }
}

static VG_REGPARM(1) void on_access_slow(Addr a) { touch_slow(a); }

/* Accesses the kernel makes for a system call. */
static void touch_range(Addr a, SizeT size) {
  if (size == 0) return;
  touch_slow(a);
  OSet* sets[2] = {heap_blocks, pool_blocks};
  for (Int i = 0; i < 2; i++) {
    VG_(OSetGen_ResetIterAt)(sets[i], &a);
    Block* b;
    while ((b = VG_(OSetGen_Next)(sets[i])) != NULL && b->lo < a + size) b->last_t = clock_bytes;
  }
}

static void on_pre_mem_read(CorePart part, ThreadId tid, const HChar* s, Addr a, SizeT size) {
  (void)part, (void)tid, (void)s;
  touch_range(a, size);
}
static void on_pre_mem_read_asciiz(CorePart part, ThreadId tid, const HChar* s, Addr a) {
  (void)part, (void)tid, (void)s;
  touch_range(a, 1);
}
static void on_post_mem_write(CorePart part, ThreadId tid, Addr a, SizeT size) {
  (void)part, (void)tid;
  touch_range(a, size);
}

/* ------------------------------------------------------------------ */
/* Heap blocks (malloc replacement)                                     */

static void* new_heap_block(ThreadId tid, SizeT size, SizeT align, Bool zero) {
  void* p = VG_(cli_malloc)(align, size);
  if (p == NULL) return NULL;
  if (zero) VG_(memset)(p, 0, size);
  Block* b = VG_(OSetGen_AllocNode)(heap_blocks, sizeof(Block));
  VG_(memset)(b, 0, sizeof *b);
  b->lo = (Addr)p;
  b->size = size;
  b->kind = KIND_HEAP;
  start_object(b, tid, True);
  VG_(OSetGen_Insert)(heap_blocks, b);
  return p;
}

static void end_pool_object(Block* b, Bool at_exit);

/* Returns False for a pointer that is not a live block (left alone). */
static Bool free_heap_block(void* p) {
  Addr a = (Addr)p;
  Block* b = VG_(OSetGen_Lookup)(heap_blocks, &a);
  if (b == NULL || b->lo != a) return False;
  if (b->container) { /* its pool objects cannot outlive it */
    Addr lo = b->lo;
    for (;;) {
      VG_(OSetGen_ResetIterAt)(pool_blocks, &lo);
      Block* inner = VG_(OSetGen_Next)(pool_blocks);
      if (inner == NULL || inner->lo >= b->lo + b->size) break;
      end_pool_object(inner, False);
    }
  }
  end_object(b, False);
  VG_(OSetGen_Remove)(heap_blocks, &a);
  VG_(OSetGen_FreeNode)(heap_blocks, b);
  VG_(cli_free)(p);
  return True;
}

static void* drag_malloc(ThreadId tid, SizeT n) { return new_heap_block(tid, n, VG_(clo_alignment), False); }
static void* drag_new_aligned(ThreadId tid, SizeT n, SizeT align) { return new_heap_block(tid, n, align, False); }
static void* drag_memalign(ThreadId tid, SizeT align, SizeT n) { return new_heap_block(tid, n, align, False); }
static void* drag_calloc(ThreadId tid, SizeT m, SizeT size) {
  if (size != 0 && m > (SizeT)-1 / size) return NULL;
  return new_heap_block(tid, m * size, VG_(clo_alignment), True);
}
static void drag_free(ThreadId tid, void* p) {
  (void)tid;
  if (free_heap_block(p)) ended_free++;
}
static void drag_free_aligned(ThreadId tid, void* p, SizeT align) {
  (void)align;
  drag_free(tid, p);
}

/* realloc = free + malloc: the copy is an access of the new block only. */
static void* drag_realloc(ThreadId tid, void* p, SizeT n) {
  if (p == NULL) return drag_malloc(tid, n);
  Addr a = (Addr)p;
  Block* old = VG_(OSetGen_Lookup)(heap_blocks, &a);
  if (old == NULL || old->lo != a) return NULL;
  SizeT keep = old->size < n ? old->size : n;
  void* q = VG_(cli_malloc)(VG_(clo_alignment), n);
  if (q == NULL) return NULL;
  VG_(memcpy)(q, p, keep);
  free_heap_block(p);
  ended_realloc++;
  Block* b = VG_(OSetGen_AllocNode)(heap_blocks, sizeof(Block));
  VG_(memset)(b, 0, sizeof *b);
  b->lo = (Addr)q;
  b->size = n;
  b->kind = KIND_HEAP;
  start_object(b, tid, True);
  VG_(OSetGen_Insert)(heap_blocks, b);
  return q;
}

static SizeT drag_usable_size(ThreadId tid, void* p) {
  (void)tid;
  Addr a = (Addr)p;
  Block* b = VG_(OSetGen_Lookup)(heap_blocks, &a);
  return b != NULL && b->lo == a ? b->size : 0;
}

/* ------------------------------------------------------------------ */
/* Mempools and MALLOCLIKE blocks (client requests)                     */

static void end_pool_object(Block* b, Bool at_exit) {
  if (b->pool != NULL) {
    if (b->pool_prev) b->pool_prev->pool_next = b->pool_next;
    else b->pool->objects = b->pool_next;
    if (b->pool_next) b->pool_next->pool_prev = b->pool_prev;
  }
  end_object(b, at_exit);
  Addr a = b->lo;
  VG_(OSetGen_Remove)(pool_blocks, &a);
  VG_(OSetGen_FreeNode)(pool_blocks, b);
}

static Block* pool_object_at(Addr a) {
  Block* b = VG_(OSetGen_Lookup)(pool_blocks, &a);
  return b != NULL && b->lo == a ? b : NULL;
}

static void new_pool_object(ThreadId tid, Pool* pool, Addr a, SizeT size) {
  /* A client that reuses memory without freeing it first: the old objects end. */
  Block* old;
  while ((old = VG_(OSetGen_Lookup)(pool_blocks, &a)) != NULL ||
         (size > 0 && (old = lookup(pool_blocks, a + size - 1)) != NULL))
    end_pool_object(old, False); /* (the first lookup also finds an object of 0 bytes at a) */
  Block* chunk = lookup(heap_blocks, a);
  if (chunk != NULL && !chunk->container) { /* a pool's chunk from malloc: its objects count instead */
    forget_cache(chunk);
    chunk->container = True;
    pool_chunks++;
    if (chunk->counted) {
      chunk->counted = False;
      in_use_now -= chunk->size;
      objects_counted--;
      chunk->site->objects--;
      chunk->site->bytes -= chunk->size;
    }
  }
  Block* b = VG_(OSetGen_AllocNode)(pool_blocks, sizeof(Block));
  VG_(memset)(b, 0, sizeof *b);
  b->lo = a;
  b->size = size;
  b->kind = KIND_POOL;
  b->pool = pool;
  start_object(b, tid, False);
  if (pool != NULL) {
    b->pool_next = pool->objects;
    if (pool->objects) pool->objects->pool_prev = b;
    pool->objects = b;
  }
  VG_(OSetGen_Insert)(pool_blocks, b);
}

static Pool* pool_of(UWord key) { return VG_(HT_lookup)(pools, key); }

static Pool* create_pool(UWord key) {
  Pool* pool = pool_of(key);
  if (pool != NULL) return pool;
  pool = VG_(calloc)("drag.pool", 1, sizeof(Pool));
  pool->key = key;
  VG_(HT_add_node)(pools, pool);
  return pool;
}

static void end_all_of(Pool* pool) {
  while (pool->objects != NULL) {
    end_pool_object(pool->objects, False);
    ended_pool_end++;
  }
}

static Bool handle_client_request(ThreadId tid, UWord* arg, UWord* ret) {
  Pool* pool;
  Block* b;
  switch (arg[0]) {
    case VG_USERREQ__CREATE_MEMPOOL:
      create_pool(arg[1]);
      break;
    case VG_USERREQ__DESTROY_MEMPOOL:
      if ((pool = VG_(HT_remove)(pools, arg[1])) != NULL) {
        end_all_of(pool);
        VG_(free)(pool);
      }
      break;
    case VG_USERREQ__MEMPOOL_ALLOC:
      new_pool_object(tid, create_pool(arg[1]), arg[2], arg[3]);
      break;
    case VG_USERREQ__MEMPOOL_FREE:
      if ((b = pool_object_at(arg[2])) != NULL && b->pool != NULL && b->pool->key == arg[1]) {
        end_pool_object(b, False);
        ended_pool_free++;
      }
      break;
    case VG_USERREQ__MEMPOOL_TRIM: /* objects not inside [addr, addr + size) end */
      if ((pool = pool_of(arg[1])) != NULL) {
        Block* next;
        for (b = pool->objects; b != NULL; b = next) {
          next = b->pool_next;
          if (b->lo < arg[2] || b->lo + b->size > arg[2] + arg[3]) {
            end_pool_object(b, False);
            ended_pool_end++;
          }
        }
      }
      break;
    case VG_USERREQ__MOVE_MEMPOOL:
      if ((pool = VG_(HT_remove)(pools, arg[1])) != NULL) {
        pool->key = arg[2];
        VG_(HT_add_node)(pools, pool);
      }
      break;
    case VG_USERREQ__MEMPOOL_CHANGE: /* moved or resized: as realloc */
      if ((b = pool_object_at(arg[2])) != NULL && b->pool != NULL) {
        pool = b->pool;
        end_pool_object(b, False);
        ended_realloc++;
        new_pool_object(tid, pool, arg[3], arg[4]);
      }
      break;
    case VG_USERREQ__MEMPOOL_EXISTS:
      *ret = pool_of(arg[1]) != NULL;
      return True;
    case VG_USERREQ__MALLOCLIKE_BLOCK:
      new_pool_object(tid, NULL, arg[1], arg[2]);
      break;
    case VG_USERREQ__FREELIKE_BLOCK:
      if ((b = pool_object_at(arg[1])) != NULL && b->pool == NULL) {
        end_pool_object(b, False);
        ended_free++;
      }
      break;
    case VG_USERREQ__RESIZEINPLACE_BLOCK:
      if ((b = pool_object_at(arg[1])) != NULL && b->pool == NULL) {
        end_pool_object(b, False);
        ended_realloc++;
        new_pool_object(tid, NULL, arg[1], arg[3]);
      }
      break;
    default:
      return False;
  }
  *ret = 0;
  return True;
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                      */

static void on_main(void) { main_seen = True; }

/* main's address, from glibc's __libc_start_main(main, ...): its first
   argument. A stripped program has no symbol "main", but libc exports that. */
static Addr main_addr = 0;
static VG_REGPARM(1) void on_libc_start_main(Addr main_fn) {
  if (main_addr == 0) main_addr = main_fn;
}

static Bool is_fn(const HChar* fn, const HChar* name) { /* "name" or a versioned "name@@GLIBC_..." */
  const SizeT n = VG_(strlen)(name);
  return VG_(strncmp)(fn, name, n) == 0 && (fn[n] == 0 || fn[n] == '@');
}

/* One access, inline when it hits the first cache entry (the common case:
   a compare and a store of the clock) or lies outside every block, else a
   call of touch_slow:
     hit = addr - cache[0].lo <u cache[0].len
     if (hit) cache[0].block->last_t = clock_bytes
     if (!hit && addr - bounds_lo <u bounds_span) touch_slow(addr)   */
static void add_access(IRSB* sb, IRExpr* addr, IRExpr* guard, void* opaque) {
  (void)opaque;
  IRExpr* lo = vg_load_word(sb, &cache[0].lo);
  IRExpr* len = vg_load_word(sb, &cache[0].len);
  IRExpr* offset = vg_bind(sb, Ity_I64, IRExpr_Binop(Iop_Sub64, addr, lo));
  IRExpr* hit = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, offset, len));
  IRExpr* from_lo = vg_bind(sb, Ity_I64, IRExpr_Binop(Iop_Sub64, addr, vg_load_word(sb, &bounds_lo)));
  IRExpr* inside = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, from_lo, vg_load_word(sb, &bounds_span)));
  IRExpr* miss = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_And1, vg_bind(sb, Ity_I1, IRExpr_Unop(Iop_Not1, hit)), inside));
  if (guard != NULL) {
    hit = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_And1, hit, guard));
    miss = vg_bind(sb, Ity_I1, IRExpr_Binop(Iop_And1, miss, guard));
  }
  IRExpr* block = vg_load_word(sb, &cache[0].block);
  IRExpr* last = vg_bind(sb, Ity_I64, IRExpr_Binop(Iop_Add64, block, mkIRExpr_HWord(offsetof(Block, last_t))));
  IRExpr* now = vg_load_word(sb, &clock_bytes);
  addStmtToIRSB(sb, IRStmt_StoreG(Iend_LE, last, now, hit));
  IRDirty* d = unsafeIRDirty_0_N(1, "drag_touch_slow", VG_(fnptr_to_fnentry)(on_access_slow), mkIRExprVec_1(addr));
  d->guard = miss;
  addStmtToIRSB(sb, IRStmt_Dirty(d));
}

/* At each instruction: notes main's start; says whether its accesses count. */
static Bool on_instr(IRSB* sb, Addr ip, void* opaque) {
  (void)opaque;
  const DiEpoch ep = VG_(current_DiEpoch)();
  const HChar* fn;
  if (!main_seen && clo_from_main) {
    const Bool entry = VG_(get_fnname_if_entry)(ep, ip, &fn);
    if ((main_addr != 0 && ip == main_addr) || (entry && VG_(strcmp)(fn, "main") == 0)) {
      IRDirty* d = unsafeIRDirty_0_N(0, "drag_on_main", VG_(fnptr_to_fnentry)(on_main), mkIRExprVec_0());
      addStmtToIRSB(sb, IRStmt_Dirty(d));
    } else if (entry && is_fn(fn, "__libc_start_main")) {
      IRExpr* first_arg = vg_bind(sb, Ity_I64, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RDI), Ity_I64));
      IRDirty* d = unsafeIRDirty_0_N(1, "drag_on_libc_start_main", VG_(fnptr_to_fnentry)(on_libc_start_main),
                                     mkIRExprVec_1(first_arg));
      addStmtToIRSB(sb, IRStmt_Dirty(d));
    }
  }
  return !(n_ignore_fn > 0 && ip_matches(ep, ip, clo_ignore_fn, n_ignore_fn));
}

static IRSB* instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                        const VexGuestExtents* vge, const VexArchInfo* archinfo, IRType gWordTy, IRType hWordTy) {
  (void)closure, (void)layout, (void)vge, (void)archinfo, (void)gWordTy, (void)hWordTy;
  return vg_instrument_accesses(sb_in, on_instr, add_access, NULL);
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

static void print_u128(VgFile* f, Area v) {
  HChar digits[48];
  Int n = 0;
  do {
    digits[n++] = (HChar)('0' + (Int)(v % 10));
    v /= 10;
  } while (v != 0);
  while (n > 0) VG_(fprintf)(f, "%c", digits[--n]);
}

static void print_json_string(VgFile* f, const HChar* s) {
  VG_(fprintf)(f, "\"");
  for (; *s; s++) {
    UChar c = (UChar)*s;
    if (c == '"' || c == '\\') VG_(fprintf)(f, "\\%c", c);
    else if (c < 0x20) VG_(fprintf)(f, "\\u%04x", c);
    else VG_(fprintf)(f, "%c", c);
  }
  VG_(fprintf)(f, "\"");
}

typedef struct {
  VgFile* f;
  Bool first;
} FrameWriter;

static void write_frame_indices(UInt n, DiEpoch ep, Addr ip, void* opaque) {
  (void)n;
  FrameWriter* w = opaque;
  const CodeAddress* c = code_address_of(ep, ip);
  for (UInt i = 0; i < c->count; i++) {
    VG_(fprintf)(w->f, "%s%u", w->first ? "" : ", ", c->first + i);
    w->first = False;
  }
}

/* The table: every address's frames, "NAME (FILE:LINE)", in index order. */
static void write_frame_table(VgFile* f) {
  Bool first = True;
  VG_(fprintf)(f, "  \"frames\": [");
  for (Word i = 0; i < VG_(sizeXA)(described); i++) {
    const Described* d = VG_(indexXA)(described, i);
    const Addr ip = d->ip;
    const DiEpoch ep = d->ep;
    InlIPCursor* iipc = VG_(new_IIPC)(ep, ip);
    do {
      VG_(fprintf)(f, "%s\n    ", first ? "" : ",");
      print_json_string(f, frame_text(VG_(describe_IP)(ep, ip, iipc)));
      first = False;
    } while (VG_(next_IIPC)(iipc));
    VG_(delete_IIPC)(iipc);
  }
  VG_(fprintf)(f, "\n  ]\n");
}

static void print_patterns(VgFile* f, const HChar* name, const HChar** list, Int n) {
  VG_(fprintf)(f, "  \"%s\": [", name);
  for (Int i = 0; i < n; i++) {
    VG_(fprintf)(f, "%s", i ? ", " : "");
    print_json_string(f, list[i]);
  }
  VG_(fprintf)(f, "],\n");
}

static void write_curves(VgFile* f, ULong* peak_ideal) {
  const ULong last = boundary_index(clock_bytes);
  const ULong stride = last / (ULong)clo_curve_points + 1;
  Long in_use = 0, ideal = 0;
  *peak_ideal = 0;
  Bool first = True;
  VG_(fprintf)(f, "  \"curves\": [");
  for (ULong k = 0; k <= last; k++) {
    in_use += in_use_diff[k];
    ideal += ideal_diff[k];
    if ((ULong)ideal > *peak_ideal) *peak_ideal = (ULong)ideal;
    if (k % stride == 0 || k == last) {
      VG_(fprintf)(f, "%s[%llu, %lld, %lld]", first ? "" : ", ", k << curve_shift, in_use, ideal);
      first = False;
    }
  }
  VG_(fprintf)(f, "],\n");
}

static void write_results(Int exitcode) {
  const HChar* path = VG_(expand_file_name)("--drag-out", clo_out);
  VgFile* f = VG_(fopen)(path, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, VKI_S_IRUSR | VKI_S_IWUSR | VKI_S_IRGRP | VKI_S_IROTH);
  if (f == NULL) {
    VG_(umsg)("strata-drag: cannot write %s\n", path);
    return;
  }
  VG_(fprintf)(f, "{\n  \"format\": \"strata-drag\",\n  \"version\": 2,\n");
  VG_(fprintf)(f, "  \"pid\": %d,\n  \"exit_code\": %d,\n", VG_(getpid)(), exitcode);
  VG_(fprintf)(f, "  \"from_main\": %s,\n  \"main_seen\": %s,\n", clo_from_main ? "true" : "false",
               main_seen ? "true" : "false");
  print_patterns(f, "ignore_fn", clo_ignore_fn, n_ignore_fn);
  print_patterns(f, "ignore_alloc_fn", clo_ignore_alloc_fn, n_ignore_alloc_fn);
  VG_(fprintf)(f, "  \"objects\": %llu,\n  \"allocation_time_bytes\": %llu,\n", objects_counted, clock_bytes);
  VG_(fprintf)(f, "  \"objects_live_at_exit\": %llu,\n  \"bytes_live_at_exit\": %llu,\n", objects_live_at_exit,
               bytes_live_at_exit);
  VG_(fprintf)(f, "  \"ended\": {\"free\": %llu, \"realloc\": %llu, \"pool_free\": %llu, \"pool_clear\": %llu, "
                  "\"exit\": %llu},\n", ended_free, ended_realloc, ended_pool_free, ended_pool_end, objects_live_at_exit);
  VG_(fprintf)(f, "  \"left_out\": {\"before_main\": %llu, \"ignored_alloc\": %llu, \"pool_chunks\": %llu},\n",
               before_main_objects, ignored_alloc_objects, pool_chunks);
  VG_(fprintf)(f, "  \"in_use_area\": ");
  print_u128(f, in_use_area);
  VG_(fprintf)(f, ",\n  \"ideal_area\": ");
  print_u128(f, ideal_area);
  VG_(fprintf)(f, ",\n  \"peak_in_use_bytes\": %llu,\n  \"curve_resolution_bytes\": %llu,\n", peak_in_use,
               1ULL << curve_shift);
  ULong peak_ideal;
  write_curves(f, &peak_ideal);
  VG_(fprintf)(f, "  \"peak_ideal_bytes\": %llu,\n  \"sites\": [", peak_ideal);
  Bool first = True;
  VG_(HT_ResetIter)(sites);
  Site* site;
  while ((site = VG_(HT_Next)(sites)) != NULL) {
    if (site->objects == 0) continue;
    VG_(fprintf)(f, "%s\n    {\"objects\": %llu, \"bytes\": %llu, \"live_at_exit\": %llu, \"in_use_area\": ",
                 first ? "" : ",", site->objects, site->bytes, site->live_at_exit);
    print_u128(f, site->in_use_area);
    VG_(fprintf)(f, ", \"ideal_area\": ");
    print_u128(f, site->ideal_area);
    VG_(fprintf)(f, ", \"drag_time\": ");
    print_u128(f, site->drag_time);
    VG_(fprintf)(f, ", \"frames\": [");
    FrameWriter w = {f, True};
    VG_(apply_ExeContext)(write_frame_indices, &w, site->ec);
    VG_(fprintf)(f, "]}");
    first = False;
  }
  VG_(fprintf)(f, "\n  ],\n");
  write_frame_table(f);
  VG_(fprintf)(f, "}\n");
  VG_(fclose)(f);
}

static void fini(Int exitcode) {
  /* What is still live ends at exit. */
  for (;;) {
    VG_(OSetGen_ResetIter)(heap_blocks);
    Block* b = VG_(OSetGen_Next)(heap_blocks);
    if (b == NULL) break;
    Addr a = b->lo;
    end_object(b, True);
    VG_(OSetGen_Remove)(heap_blocks, &a);
    VG_(OSetGen_FreeNode)(heap_blocks, b);
  }
  for (;;) {
    VG_(OSetGen_ResetIter)(pool_blocks);
    Block* b = VG_(OSetGen_Next)(pool_blocks);
    if (b == NULL) break;
    end_pool_object(b, True);
  }
  write_results(exitcode);
}

/* ------------------------------------------------------------------ */
/* Initialisation                                                       */

static void post_clo_init(void) {
  in_use_diff = VG_(calloc)("drag.curve", CURVE_BOUNDARIES + 1, sizeof(Long));
  ideal_diff = VG_(calloc)("drag.curve", CURVE_BOUNDARIES + 1, sizeof(Long));
}

static void pre_clo_init(void) {
  VG_(details_name)("strata-drag");
  VG_(details_version)("1");
  VG_(details_description)("object drag: time from an object's last access to its reclamation");
  VG_(details_copyright_author)("strata authors");
  VG_(details_bug_reports_to)("the strata issue tracker");
  VG_(details_avg_translation_sizeB)(600);

  VG_(basic_tool_funcs)(post_clo_init, instrument, fini);
  VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
  VG_(needs_client_requests)(handle_client_request);
  VG_(needs_malloc_replacement)(drag_malloc, drag_malloc, drag_new_aligned, drag_malloc, drag_new_aligned,
                                drag_memalign, drag_calloc, drag_free, drag_free, drag_free_aligned, drag_free,
                                drag_free_aligned, drag_realloc, drag_usable_size, 16);
  VG_(track_pre_mem_read)(on_pre_mem_read);
  VG_(track_pre_mem_read_asciiz)(on_pre_mem_read_asciiz);
  VG_(track_pre_mem_write)(on_pre_mem_read);
  VG_(track_post_mem_write)(on_post_mem_write);

  heap_blocks = VG_(OSetGen_Create)(offsetof(Block, lo), cmp_interval, VG_(malloc), "drag.heap", VG_(free));
  pool_blocks = VG_(OSetGen_Create)(offsetof(Block, lo), cmp_interval, VG_(malloc), "drag.pool_objects", VG_(free));
  sites = VG_(HT_construct)("drag.sites");
  code_addresses = VG_(HT_construct)("drag.code_addresses");
  described = VG_(newXA)(VG_(malloc), "drag.described", VG_(free), sizeof(Described));
  pools = VG_(HT_construct)("drag.pools");
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
