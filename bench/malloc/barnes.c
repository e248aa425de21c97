/* A Barnes-Hut n-body simulation (one thread; the pattern of the Olden/SPLASH
 * barnes that mimalloc-bench runs, where issue 20 measured libstrata at 1.05x
 * mimalloc's time): many small allocations, few frees.
 *
 * --bodies bodies (one malloc each, 96 B, live for the whole run) start in
 * a few Plummer-like clusters. Every step builds an octree over them from
 * scratch: each split of an occupied octant mallocs a cell (112 B), so a step
 * allocates about one cell per body and frees nothing. Then a post-order walk
 * sums each cell's mass and centre of mass, each body's acceleration is
 * summed over the tree (a cell far enough away, size/distance < theta, counts
 * as one point), the bodies move (leapfrog), and the tree is dropped: every
 * cell checked and freed. The time is mostly the force walk, so the
 * allocator shows through where it put the cells (how many lines and pages
 * the walk touches) and through the cost of the allocations themselves.
 *
 * Each cell carries a tag (its allocation number) checked when it is freed;
 * with --verify, every cell's body count and mass are recomputed from its
 * subtree and each body's tag is checked after every step. The arithmetic
 * runs in the same order under every allocator (children in octant order),
 * so the checksum (a hash of the final positions) depends only on the
 * options. */
#include <math.h>

#include "bench_common.h"

enum { kMaxDepth = 64, kBodyKind = 1, kCellKind = 2 };

static bench_option options[] = {
    {"bodies", 8192, "bodies (>= 2)"},
    {"steps", 80, "time steps (a tree built and dropped per step)"},
    {"theta", 100, "opening angle in hundredths (a cell counts as a point when size/distance < theta)"},
    {"seed", 1, "random seed (initial positions and velocities)"},
};

/* A tree slot holds a body or a cell; both start with their kind. */
typedef struct body {
  uint32_t kind;
  uint32_t index;
  uint64_t tag;
  double mass;
  double pos[3], vel[3], acc[3];
} body;

typedef struct cell {
  uint32_t kind;
  uint32_t bodies; /* in this subtree */
  uint64_t tag;    /* allocation number, checked when the cell is freed */
  double mass;
  double centre[3]; /* of mass, once summed; the geometric centre while the tree is built */
  void *child[8];
} cell;

typedef struct {
  uint64_t cells_allocated, live_cells, peak_live_bytes, live_body_bytes;
  double theta, softening2;
  int verify_full;
} sim_state;

static uint32_t kind_of(const void *node) { return *(const uint32_t *)node; }

/* ---- building the tree -------------------------------------------------- */

static cell *new_cell(sim_state *s, const double centre[3]) {
  cell *c = malloc(sizeof *c);
  if (c == NULL) bench_fail("malloc returned NULL", NULL);
  c->kind = kCellKind;
  c->bodies = 0;
  c->tag = ++s->cells_allocated;
  c->mass = 0;
  memcpy(c->centre, centre, sizeof c->centre);
  for (int k = 0; k < 8; k++) c->child[k] = NULL;
  s->live_cells++;
  uint64_t live = s->live_cells * sizeof(cell) + s->live_body_bytes;
  if (live > s->peak_live_bytes) s->peak_live_bytes = live;
  return c;
}

static int octant(const cell *c, const double pos[3]) {
  return (pos[0] >= c->centre[0]) | (pos[1] >= c->centre[1]) << 1 | (pos[2] >= c->centre[2]) << 2;
}

static void child_centre(const cell *c, int oct, double half, double out[3]) {
  for (int d = 0; d < 3; d++) out[d] = c->centre[d] + ((oct >> d & 1) ? half / 2 : -half / 2);
}

/* Inserts b below root (a cube of half-width root_half): an occupied octant
 * is split into a new cell, which takes the body that was there. */
static void insert(sim_state *s, cell *root, double root_half, body *b) {
  cell *c = root;
  double half = root_half;
  for (int depth = 0;; depth++) {
    if (depth == kMaxDepth) bench_fail("two bodies at one position", b);
    c->bodies++;
    int oct = octant(c, b->pos);
    void *slot = c->child[oct];
    if (slot == NULL) {
      c->child[oct] = b;
      return;
    }
    if (kind_of(slot) == kBodyKind) {
      double centre[3];
      child_centre(c, oct, half, centre);
      cell *split = new_cell(s, centre);
      body *old = slot;
      split->child[octant(split, old->pos)] = old;
      split->bodies = 1;
      c->child[oct] = split;
    }
    c = c->child[oct];
    half /= 2;
  }
}

/* The root: a cube around every body. */
static cell *build_tree(sim_state *s, body **bodies, uint64_t n, double *root_half) {
  double lo[3], hi[3];
  for (int d = 0; d < 3; d++) lo[d] = hi[d] = bodies[0]->pos[d];
  for (uint64_t i = 1; i < n; i++)
    for (int d = 0; d < 3; d++) {
      if (bodies[i]->pos[d] < lo[d]) lo[d] = bodies[i]->pos[d];
      if (bodies[i]->pos[d] > hi[d]) hi[d] = bodies[i]->pos[d];
    }
  double centre[3], half = 0;
  for (int d = 0; d < 3; d++) {
    centre[d] = (lo[d] + hi[d]) / 2;
    if ((hi[d] - lo[d]) / 2 > half) half = (hi[d] - lo[d]) / 2;
  }
  half = half * 1.0001 + 1e-9;
  cell *root = new_cell(s, centre);
  for (uint64_t i = 0; i < n; i++) insert(s, root, half, bodies[i]);
  *root_half = half;
  return root;
}

/* Post-order: each cell's mass and centre of mass from its children. */
static void sum_mass(cell *c) {
  double m = 0, cm[3] = {0, 0, 0};
  for (int k = 0; k < 8; k++) {
    void *slot = c->child[k];
    if (slot == NULL) continue;
    const double *p;
    double cmass;
    if (kind_of(slot) == kCellKind) {
      cell *sub = slot;
      sum_mass(sub);
      p = sub->centre;
      cmass = sub->mass;
    } else {
      body *b = slot;
      p = b->pos;
      cmass = b->mass;
    }
    m += cmass;
    for (int d = 0; d < 3; d++) cm[d] += cmass * p[d];
  }
  c->mass = m;
  for (int d = 0; d < 3; d++) c->centre[d] = cm[d] / m;
}

/* ---- forces ---------------------------------------------------------------- */

static void add_pull(const sim_state *s, body *b, const double p[3], double mass) {
  double dx[3], r2 = s->softening2;
  for (int d = 0; d < 3; d++) {
    dx[d] = p[d] - b->pos[d];
    r2 += dx[d] * dx[d];
  }
  double inv = 1.0 / sqrt(r2);
  double f = mass * inv * inv * inv;
  for (int d = 0; d < 3; d++) b->acc[d] += f * dx[d];
}

/* b's acceleration from the tree, walked with an explicit stack. */
static void walk_forces(const sim_state *s, body *b, cell *root, double root_half) {
  struct {
    const cell *c;
    double size;
  } stack[8 * kMaxDepth + 8];
  int top = 0;
  stack[top].c = root;
  stack[top++].size = 2 * root_half;
  for (int d = 0; d < 3; d++) b->acc[d] = 0;
  while (top > 0) {
    top--;
    const cell *c = stack[top].c;
    double size = stack[top].size;
    double r2 = 0;
    for (int d = 0; d < 3; d++) r2 += (c->centre[d] - b->pos[d]) * (c->centre[d] - b->pos[d]);
    if (size * size < s->theta * s->theta * r2) {
      add_pull(s, b, c->centre, c->mass);
      continue;
    }
    for (int k = 7; k >= 0; k--) { /* pushed backwards: visited in octant order */
      void *slot = c->child[k];
      if (slot == NULL) continue;
      if (kind_of(slot) == kCellKind) {
        stack[top].c = slot;
        stack[top++].size = size / 2;
      } else if (slot != b) {
        const body *other = slot;
        add_pull(s, b, other->pos, other->mass);
      }
    }
  }
}

/* ---- dropping the tree ------------------------------------------------------ */

/* --verify: recounts the bodies and mass under c against what it holds. */
static void check_subtree(const cell *c, uint64_t *bodies, double *mass) {
  uint64_t count = 0;
  double m = 0;
  for (int k = 0; k < 8; k++) {
    const void *slot = c->child[k];
    if (slot == NULL) continue;
    if (kind_of(slot) == kCellKind) {
      uint64_t sub_count;
      double sub_mass;
      check_subtree(slot, &sub_count, &sub_mass);
      count += sub_count;
      m += sub_mass;
    } else if (kind_of(slot) == kBodyKind) {
      count++;
      m += ((const body *)slot)->mass;
    } else {
      bench_fail("tree slot overwritten", slot);
    }
  }
  if (count != c->bodies || fabs(m - c->mass) > 1e-9 * (1 + m)) bench_fail("cell contents overwritten", c);
  *bodies = count;
  *mass = m;
}

/* Post-order: checks each cell's tag and frees it; returns the tags' sum. */
static uint64_t drop_tree(sim_state *s, cell *c) {
  uint64_t sum = 0;
  for (int k = 0; k < 8; k++)
    if (c->child[k] != NULL && kind_of(c->child[k]) == kCellKind) sum += drop_tree(s, c->child[k]);
  if (c->kind != kCellKind || c->tag == 0 || c->tag > s->cells_allocated) bench_fail("cell header overwritten", c);
  sum += c->tag;
  s->live_cells--;
  free(c);
  return sum;
}

/* ---- the run ------------------------------------------------------------------ */

/* A point of a Plummer-like cluster: radius from the Plummer profile,
 * direction uniform, truncated at 8 scale radii. */
static void plummer_point(bench_rng *rng, double out[3]) {
  double u = (double)(bench_next(rng) >> 11) * 0x1.0p-53 * 0.999 + 0.0005;
  double r = 1.0 / sqrt(pow(u, -2.0 / 3.0) - 1.0);
  if (r > 8) r = 8;
  double v[3], n2;
  do {
    n2 = 0;
    for (int d = 0; d < 3; d++) {
      v[d] = (double)(bench_next(rng) >> 11) * 0x1.0p-52 - 1.0;
      n2 += v[d] * v[d];
    }
  } while (n2 > 1 || n2 < 1e-6);
  for (int d = 0; d < 3; d++) out[d] = v[d] / sqrt(n2) * r;
}

static uint64_t body_tag(uint64_t i) { return (i + 1) * 0x9E3779B97F4A7C15ull; }

static void check_body(const body *b, uint64_t i) {
  if (b->kind != kBodyKind || b->index != i || b->tag != body_tag(i) || !(b->mass > 0))
    bench_fail("body overwritten", b);
}

/* Fills bodies[0..n) with fresh bodies from malloc. */
static void make_bodies(sim_state *s, body **bodies, uint64_t n, bench_rng *rng) {
  static const double kClusters[3][3] = {{0, 0, 0}, {6, 1, -2}, {-4, 5, 3}};
  for (uint64_t i = 0; i < n; i++) {
    body *b = malloc(sizeof *b);
    if (b == NULL) bench_fail("malloc returned NULL", NULL);
    memset(b, 0, sizeof *b);
    b->kind = kBodyKind;
    b->index = (uint32_t)i;
    b->tag = body_tag(i);
    b->mass = 1.0 / (double)n;
    const double *centre = kClusters[i % 3];
    plummer_point(rng, b->pos);
    for (int d = 0; d < 3; d++) {
      b->pos[d] += centre[d];
      b->vel[d] = ((double)(bench_next(rng) >> 11) * 0x1.0p-53 - 0.5) * 0.2;
    }
    bodies[i] = b;
  }
  s->live_body_bytes = n * sizeof(body);
}

/* One step: build, sum, forces, move, drop. Returns the dropped tags' sum. */
static uint64_t step(sim_state *s, body **bodies, uint64_t n, double dt) {
  double half;
  cell *root = build_tree(s, bodies, n, &half);
  sum_mass(root);
  if (root->bodies != n) bench_fail("tree lost a body", root);
  if (s->verify_full) {
    uint64_t count;
    double mass;
    check_subtree(root, &count, &mass);
    for (uint64_t i = 0; i < n; i++) check_body(bodies[i], i);
  }
  for (uint64_t i = 0; i < n; i++) walk_forces(s, bodies[i], root, half);
  for (uint64_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      bodies[i]->vel[d] += dt * bodies[i]->acc[d];
      bodies[i]->pos[d] += dt * bodies[i]->vel[d];
    }
  uint64_t tags = drop_tree(s, root);
  if (s->live_cells != 0) bench_fail("a cell was not dropped", NULL);
  return tags;
}

static uint64_t position_hash(body **bodies, uint64_t n) {
  uint64_t h = 0;
  for (uint64_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      int64_t q = (int64_t)llround(bodies[i]->pos[d] * 1048576.0);
      h = (h ^ (uint64_t)q) * 0x100000001B3ull;
    }
  return h;
}

static void check_and_free_bodies(body **bodies, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    check_body(bodies[i], i);
    free(bodies[i]);
  }
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  const uint64_t n = options[0].value, steps = options[1].value;
  bench_require_range(argv[0], "--bodies", n, 2, 1u << 24);
  bench_require_positive(argv[0], "--theta", options[2].value);
  sim_state s = {0, 0, 0, 0, (double)options[2].value / 100.0, 0.01 * 0.01, flags.verify_full};
  body **bodies = bench_map(n * sizeof *bodies);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  bench_rng rng = {options[3].value};
  make_bodies(&s, bodies, n, &rng);
  uint64_t tags = 0;
  for (uint64_t t = 0; t < steps; t++) tags += step(&s, bodies, n, 0.01);
  uint64_t hash = position_hash(bodies, n);
  check_and_free_bodies(bodies, n);
  double elapsed = bench_now_seconds() - start;

  uint64_t all_tags = s.cells_allocated * (s.cells_allocated + 1) / 2;
  if (tags != all_tags) bench_fail("dropped cells do not match the allocated ones", NULL);
  bench_report report = {"barnes", s.cells_allocated + n, elapsed, s.peak_live_bytes, rss_start, hash, 0};
  bench_print(&report);
  return 0;
}
