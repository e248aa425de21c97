// mempool — Blender's BLI_mempool under a sculpt brush (2026 paper §2.2.3,
// Tables 1 and 4: "sculpt", a hybrid allocator).
//
// A triangle mesh in BMesh's shape (vertices, faces, and one loop per face
// corner, linked into a disk list around its vertex) lives in three element
// pools, plus a pool of undo records. Each stroke generates a fresh grid mesh
// and drags a brush across it; every step iterates over all live elements:
//   1. vertices: normals of the vertices under the brush;
//   2. vertices: displace them (along the normal, and pinched towards the
//      brush centre), allocating an undo record on the first touch — while
//      the vertex pool is being iterated;
//   3. faces: find edges under the brush that are too long (split them at the
//      midpoint: 2 faces become 4) or too short (collapse them: a vertex and
//      2 faces die); the topology changes run in a canonical order (sorted by
//      element id), so the result does not depend on the pool's order;
//   4. faces, then vertices: free the elements that died — while iterating.
// At the end of a stroke the undo records are summed, the mesh is digested
// (elements sorted by id) and every pool is freed in bulk.
//
// Modes (the allocator behind each element pool):
//   custom  strata::layers::MempoolHeap: chunks of 512 slots, LIFO free list,
//           iteration over the slots skipping freed ones; clear() in bulk.
//   naive   every element malloc'd; a hash set of live elements (open
//           addressing, keyed by a per-pool serial number, so its order does
//           not depend on addresses) for iteration and bulk free — the 2026
//           paper's Table 4 method for sculpt.
//   reap    one strata::reap per mesh and a child reap per element pool
//           (elements of one kind together, as in the custom pools),
//           elements freed individually; where the mesh iterates (vertices,
//           faces, undo records; loops are only counted) a dense array per
//           pool of its live elements, each element's place in it stored
//           after the element, for iteration and an O(1) free; clearing the
//           mesh's reap clears its children.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "strata/layers.hpp"
#include "strata/reap.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

// ---------------------------------------------------------------- the mesh --

struct Loop;
struct Undo;

// Every element keeps an integer in its second word: MempoolHeap tags freed
// slots there, and a live element's small integer never equals the tag.
struct Vert {
  std::uint64_t id;
  std::uint64_t flags;  // kDead | step << 8 when locked by a collapse
  float co[3];
  float no[3];
  Loop* disk;  // the loops at this vertex
  Undo* undo;  // original position, once the brush has touched it
};

struct Face {
  std::uint64_t id;
  std::uint64_t flags;
  Loop* first;  // three loops, linked by next
};

struct Loop {
  Vert* v;
  Face* f;  // second word: a pointer
  Loop* next;
  Loop* disk_prev;
  Loop* disk_next;
};

struct Undo {
  Vert* v;
  std::uint64_t vertex_id;
  float orig[3];
};

constexpr std::uint64_t kDead = 1;

// The naive hash set's hash of a serial number (splitmix64's finalizer).
std::uint64_t hash_serial(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ------------------------------------------------------------ the policies --

template <class T>
T* construct(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  return new (p) T{};
}

// custom: Blender's BLI_mempool, built from strata's MempoolHeap layer.
struct CustomPolicy {
  struct Arena {
    void clear() {}
  };
  template <class T, bool kIterated = true>  // BLI_mempool iterates any pool at no cost per element
  class Pool {
   public:
    explicit Pool(Arena&) {}
    T* create() { return construct<T>(heap_.malloc(sizeof(T))); }
    void destroy(T* t) { heap_.free(t); }
    template <class F>
    void for_each(F&& f) {
      auto it = heap_.iterate();
      while (void* p = it.next()) f(static_cast<T*>(p));
    }
    void clear() { heap_.clear(); }
    std::size_t size() const { return heap_.liveObjects(); }

   private:
    strata::layers::MempoolHeap<sizeof(T), 512, strata::layers::MallocHeap> heap_;
  };
};

// naive: malloc per element, a hash set of the live ones (open addressing,
// linear probing, tombstones), keyed by a serial number so that iteration
// order depends only on the program's operations.
struct NaivePolicy {
  struct Arena {
    void clear() {}
  };
  template <class T, bool kIterated = true>  // the hash set serves bulk free too: every pool keeps it
  class Pool {
    struct alignas(16) Header {
      std::uint64_t serial;
    };
    static_assert(sizeof(Header) == 16);

   public:
    explicit Pool(Arena&) : slots_(16, nullptr) {}
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool() { clear(); }

    T* create() {
      if (iterating_) throw std::logic_error("naive pool: insertion while iterating");
      auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + sizeof(T)));
      if (h == nullptr) throw std::bad_alloc();
      h->serial = next_serial_++;
      insert(h);
      return construct<T>(h + 1);
    }
    void destroy(T* t) {
      Header* h = reinterpret_cast<Header*>(t) - 1;
      std::size_t i = home(h->serial);
      while (slots_[i] != h) i = (i + 1) & mask();
      slots_[i] = tombstone();
      --live_;
      ++tombstones_;
      std::free(h);
    }
    template <class F>
    void for_each(F&& f) {
      iterating_ = true;
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        Header* h = slots_[i];
        if (h != nullptr && h != tombstone()) f(reinterpret_cast<T*>(h + 1));
      }
      iterating_ = false;
    }
    void clear() {
      for (Header*& h : slots_) {
        if (h != nullptr && h != tombstone()) std::free(h);
        h = nullptr;
      }
      live_ = tombstones_ = 0;
    }
    std::size_t size() const { return live_; }

   private:
    static Header* tombstone() { return reinterpret_cast<Header*>(alignof(Header)); }
    std::size_t mask() const { return slots_.size() - 1; }
    std::size_t home(std::uint64_t serial) const { return hash_serial(serial) & mask(); }

    void insert(Header* h) {
      // Over 3/4 full: double when live objects fill over 1/4, else just
      // sweep the tombstones out.
      if ((live_ + tombstones_ + 1) * 4 > slots_.size() * 3)
        rehash(live_ * 4 > slots_.size() ? slots_.size() * 2 : slots_.size());
      std::size_t i = home(h->serial);
      while (slots_[i] != nullptr && slots_[i] != tombstone()) i = (i + 1) & mask();
      if (slots_[i] == tombstone()) --tombstones_;
      slots_[i] = h;
      ++live_;
    }
    void rehash(std::size_t capacity) {
      std::vector<Header*> old(capacity, nullptr);
      old.swap(slots_);
      tombstones_ = 0;
      for (Header* h : old) {
        if (h == nullptr || h == tombstone()) continue;
        std::size_t i = home(h->serial);
        while (slots_[i] != nullptr) i = (i + 1) & mask();
        slots_[i] = h;
      }
    }

    std::vector<Header*> slots_;  // a power of two
    std::size_t live_ = 0, tombstones_ = 0;
    std::uint64_t next_serial_ = 0;
    bool iterating_ = false;
  };
};

// reap: a child reap per pool under the mesh's reap; elements freed one by
// one as they die. A reap cannot walk its objects, so the pools the mesh
// iterates (vertices, faces, undo records) keep their live elements'
// addresses in a dense array, and each element its place in that array in
// the 4 bytes after it: a free empties its place in O(1), and the next walk
// closes the gaps. Those 4 bytes lie in the slot's spare bytes (a
// 56-byte vertex asks for 60 and takes the same 64-byte slot), where a
// doubly-linked list's 16 bytes made it 80; and the walk reads an array whose
// loads do not wait for each other, where a list's waited for the last miss.
struct ReapPolicy {
  using Arena = strata::reap;
  template <class T>
  class ArrayedPool {
    static_assert(std::is_trivially_copyable_v<T>);

   public:
    explicit ArrayedPool(Arena& mesh) : reap_(mesh) {}
    T* create() {
      T* t = construct<T>(reap_.malloc(sizeof(T) + sizeof(std::uint32_t)));
      set_place(t, live_.size());
      live_.push_back(t);
      return t;
    }
    // The element's place is left empty; the next walk closes the gaps.
    void destroy(T* t) {
      live_[place_of(t)] = nullptr;
      ++gaps_;
      reap_.free(t);
    }
    // In creation order; f may destroy the element it is given (not others)
    // and must not create any.
    template <class F>
    void for_each(F&& f) {
      T** const places = live_.data();
      T** const end = places + live_.size();  // f creates nothing: the array stays
      if (gaps_ == 0) {  // every place is taken: a plain walk (f may empty the one it is at)
        for (T** at = places; at != end; ++at) f(*at);
        return;
      }
      // Each element moves down over the gaps before it.
      T** kept = places;
      for (T** at = places; at != end; ++at) {
        T* t = *at;
        if (t == nullptr) continue;
        f(t);
        if (*at == nullptr) continue;  // f destroyed it
        if (kept != at) {
          *kept = t;
          set_place(t, static_cast<std::size_t>(kept - places));
        }
        ++kept;
      }
      live_.resize(static_cast<std::size_t>(kept - places));
      gaps_ = 0;
    }
    // The mesh clears the reap itself.
    void clear() {
      live_.clear();
      gaps_ = 0;
    }
    std::size_t size() const { return live_.size() - gaps_; }

   private:
    static std::uint32_t place_of(const T* t) {
      std::uint32_t place;
      std::memcpy(&place, reinterpret_cast<const char*>(t) + sizeof(T), sizeof place);
      return place;
    }
    static void set_place(T* t, std::size_t place) {
      const auto p = static_cast<std::uint32_t>(place);
      std::memcpy(reinterpret_cast<char*>(t) + sizeof(T), &p, sizeof p);
    }
    strata::reap reap_;      // a child of the mesh's reap
    std::vector<T*> live_;  // the live elements in creation order, nullptr where one was freed
    std::size_t gaps_ = 0;
  };

  // A pool nobody iterates: its elements alone, counted.
  template <class T>
  class UnlistedPool {
   public:
    explicit UnlistedPool(Arena& mesh) : reap_(mesh) {}
    T* create() {
      T* t = construct<T>(reap_.malloc(sizeof(T)));
      ++live_;
      return t;
    }
    void destroy(T* t) {
      --live_;
      reap_.free(t);
    }
    void clear() { live_ = 0; }  // the mesh clears the reap itself
    std::size_t size() const { return live_; }

   private:
    strata::reap reap_;
    std::size_t live_ = 0;
  };

  template <class T, bool kIterated = true>
  using Pool = std::conditional_t<kIterated, ArrayedPool<T>, UnlistedPool<T>>;
};

// ------------------------------------------------------------- the sculpt --

struct Brush {
  float x, y;      // centre
  float radius;
  float lift;      // displacement along the normal per step
  float pinch;     // pull towards the centre per step
};

struct Edge {
  std::uint64_t lo_id, hi_id;
  Vert* lo;
  Vert* hi;
  bool operator<(const Edge& o) const { return lo_id != o.lo_id ? lo_id < o.lo_id : hi_id < o.hi_id; }
  bool operator==(const Edge& o) const { return lo_id == o.lo_id && hi_id == o.hi_id; }
};

struct Totals {
  std::uint64_t splits = 0, collapses = 0, undo_records = 0;
  std::uint64_t undo_distance = 0;  // summed in integers: order-independent
  std::uint64_t peak_verts = 0, peak_faces = 0;
};

float length(const float a[3], const float b[3]) {
  const float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

template <class Policy>
class Mesh {
  template <class T, bool kIterated = true>
  using Pool = typename Policy::template Pool<T, kIterated>;

 public:
  Mesh(typename Policy::Arena& arena, float split_length, float collapse_length)
      : arena_(arena), verts_(arena), faces_(arena), loops_(arena), undos_(arena),
        split_length_(split_length), collapse_length_(collapse_length) {}
  ~Mesh() { clear(); }

  // A grid of n x n vertices over the unit square, with a little noise in z.
  void generate(std::size_t n, Rng& rng) {
    std::vector<Vert*> grid(n * n);
    for (std::size_t i = 0; i < n * n; ++i) {
      Vert* v = verts_.create();
      v->id = i;
      v->co[0] = static_cast<float>(i % n) / static_cast<float>(n - 1);
      v->co[1] = static_cast<float>(i / n) / static_cast<float>(n - 1);
      v->co[2] = static_cast<float>(rng.unit() * 0.002);
      grid[i] = v;
    }
    std::uint64_t face_id = 0;
    for (std::size_t y = 0; y + 1 < n; ++y) {
      for (std::size_t x = 0; x + 1 < n; ++x) {
        Vert* a = grid[y * n + x];
        Vert* b = grid[y * n + x + 1];
        Vert* c = grid[(y + 1) * n + x + 1];
        Vert* d = grid[(y + 1) * n + x];
        make_face(a, b, c, face_id++);
        make_face(a, c, d, face_id++);
      }
    }
    next_vert_id_ = n * n;
    next_face_id_ = face_id;
  }

  void step(const Brush& brush, std::uint64_t step_number, Totals& totals) {
    step_ = step_number;
    compute_normals(brush);
    displace(brush);
    find_edges(brush);
    for (const Edge& e : splits_) totals.splits += split(e.lo, e.hi);
    bool any_dead = false;
    for (const Edge& e : collapses_) {
      if (collapse(e.lo, e.hi, totals)) {
        ++totals.collapses;
        any_dead = true;
      }
    }
    if (any_dead) free_dead();
    totals.peak_verts = std::max<std::uint64_t>(totals.peak_verts, verts_.size());
    totals.peak_faces = std::max<std::uint64_t>(totals.peak_faces, faces_.size());
  }

  // End of a stroke: sum the undo records, digest the mesh, free everything.
  void finish(Checksum& sum, Totals& totals) {
    undos_.for_each([&](Undo* u) { retire(u, totals); });
    std::vector<Vert*> verts;
    verts_.for_each([&](Vert* v) { verts.push_back(v); });
    std::sort(verts.begin(), verts.end(), [](Vert* a, Vert* b) { return a->id < b->id; });
    sum.add(verts.size());
    for (Vert* v : verts) {
      sum.add(v->id);
      for (float c : v->co) sum.add_double(c);
    }
    std::vector<Face*> faces;
    faces_.for_each([&](Face* f) { faces.push_back(f); });
    std::sort(faces.begin(), faces.end(), [](Face* a, Face* b) { return a->id < b->id; });
    sum.add(faces.size());
    for (Face* f : faces) {
      sum.add(f->id);
      const Loop* l = f->first;
      for (int i = 0; i < 3; ++i, l = l->next) sum.add(l->v->id);
    }
    sum.add(loops_.size());
    sum.add(totals.undo_distance);
    clear();
  }

 private:
  // ---- topology

  void disk_link(Loop* l) {
    Vert* v = l->v;
    l->disk_prev = nullptr;
    l->disk_next = v->disk;
    if (v->disk != nullptr) v->disk->disk_prev = l;
    v->disk = l;
  }
  void disk_unlink(Loop* l) {
    (l->disk_prev ? l->disk_prev->disk_next : l->v->disk) = l->disk_next;
    if (l->disk_next != nullptr) l->disk_next->disk_prev = l->disk_prev;
  }

  Face* make_face(Vert* a, Vert* b, Vert* c, std::uint64_t id) {
    Face* f = faces_.create();
    f->id = id;
    Loop* corners[3];
    Vert* vs[3] = {a, b, c};
    for (int i = 0; i < 3; ++i) {
      Loop* l = loops_.create();
      l->v = vs[i];
      l->f = f;
      disk_link(l);
      corners[i] = l;
    }
    for (int i = 0; i < 3; ++i) corners[i]->next = corners[(i + 1) % 3];
    f->first = corners[0];
    return f;
  }

  // Takes the face out of the disks; kill_face frees it now, a collapse marks
  // it dead and free_dead frees it in the next face pass.
  void unlink_face(Face* f) {
    Loop* l = f->first;
    for (int i = 0; i < 3; ++i, l = l->next) disk_unlink(l);
  }
  void free_face(Face* f) {
    Loop* l = f->first;
    for (int i = 0; i < 3; ++i) {
      Loop* next = l->next;
      loops_.destroy(l);
      l = next;
    }
    faces_.destroy(f);
  }
  void kill_face(Face* f) {
    unlink_face(f);
    free_face(f);
  }

  // The loop at a whose next corner is b (edge a -> b), or nullptr.
  static Loop* find_loop(Vert* a, Vert* b) {
    for (Loop* l = a->disk; l != nullptr; l = l->disk_next)
      if (l->next->v == b) return l;
    return nullptr;
  }

  // ---- the passes

  void compute_normals(const Brush& brush) {
    verts_.for_each([&](Vert* v) {
      if (falloff(brush, v) <= 0.0f) return;
      float n[3] = {0, 0, 0};
      for (const Loop* l = v->disk; l != nullptr; l = l->disk_next) {
        const float* p = l->v->co;
        const float* q = l->next->v->co;
        const float* r = l->next->next->v->co;
        const float e1[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
        const float e2[3] = {r[0] - p[0], r[1] - p[1], r[2] - p[2]};
        n[0] += e1[1] * e2[2] - e1[2] * e2[1];
        n[1] += e1[2] * e2[0] - e1[0] * e2[2];
        n[2] += e1[0] * e2[1] - e1[1] * e2[0];
      }
      const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int i = 0; i < 3; ++i) v->no[i] = len > 0 ? n[i] / len : (i == 2 ? 1.0f : 0.0f);
    });
  }

  void displace(const Brush& brush) {
    verts_.for_each([&](Vert* v) {
      const float w = falloff(brush, v);
      if (w <= 0.0f) return;
      if (v->undo == nullptr) {  // a new element in another pool, mid-iteration
        Undo* u = undos_.create();
        u->v = v;
        u->vertex_id = v->id;
        for (int i = 0; i < 3; ++i) u->orig[i] = v->co[i];
        v->undo = u;
      }
      for (int i = 0; i < 3; ++i) v->co[i] += v->no[i] * brush.lift * w;
      v->co[0] += (brush.x - v->co[0]) * brush.pinch * w;
      v->co[1] += (brush.y - v->co[1]) * brush.pinch * w;
    });
  }

  // Edges under the brush that are too long or too short, each once, sorted.
  void find_edges(const Brush& brush) {
    splits_.clear();
    collapses_.clear();
    faces_.for_each([&](Face* f) {
      const Loop* l = f->first;
      for (int i = 0; i < 3; ++i, l = l->next) {
        Vert* a = l->v;
        Vert* b = l->next->v;
        const float mx = 0.5f * (a->co[0] + b->co[0]) - brush.x;
        const float my = 0.5f * (a->co[1] + b->co[1]) - brush.y;
        if (mx * mx + my * my >= brush.radius * brush.radius) continue;
        const float len = length(a->co, b->co);
        if (len <= split_length_ && len >= collapse_length_) continue;
        const Edge e = a->id < b->id ? Edge{a->id, b->id, a, b} : Edge{b->id, a->id, b, a};
        (len > split_length_ ? splits_ : collapses_).push_back(e);
      }
    });
    for (auto* edges : {&splits_, &collapses_}) {
      std::sort(edges->begin(), edges->end());
      edges->erase(std::unique(edges->begin(), edges->end()), edges->end());
    }
  }

  // Splits edge a-b at its midpoint: each face on it becomes two.
  int split(Vert* a, Vert* b) {
    Loop* ab = find_loop(a, b);
    Loop* ba = find_loop(b, a);
    if (ab == nullptr && ba == nullptr) return 0;
    Vert* m = verts_.create();
    m->id = next_vert_id_++;
    for (int i = 0; i < 3; ++i) m->co[i] = 0.5f * (a->co[i] + b->co[i]);
    if (ab != nullptr) {
      Face* f = ab->f;
      Vert* c = ab->next->next->v;
      kill_face(f);
      make_face(a, m, c, next_face_id_++);
      make_face(m, b, c, next_face_id_++);
    }
    if (ba != nullptr) {
      Face* g = ba->f;
      Vert* d = ba->next->next->v;
      kill_face(g);
      make_face(b, m, d, next_face_id_++);
      make_face(m, a, d, next_face_id_++);
    }
    return 1;
  }

  bool locked(const Vert* v) const { return (v->flags & kDead) != 0 || (v->flags >> 8) == step_; }

  // Vertices sharing an edge with v, in disk order.
  void neighbours(Vert* v, std::vector<Vert*>& out) {
    out.clear();
    for (Loop* l = v->disk; l != nullptr; l = l->disk_next) {
      for (Vert* w : {l->next->v, l->next->next->v})
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
  }

  // Collapses edge a-b into a at the midpoint: b and the faces on the edge
  // die (freed by free_dead). Skipped when a vertex was already touched by a
  // collapse in this step, or when it would fold the mesh (the ends share a
  // neighbour besides the faces' third corners).
  bool collapse(Vert* a, Vert* b, Totals& totals) {
    if (locked(a) || locked(b)) return false;
    Loop* ab = find_loop(a, b);
    Loop* ba = find_loop(b, a);
    if (ab == nullptr && ba == nullptr) return false;
    neighbours(a, around_a_);
    neighbours(b, around_b_);
    std::size_t common = 0;
    for (Vert* w : around_a_) common += std::count(around_b_.begin(), around_b_.end(), w);
    if (common != static_cast<std::size_t>((ab != nullptr) + (ba != nullptr))) return false;

    for (Loop* l : {ab, ba}) {
      if (l == nullptr) continue;
      unlink_face(l->f);
      l->f->flags |= kDead;
    }
    for (int i = 0; i < 3; ++i) a->co[i] = 0.5f * (a->co[i] + b->co[i]);
    while (Loop* l = b->disk) {  // b's corners become a's, in b's disk order
      disk_unlink(l);
      l->v = a;
      disk_link(l);
    }
    b->flags |= kDead;
    if (b->undo != nullptr) {
      retire(b->undo, totals);
      b->undo = nullptr;
    }
    a->flags = (a->flags & kDead) | step_ << 8;
    neighbours(a, around_a_);
    for (Vert* w : around_a_) w->flags = (w->flags & kDead) | step_ << 8;
    return true;
  }

  // Frees what collapses killed, from inside the pools' iterations.
  void free_dead() {
    faces_.for_each([&](Face* f) {
      if (f->flags & kDead) free_face(f);
    });
    verts_.for_each([&](Vert* v) {
      if (v->flags & kDead) verts_.destroy(v);
    });
  }

  // An undo record's contribution: how far its vertex moved, in micro-units.
  void retire(Undo* u, Totals& totals) {
    totals.undo_distance += static_cast<std::uint64_t>(std::llround(length(u->v->co, u->orig) * 1e6f));
    ++totals.undo_records;
    u->v->undo = nullptr;
    undos_.destroy(u);
  }

  static float falloff(const Brush& brush, const Vert* v) {
    const float dx = v->co[0] - brush.x, dy = v->co[1] - brush.y;
    const float d2 = (dx * dx + dy * dy) / (brush.radius * brush.radius);
    if (d2 >= 1.0f) return 0.0f;
    const float t = 1.0f - d2;
    return t * t;  // smooth to zero at the rim
  }

  void clear() {
    verts_.clear();
    faces_.clear();
    loops_.clear();
    undos_.clear();
    arena_.clear();
  }

  typename Policy::Arena& arena_;
  Pool<Vert> verts_;
  Pool<Face> faces_;
  Pool<Loop, false> loops_;  // reached through faces and disks only: never iterated
  Pool<Undo> undos_;
  const float split_length_, collapse_length_;
  std::uint64_t step_ = 0;
  // Ids in creation order: topology changes run in a canonical order, so the
  // ids are the same in every mode.
  std::uint64_t next_vert_id_ = 0, next_face_id_ = 0;
  std::vector<Edge> splits_, collapses_;
  std::vector<Vert*> around_a_, around_b_;
};

// Each unit of scale is one stroke on a fresh mesh.
constexpr std::size_t kGrid = 64;
constexpr std::uint64_t kStepsPerStroke = 64;

template <class Policy>
std::uint64_t sculpt(const Options& o) {
  Rng rng(o.seed);
  Checksum sum;
  Totals totals;
  typename Policy::Arena arena;
  const float spacing = 1.0f / static_cast<float>(kGrid - 1);
  Mesh<Policy> mesh(arena, 1.4f * spacing, 0.45f * spacing);
  for (std::uint64_t stroke = 0; stroke < o.scale; ++stroke) {
    mesh.generate(kGrid, rng);
    // A stroke from one random point to another, wobbling as it goes.
    const float x0 = static_cast<float>(0.2 + 0.6 * rng.unit()), y0 = static_cast<float>(0.2 + 0.6 * rng.unit());
    const float x1 = static_cast<float>(0.2 + 0.6 * rng.unit()), y1 = static_cast<float>(0.2 + 0.6 * rng.unit());
    const float sign = stroke % 2 == 0 ? 1.0f : -1.0f;
    for (std::uint64_t s = 0; s < kStepsPerStroke; ++s) {
      const float t = static_cast<float>(s) / static_cast<float>(kStepsPerStroke - 1);
      const float wobble = 0.05f * std::sin(t * 25.0f);
      Brush brush{x0 + (x1 - x0) * t + wobble, y0 + (y1 - y0) * t - wobble,
                  static_cast<float>(0.08 + 0.04 * rng.unit()), sign * 0.012f, 0.08f};
      mesh.step(brush, stroke * kStepsPerStroke + s + 1, totals);
    }
    mesh.finish(sum, totals);
  }
  std::printf("mempool: %llu strokes, %llu splits, %llu collapses, %llu undo records, peak %llu verts %llu faces\n",
              static_cast<unsigned long long>(o.scale), static_cast<unsigned long long>(totals.splits),
              static_cast<unsigned long long>(totals.collapses),
              static_cast<unsigned long long>(totals.undo_records),
              static_cast<unsigned long long>(totals.peak_verts), static_cast<unsigned long long>(totals.peak_faces));
  sum.add(totals.splits);
  sum.add(totals.collapses);
  sum.add(totals.undo_records);
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<CustomPolicy, NaivePolicy, ReapPolicy>(
      argc, argv, "mempool", []<class Policy>(const Options& o) { return sculpt<Policy>(o); });
}
