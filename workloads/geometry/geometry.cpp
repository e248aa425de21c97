// geometry — Blender's geometry nodes on a LinearAllocator (2026 paper
// §2.2.2, Tables 1 and 4: "geometry_nodes", a region allocator).
//
// Each evaluation generates a point cloud and a node graph (a DAG over float
// attributes and positions) and evaluates the nodes in order. A node's
// temporaries — evaluation buffers per block of points, index masks and
// per-group index lists that grow by doubling, hash-grid cells, sort keys,
// per-point strings formatted and parsed back, joined lines — come from the
// node's allocator and are freed in bulk when the node is done. Node outputs
// (attribute arrays, positions) come from the evaluation's allocator and are
// freed in bulk when the evaluation ends. The checksum digests every output.
//
// Modes (the allocator behind both levels):
//   custom  a linear (bump) allocator over 64 KiB chunks (strata ZoneHeap over
//           malloc; larger requests get a chunk of their own), cleared after
//           every node / evaluation, as Blender's LinearAllocator;
//   naive   every allocation its own malloc, freed in bulk at the clear
//           (MallocRegion) — the paper's "large allocation threshold 0";
//   reap    a strata::reap per evaluation and a child reap for the node;
//           the program frees each temporary (and each output after its
//           last use) as soon as it is dead, and clears the reaps in bulk.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "regions.hpp"
#include "strata/layers.hpp"
#include "strata/reap.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

// ------------------------------------------------------------ the arenas --
// An arena is a region of workloads/common/regions.hpp: custom, Blender's
// LinearAllocator (a zone of 64 KB chunks); naive, every object a malloc
// block of its own ("large-allocation threshold 0"); reap, a reap, the node's
// the child of the evaluation's. release(p) is an object the program knows is
// dead, clear() everything at once.
using CustomArena = strata::workload::LayerRegion<strata::layers::ZoneHeap<64 * 1024, strata::layers::MallocHeap>>;
using strata::workload::allocate_or_throw;
using strata::workload::MallocRegion;
using strata::workload::ReapRegion;

template <class T, class Arena>
T* alloc_array(Arena& arena, std::size_t n) {
  return static_cast<T*>(allocate_or_throw(arena, n * sizeof(T)));
}

// An array in an arena that grows by doubling (the old buffer is dead).
template <class T, class Arena>
class GrowArray {
 public:
  explicit GrowArray(Arena& arena, std::size_t capacity = 4)
      : arena_(&arena), data_(alloc_array<T>(arena, capacity)), capacity_(capacity) {}
  void push(const T& value) {
    if (size_ == capacity_) {
      T* bigger = alloc_array<T>(*arena_, capacity_ * 2);
      std::memcpy(bigger, data_, size_ * sizeof(T));
      arena_->release(data_);
      data_ = bigger;
      capacity_ *= 2;
    }
    data_[size_++] = value;
  }
  void release() { arena_->release(data_); }
  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  Arena* arena_;
  T* data_;
  std::size_t size_ = 0, capacity_;
};

// ------------------------------------------------------------- the graph --

enum class NodeType { noise, math, offset, select, group_mean, string_roundtrip, sort_rank, blur, count };

struct Node {
  NodeType type;
  int a, b;     // input attributes (earlier outputs)
  int op;       // math operator / noise octaves / group count
  float param;  // threshold, scale, radius...
};

struct Vec3 {
  float x, y, z;
};

constexpr std::size_t kBlock = 256;  // points per evaluation block

float hash_noise(float x, float y, float z, int octave) {
  float sum = 0.0f, amplitude = 1.0f, frequency = 3.0f;
  for (int i = 0; i <= octave; ++i) {
    sum += amplitude * std::sin(x * frequency + 1.7f * static_cast<float>(i)) *
           std::cos(y * frequency * 1.3f - z * frequency * 0.7f);
    amplitude *= 0.5f;
    frequency *= 2.1f;
  }
  return sum;
}

template <class Policy>
class Evaluation {
  using Arena = Policy;

 public:
  Evaluation(Arena& eval, Arena& node, std::size_t points, Rng& rng) : eval_(eval), node_(node), n_(points) {
    positions_ = alloc_array<Vec3>(eval_, n_);
    for (std::size_t i = 0; i < n_; ++i) {
      positions_[i] = {static_cast<float>(rng.unit() * 2 - 1), static_cast<float>(rng.unit() * 2 - 1),
                       static_cast<float>(rng.unit() * 0.5)};
    }
  }

  // Runs the graph; each node's output is digested, then the arenas cleared.
  void run(const std::vector<Node>& graph, Checksum& sum) {
    // The last node reading each output: after it, the output is dead.
    std::vector<std::size_t> last_use(graph.size(), 0);
    for (std::size_t i = 0; i < graph.size(); ++i) {
      last_use[i] = i;
      for (int input : {graph[i].a, graph[i].b})
        if (input >= 0) last_use[static_cast<std::size_t>(input)] = i;
    }
    outputs_.assign(graph.size(), nullptr);
    for (std::size_t i = 0; i < graph.size(); ++i) {
      const Node& node = graph[i];
      float* out = alloc_array<float>(eval_, n_);
      evaluate(node, out);
      node_.clear();  // every temporary of the node, in bulk
      outputs_[i] = out;
      for (std::size_t p = 0; p < n_; ++p) sum.add_double(out[p]);
      for (int input : {node.a, node.b, static_cast<int>(i)}) {
        const auto k = static_cast<std::size_t>(input);
        if (input >= 0 && last_use[k] == i && outputs_[k] != nullptr) {
          eval_.release(outputs_[k]);
          outputs_[k] = nullptr;
        }
      }
    }
    for (std::size_t p = 0; p < n_; ++p) {
      sum.add_double(positions_[p].x);
      sum.add_double(positions_[p].y);
      sum.add_double(positions_[p].z);
    }
    eval_.clear();
  }

 private:
  const float* input(int index) const { return outputs_[static_cast<std::size_t>(index)]; }

  void evaluate(const Node& node, float* out) {
    switch (node.type) {
      case NodeType::noise: return noise(node, out);
      case NodeType::math: return math(node, out);
      case NodeType::offset: return offset(node, out);
      case NodeType::select: return select(node, out);
      case NodeType::group_mean: return group_mean(node, out);
      case NodeType::string_roundtrip: return string_roundtrip(node, out);
      case NodeType::sort_rank: return sort_rank(node, out);
      case NodeType::blur: return blur(node, out);
      case NodeType::count: break;
    }
  }

  // Field evaluation in blocks: each block gets its own buffers.
  void noise(const Node& node, float* out) {
    for (std::size_t start = 0; start < n_; start += kBlock) {
      const std::size_t len = std::min(kBlock, n_ - start);
      Vec3* scaled = alloc_array<Vec3>(node_, len);
      float* values = alloc_array<float>(node_, len);
      for (std::size_t i = 0; i < len; ++i) {
        const Vec3& p = positions_[start + i];
        scaled[i] = {p.x * node.param, p.y * node.param, p.z * node.param};
      }
      for (std::size_t i = 0; i < len; ++i) values[i] = hash_noise(scaled[i].x, scaled[i].y, scaled[i].z, node.op);
      std::memcpy(out + start, values, len * sizeof(float));
      node_.release(values);
      node_.release(scaled);
    }
  }

  void math(const Node& node, float* out) {
    const float* a = input(node.a);
    const float* b = input(node.b);
    for (std::size_t start = 0; start < n_; start += kBlock) {
      const std::size_t len = std::min(kBlock, n_ - start);
      float* tmp = alloc_array<float>(node_, len);
      for (std::size_t i = 0; i < len; ++i) {
        const float x = a[start + i], y = b[start + i];
        switch (node.op) {
          case 0: tmp[i] = x + y; break;
          case 1: tmp[i] = x * y; break;
          case 2: tmp[i] = std::max(x, y) - 0.5f * std::min(x, y); break;
          default: tmp[i] = std::sqrt(x * x + y * y); break;
        }
      }
      for (std::size_t i = 0; i < len; ++i) out[start + i] = tmp[i] * 0.5f;
      node_.release(tmp);
    }
  }

  // Moves the points along the gradient-ish direction of an attribute; the
  // new positions replace the old (which are dead).
  void offset(const Node& node, float* out) {
    const float* a = input(node.a);
    Vec3* moved = alloc_array<Vec3>(eval_, n_);
    for (std::size_t i = 0; i < n_; ++i) {
      const Vec3& p = positions_[i];
      const float d = a[i] * node.param;
      moved[i] = {p.x + d * 0.3f, p.y - d * 0.2f, p.z + d};
      out[i] = std::fabs(d);
    }
    eval_.release(positions_);
    positions_ = moved;
  }

  // An index mask of the points above a threshold, grown by doubling; the
  // output is each selected point's distance to the selection's centroid.
  void select(const Node& node, float* out) {
    const float* a = input(node.a);
    GrowArray<std::uint32_t, Arena> mask(node_);
    for (std::size_t i = 0; i < n_; ++i)
      if (a[i] > node.param) mask.push(static_cast<std::uint32_t>(i));
    double cx = 0, cy = 0, cz = 0;
    for (std::size_t k = 0; k < mask.size(); ++k) {
      const Vec3& p = positions_[mask[k]];
      cx += p.x;
      cy += p.y;
      cz += p.z;
    }
    const double count = mask.size() > 0 ? static_cast<double>(mask.size()) : 1.0;
    cx /= count;
    cy /= count;
    cz /= count;
    std::fill(out, out + n_, 0.0f);
    for (std::size_t k = 0; k < mask.size(); ++k) {
      const Vec3& p = positions_[mask[k]];
      out[mask[k]] = static_cast<float>(std::sqrt((p.x - cx) * (p.x - cx) + (p.y - cy) * (p.y - cy) +
                                                  (p.z - cz) * (p.z - cz)));
    }
    mask.release();
  }

  // Groups points by a quantized attribute; each group's index list grows by
  // doubling. Output: the value minus its group's mean.
  void group_mean(const Node& node, float* out) {
    const float* a = input(node.a);
    const float* b = input(node.b);
    const std::size_t groups = static_cast<std::size_t>(node.op);
    using List = GrowArray<std::uint32_t, Arena>;
    auto* lists = static_cast<List*>(allocate_or_throw(node_, groups * sizeof(List)));
    for (std::size_t g = 0; g < groups; ++g) new (&lists[g]) List(node_, 2);
    for (std::size_t i = 0; i < n_; ++i) {
      const float key = std::fabs(a[i]) * static_cast<float>(groups) * 7.0f;
      const std::size_t g = static_cast<std::size_t>(key) % groups;
      lists[g].push(static_cast<std::uint32_t>(i));
    }
    for (std::size_t g = 0; g < groups; ++g) {
      double mean = 0;
      for (std::size_t k = 0; k < lists[g].size(); ++k) mean += b[lists[g][k]];
      if (lists[g].size() > 0) mean /= static_cast<double>(lists[g].size());
      for (std::size_t k = 0; k < lists[g].size(); ++k) out[lists[g][k]] = b[lists[g][k]] - static_cast<float>(mean);
      lists[g].release();
    }
    node_.release(lists);
  }

  // Named per-point values: each formatted into a string of its own, joined
  // into lines of 32, split and parsed back (like string fields and
  // attribute names), plus a digest of the lines.
  void string_roundtrip(const Node& node, float* out) {
    const float* a = input(node.a);
    constexpr std::size_t kPerLine = 32;
    for (std::size_t start = 0; start < n_; start += kPerLine) {
      const std::size_t len = std::min(kPerLine, n_ - start);
      char** names = alloc_array<char*>(node_, len);
      std::size_t total = 0;
      for (std::size_t i = 0; i < len; ++i) {
        char buffer[64];
        const int w = std::snprintf(buffer, sizeof buffer, "pt%zu=%.*f", start + i, node.op % 5 + 1,
                                    static_cast<double>(a[start + i]));
        names[i] = static_cast<char*>(allocate_or_throw(node_, static_cast<std::size_t>(w) + 1));
        std::memcpy(names[i], buffer, static_cast<std::size_t>(w) + 1);
        total += static_cast<std::size_t>(w) + 1;
      }
      char* line = static_cast<char*>(allocate_or_throw(node_, total + 1));
      char* cursor = line;
      for (std::size_t i = 0; i < len; ++i) {
        const std::size_t w = std::strlen(names[i]);
        std::memcpy(cursor, names[i], w);
        cursor[w] = ';';
        cursor += w + 1;
        node_.release(names[i]);
      }
      *cursor = '\0';
      node_.release(names);
      std::uint32_t line_hash = 2166136261u;
      for (const char* c = line; *c; ++c) line_hash = (line_hash ^ static_cast<unsigned char>(*c)) * 16777619u;
      // Split the line back into fields and parse each value.
      std::size_t i = 0;
      for (char* field = line; *field != '\0' && i < len; ++i) {
        char* end = std::strchr(field, ';');
        const std::size_t w = static_cast<std::size_t>(end - field);
        char* copy = static_cast<char*>(allocate_or_throw(node_, w + 1));
        std::memcpy(copy, field, w);
        copy[w] = '\0';
        const char* eq = std::strchr(copy, '=');
        out[start + i] = std::strtof(eq + 1, nullptr) + static_cast<float>(line_hash % 1024) * 1e-6f * node.param;
        node_.release(copy);
        field = end + 1;
      }
      node_.release(line);
    }
  }

  // The rank of each value (a sort of a temporary key/index array).
  void sort_rank(const Node& node, float* out) {
    const float* a = input(node.a);
    struct Key {
      float value;
      std::uint32_t index;
    };
    Key* keys = alloc_array<Key>(node_, n_);
    for (std::size_t i = 0; i < n_; ++i) keys[i] = {a[i] * node.param, static_cast<std::uint32_t>(i)};
    std::sort(keys, keys + n_, [](const Key& x, const Key& y) {
      return x.value != y.value ? x.value < y.value : x.index < y.index;
    });
    for (std::size_t r = 0; r < n_; ++r) out[keys[r].index] = static_cast<float>(r) / static_cast<float>(n_);
    node_.release(keys);
  }

  // Averages an attribute over a hash grid of cells (each cell's list grows
  // by doubling), reading the point's cell and its 8 neighbours in xy.
  void blur(const Node& node, float* out) {
    const float* a = input(node.a);
    const int cells = std::max(4, static_cast<int>(node.param));
    using List = GrowArray<std::uint32_t, Arena>;
    const std::size_t count = static_cast<std::size_t>(cells) * static_cast<std::size_t>(cells);
    List** grid = alloc_array<List*>(node_, count);
    std::fill(grid, grid + count, nullptr);
    auto cell_of = [&](float v) {
      const int c = static_cast<int>((v + 2.0f) * 0.25f * static_cast<float>(cells));
      return std::clamp(c, 0, cells - 1);
    };
    for (std::size_t i = 0; i < n_; ++i) {
      const std::size_t c = static_cast<std::size_t>(cell_of(positions_[i].y) * cells + cell_of(positions_[i].x));
      if (grid[c] == nullptr) grid[c] = new (allocate_or_throw(node_, sizeof(List))) List(node_, 2);
      grid[c]->push(static_cast<std::uint32_t>(i));
    }
    for (std::size_t i = 0; i < n_; ++i) {
      const int cx = cell_of(positions_[i].x), cy = cell_of(positions_[i].y);
      double total = 0;
      std::size_t seen = 0;
      for (int y = std::max(0, cy - 1); y <= std::min(cells - 1, cy + 1); ++y) {
        for (int x = std::max(0, cx - 1); x <= std::min(cells - 1, cx + 1); ++x) {
          const List* list = grid[static_cast<std::size_t>(y * cells + x)];
          if (list == nullptr) continue;
          const std::size_t step = list->size() / 16 + 1;  // a sample of the cell
          for (std::size_t k = 0; k < list->size(); k += step, ++seen) total += a[(*list)[k]];
        }
      }
      out[i] = static_cast<float>(total / static_cast<double>(seen));
    }
    for (std::size_t c = 0; c < count; ++c) {
      if (grid[c] == nullptr) continue;
      grid[c]->release();
      node_.release(grid[c]);
    }
    node_.release(grid);
  }

  Arena& eval_;
  Arena& node_;
  const std::size_t n_;
  Vec3* positions_;
  std::vector<float*> outputs_;
};

std::vector<Node> make_graph(Rng& rng, std::size_t nodes) {
  std::vector<Node> graph;
  graph.push_back({NodeType::noise, -1, -1, 2, 1.5f});
  graph.push_back({NodeType::noise, -1, -1, 3, 2.5f});
  while (graph.size() < nodes) {
    const int outputs = static_cast<int>(graph.size());
    // Inputs mostly from the last few nodes, sometimes from far back.
    auto pick = [&] {
      return rng.chance(0.7) ? outputs - 1 - static_cast<int>(rng.below(std::min(3, outputs)))
                             : static_cast<int>(rng.below(static_cast<std::uint64_t>(outputs)));
    };
    const auto type = static_cast<NodeType>(rng.below(static_cast<std::uint64_t>(NodeType::count)));
    Node node{type, pick(), pick(), 0, 1.0f};
    switch (type) {
      case NodeType::noise:
        node = {type, -1, -1, static_cast<int>(rng.below(4)), static_cast<float>(1 + 3 * rng.unit())};
        break;
      case NodeType::math: node.op = static_cast<int>(rng.below(4)); break;
      case NodeType::offset: node.b = -1; node.param = static_cast<float>(0.05 * rng.unit()); break;
      case NodeType::select: node.b = -1; node.param = static_cast<float>(rng.unit() * 0.5 - 0.25); break;
      case NodeType::group_mean: node.op = static_cast<int>(rng.between(16, 400)); break;
      case NodeType::string_roundtrip:
        node.b = -1;
        node.op = static_cast<int>(rng.below(5));
        node.param = static_cast<float>(rng.unit());
        break;
      case NodeType::sort_rank: node.b = -1; node.param = rng.chance(0.5) ? 1.0f : -1.0f; break;
      case NodeType::blur: node.b = -1; node.param = static_cast<float>(rng.between(8, 64)); break;
      case NodeType::count: break;
    }
    graph.push_back(node);
  }
  return graph;
}

constexpr std::size_t kNodes = 24;

// Each unit of scale is one graph evaluated over a fresh point cloud.
template <class Policy>
std::uint64_t evaluate_all(const Options& o) {
  Rng rng(o.seed);
  Checksum sum;
  Policy eval;
  Policy node(eval);
  std::uint64_t points_total = 0;
  for (std::uint64_t round = 0; round < o.scale; ++round) {
    const std::vector<Node> graph = make_graph(rng, kNodes);
    const std::size_t points = static_cast<std::size_t>(rng.between(4000, 12000));
    points_total += points;
    Evaluation<Policy> evaluation(eval, node, points, rng);
    evaluation.run(graph, sum);
  }
  std::printf("geometry: %llu graphs of %zu nodes, %llu points\n", static_cast<unsigned long long>(o.scale), kNodes,
              static_cast<unsigned long long>(points_total));
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<CustomArena, MallocRegion, ReapRegion>(
      argc, argv, "geometry", []<class Policy>(const Options& o) { return evaluate_all<Policy>(o); });
}
