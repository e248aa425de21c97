// router — regions, as in 175.vpr's router (2002 paper Tables 1–3; 2026 paper
// Tables 1, 2 and 4, RQ2/RQ3): nets are routed on a grid of routing nodes by
// PathFinder-style negotiated congestion. Each net is routed sink by sink
// with an A* maze search that grows from the net's route tree; the search's
// heap items (one per node pushed) and its growable arrays live in a region
// that is reset after the net, as vpr's heap and trace chunks are. When nodes
// end up shared by several nets, their cost rises and every net is ripped up
// and routed again, up to kMaxIterations times.
//
// Modes:
//   custom  a ZoneHeap (chunks of 64 KB from malloc, bump allocation, nothing
//           freed until the region is cleared after each net);
//   naive   MallocRegion: every heap item and array a malloc block of its own,
//           all freed when the net is done ("reduce chunk size to fit single
//           objects", 2026 Table 4);
//   reap    a strata::reap cleared after each net, and every object freed as
//           soon as the program knows it is dead: a heap item once popped, the
//           items left in the heap after each sink, an array's old copy when
//           it grows.
// The checksum covers every net's final route (its nodes in the order they
// joined the tree), the total wirelength, the overused nodes and the
// iterations taken, circuit by circuit.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include <strata/layers.hpp>
#include <strata/reap.hpp>

#include "regions.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

constexpr int kWidth = 64;  // the grid is kWidth × kWidth routing nodes
constexpr int kNodes = kWidth * kWidth;
constexpr int kNets = 200;  // per circuit; one circuit per unit of scale
constexpr int kMaxPins = 5;
constexpr int kMaxSpan = 14;  // a net's pins lie in a box of this size
constexpr int kCapacity = 2;  // nets a node can carry
constexpr double kBlockedFraction = 0.08;
constexpr int kMaxIterations = 16;
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// ---- the allocator policies: a region reset after every net --------------

// custom: a zone of 64 KB chunks; naive: every object its own malloc block;
// reap: a reap, whose heap items are freed once popped.
using ZonePolicy = strata::workload::LayerRegion<strata::layers::ZoneHeap<64 * 1024, strata::layers::MallocHeap>>;
using strata::workload::MallocRegion;
using strata::workload::ReapRegion;
using strata::workload::allocate_or_throw;

// A growable array of trivially copyable T in the region; growing copies
// into a block twice the size and releases the old one.
template <class T, class Policy>
class RegionArray {
 public:
  explicit RegionArray(Policy& policy) : policy_(policy) {}
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void push_back(const T& value) {
    if (size_ == capacity_) grow();
    data_[size_++] = value;
  }
  // Forget the storage (the region was reset).
  void forget() { data_ = nullptr, size_ = capacity_ = 0; }

 private:
  void grow() {
    const std::size_t capacity = capacity_ == 0 ? 64 : 2 * capacity_;
    T* data = static_cast<T*>(allocate_or_throw(policy_, capacity * sizeof(T)));
    if (size_ != 0) std::memcpy(data, data_, size_ * sizeof(T));
    if (data_ != nullptr) policy_.release(data_);
    data_ = data;
    capacity_ = capacity;
  }
  Policy& policy_;
  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

// ---- the circuit -----------------------------------------------------------

struct Net {
  std::vector<std::uint32_t> pins;   // pins[0] is the source
  std::vector<std::uint32_t> route;  // nodes of the route tree, in joining order
  bool routed = true;
};

struct Circuit {
  std::vector<std::uint8_t> blocked;
  std::vector<Net> nets;
};

Circuit generate(Rng& rng) {
  Circuit c;
  c.blocked.assign(kNodes, 0);
  for (auto& b : c.blocked) b = rng.chance(kBlockedFraction);
  c.nets.resize(kNets);
  std::vector<std::uint8_t> is_pin(kNodes, 0);  // no two nets share a pin
  for (Net& net : c.nets) {
    const int x0 = static_cast<int>(rng.below(kWidth - kMaxSpan)), y0 = static_cast<int>(rng.below(kWidth - kMaxSpan));
    const int pins = static_cast<int>(rng.between(2, kMaxPins));
    while (static_cast<int>(net.pins.size()) < pins) {
      const auto node = static_cast<std::uint32_t>((y0 + rng.below(kMaxSpan)) * kWidth + x0 + rng.below(kMaxSpan));
      if (is_pin[node]) continue;
      is_pin[node] = 1;
      net.pins.push_back(node);
    }
    // A pin and the nodes around it are never blocked, so every pin can be reached.
    for (std::uint32_t pin : net.pins) {
      c.blocked[pin] = 0;
      if (pin % kWidth > 0) c.blocked[pin - 1] = 0;
      if (pin % kWidth + 1 < kWidth) c.blocked[pin + 1] = 0;
      if (pin >= kWidth) c.blocked[pin - kWidth] = 0;
      if (pin + kWidth < kNodes) c.blocked[pin + kWidth] = 0;
    }
  }
  return c;
}

// One node pushed on the search heap (vpr's s_heap).
struct HeapItem {
  double total;  // path cost + estimate to the sink: the heap's key
  double path;   // cost from the route tree
  std::uint64_t seq;
  std::uint32_t node, prev;
};

template <class Policy>
class Router {
 public:
  explicit Router(Circuit& circuit)
      : c_(circuit), heap_(policy_), touched_(policy_),
        occupancy_(kNodes, 0), history_(kNodes, 0.0), best_(kNodes, kUnreached), prev_(kNodes, kNone),
        tree_mark_(kNodes, 0) {}

  // Negotiated congestion: route every net, raise the cost of shared nodes,
  // route again until no node is overused. Returns the iterations taken.
  int route_all() {
    double present_factor = 0.5;
    for (int iteration = 1; iteration <= kMaxIterations; ++iteration) {
      for (std::size_t i = 0; i < c_.nets.size(); ++i) {
        Net& net = c_.nets[i];
        for (std::uint32_t node : net.route) --occupancy_[node];
        route_net(net, ++marks_);  // a new mark: the old tree is gone
        for (std::uint32_t node : net.route) ++occupancy_[node];
      }
      overused_ = 0;
      for (int n = 0; n < kNodes; ++n)
        if (occupancy_[n] > kCapacity) {
          ++overused_;
          history_[n] += 1.0 * (occupancy_[n] - kCapacity);
        }
      if (overused_ == 0) return iteration;
      present_factor *= 2.0;
      present_factor_ = present_factor;
    }
    return kMaxIterations;
  }

  int overused() const { return overused_; }
  std::uint64_t pushes() const { return pushes_; }

 private:
  static constexpr double kUnreached = std::numeric_limits<double>::infinity();

  void route_net(Net& net, std::uint32_t mark) {
    net.route.assign(1, net.pins[0]);
    net.routed = true;
    tree_mark_[net.pins[0]] = mark;
    // Sinks nearest the source first (ties: pin order).
    std::vector<std::uint32_t> sinks(net.pins.begin() + 1, net.pins.end());
    std::stable_sort(sinks.begin(), sinks.end(), [&](std::uint32_t p, std::uint32_t q) {
      return manhattan(p, net.pins[0]) < manhattan(q, net.pins[0]);
    });
    for (std::uint32_t sink : sinks) {
      if (tree_mark_[sink] == mark) continue;
      if (!search(net, sink, mark)) net.routed = false;
      clear_search();
    }
    // The net's search structures all die here.
    heap_.forget();
    touched_.forget();
    policy_.clear();
  }

  // A* from every node of the route tree to sink; adds the path to the tree.
  bool search(Net& net, std::uint32_t sink, std::uint32_t mark) {
    for (std::uint32_t node : net.route) push(node, 0.0, kNone, sink);
    while (heap_.size() != 0) {
      HeapItem* item = pop();
      const std::uint32_t node = item->node;
      if (item->path > best_[node]) {  // a better way here was found since
        policy_.release(item);
        continue;
      }
      const double path = item->path;
      policy_.release(item);
      if (node == sink) {
        for (std::uint32_t n = sink; tree_mark_[n] != mark; n = prev_[n]) {
          tree_mark_[n] = mark;
          net.route.push_back(n);
        }
        return true;
      }
      const int x = static_cast<int>(node % kWidth), y = static_cast<int>(node / kWidth);
      if (x > 0) expand(node - 1, path, node, sink, mark);
      if (x + 1 < kWidth) expand(node + 1, path, node, sink, mark);
      if (y > 0) expand(node - kWidth, path, node, sink, mark);
      if (y + 1 < kWidth) expand(node + kWidth, path, node, sink, mark);
    }
    return false;
  }

  void expand(std::uint32_t node, double path, std::uint32_t from, std::uint32_t sink, std::uint32_t mark) {
    if (c_.blocked[node] || tree_mark_[node] == mark) return;
    push(node, path + node_cost(node), from, sink);
  }

  // PathFinder's cost: base × history × present congestion if we take it too.
  double node_cost(std::uint32_t node) const {
    const int over = occupancy_[node] + 1 - kCapacity;
    return (1.0 + history_[node]) * (1.0 + (over > 0 ? present_factor_ * over : 0.0));
  }

  void push(std::uint32_t node, double path, std::uint32_t from, std::uint32_t sink) {
    if (path >= best_[node]) return;
    if (best_[node] == kUnreached) touched_.push_back(node);
    best_[node] = path;
    prev_[node] = from;
    auto* item = static_cast<HeapItem*>(allocate_or_throw(policy_, sizeof(HeapItem)));
    *item = HeapItem{path + manhattan(node, sink), path, seq_++, node, from};
    ++pushes_;
    heap_.push_back(item);
    sift_up(heap_.size() - 1);
  }

  HeapItem* pop() {
    HeapItem* top = heap_[0];
    heap_[0] = heap_.back();
    heap_.pop_back();
    if (heap_.size() != 0) sift_down(0);
    return top;
  }

  static bool before(const HeapItem* p, const HeapItem* q) {
    return p->total != q->total ? p->total < q->total : p->seq < q->seq;
  }
  void sift_up(std::size_t i) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(heap_[i], heap_[parent])) break;
      std::swap(heap_[i], heap_[parent]);
      i = parent;
    }
  }
  void sift_down(std::size_t i) {
    for (;;) {
      const std::size_t l = 2 * i + 1, r = l + 1;
      std::size_t m = i;
      if (l < heap_.size() && before(heap_[l], heap_[m])) m = l;
      if (r < heap_.size() && before(heap_[r], heap_[m])) m = r;
      if (m == i) return;
      std::swap(heap_[i], heap_[m]);
      i = m;
    }
  }

  // After a sink: the items left in the heap are dead; reset the node marks.
  void clear_search() {
    for (std::size_t i = 0; i < heap_.size(); ++i) policy_.release(heap_[i]);
    heap_.clear();
    for (std::size_t i = 0; i < touched_.size(); ++i) {
      best_[touched_[i]] = kUnreached;
      prev_[touched_[i]] = kNone;
    }
    touched_.clear();
  }

  static double manhattan(std::uint32_t p, std::uint32_t q) {
    const int dx = static_cast<int>(p % kWidth) - static_cast<int>(q % kWidth);
    const int dy = static_cast<int>(p / kWidth) - static_cast<int>(q / kWidth);
    return std::abs(dx) + std::abs(dy);
  }

  Circuit& c_;
  Policy policy_;
  RegionArray<HeapItem*, Policy> heap_;
  RegionArray<std::uint32_t, Policy> touched_;
  std::vector<int> occupancy_;
  std::vector<double> history_;
  std::vector<double> best_;
  std::vector<std::uint32_t> prev_;
  std::vector<std::uint32_t> tree_mark_;
  double present_factor_ = 0.5;
  std::uint64_t seq_ = 0, pushes_ = 0;
  std::uint32_t marks_ = 0;
  int overused_ = 0;
};

template <class Policy>
std::uint64_t run(const Options& options) {
  Rng rng(options.seed);
  Checksum sum;
  std::uint64_t wirelength = 0, pushes = 0, unrouted = 0, overused = 0, iterations = 0;
  for (std::uint64_t i = 0; i < options.scale; ++i) {
    Circuit circuit = generate(rng);
    Router<Policy> router(circuit);
    const int taken = router.route_all();
    iterations += taken;
    overused += router.overused();
    pushes += router.pushes();
    for (const Net& net : circuit.nets) {
      sum.add(net.route.size());
      for (std::uint32_t node : net.route) sum.add(node);
      wirelength += net.route.size() - 1;
      unrouted += !net.routed;
    }
    sum.add(static_cast<std::uint64_t>(taken));
    sum.add(static_cast<std::uint64_t>(router.overused()));
  }
  sum.add(wirelength);
  sum.add(unrouted);
  std::printf("router: %llu circuits, %llu iterations, wirelength %llu, %llu overused, %llu unrouted, %llu heap pushes\n",
              static_cast<unsigned long long>(options.scale), static_cast<unsigned long long>(iterations),
              static_cast<unsigned long long>(wirelength), static_cast<unsigned long long>(overused),
              static_cast<unsigned long long>(unrouted), static_cast<unsigned long long>(pushes));
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<ZonePolicy, MallocRegion, ReapRegion>(
      argc, argv, "router", []<class Policy>(const Options& o) { return run<Policy>(o); });
}
