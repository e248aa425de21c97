// boxed-sim — per-class allocation, as in Chilimbi's boxed-sim (2002 paper
// Table 2; 2026 paper Tables 1, 2 and 4, RQ1): balls bounce in a box, driven
// by an event queue of predicted collisions.
//
// The simulation is event-driven: a priority queue holds predicted events
// (ball–ball collisions, wall bounces, and crossings of the cells of a uniform
// grid, so that a ball only looks at balls in the 3×3 cells around it). Every
// event a ball takes part in gives it a new stamp, which lazily invalidates
// every other event predicted for it; invalid events are popped and freed
// later. A hole in the floor drains a ball that bounces on it: the ball is
// deleted and a new one is dropped in from the top. So Event objects (the
// bulk) and Ball objects are allocated and freed all the time, in LIFO-ish
// order.
//
// Modes:
//   custom  Event and Ball each get a per-class freelist: PerClassHeap<T,
//           FreelistHeap<MallocHeap>> — freed objects are kept for the next
//           new of the same class; no chunks (2026 Table 1);
//   naive   plain operator new/delete, i.e. malloc/free for every object
//           ("remove freelist", 2026 Table 4);
//   reap    one strata::reap; every object is freed to it when it dies.
// The checksum covers every ball's final position and velocity (by their
// bits), its collision count, and the event counts, in slot order — never
// in an order that depends on addresses.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <new>
#include <vector>

#include <strata/layers.hpp>
#include <strata/reap.hpp>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

// The box is [0,1]², cut into kGrid×kGrid cells wider than a ball, so balls
// in cells that do not touch cannot collide.
constexpr int kBalls = 1600;  // about 4,865 live objects, as 2002 Table 3 (calibration)
constexpr int kGrid = 64;
constexpr double kCell = 1.0 / kGrid;
constexpr double kRadius = 0.005;
static_assert(2 * kRadius < kCell);
constexpr double kDrainWidth = 0.15;  // the hole in the floor: x < kDrainWidth
constexpr std::uint64_t kEventsPerScale = 50'000;

struct Ball {
  double x = 0, y = 0;    // position at time t0
  double vx = 0, vy = 0;  // velocity
  double t0 = 0;
  double mass = 1;
  double horizon = 0;            // time of its next wall bounce or cell crossing
  std::uint64_t stamp = 0;       // changes with every event the ball takes part in
  std::uint64_t serial = 0;      // which ball this is (the n-th created)
  std::uint64_t collisions = 0;  // ball–ball collisions so far
  int slot = 0;                  // index in the simulation's slot table
  int cx = 0, cy = 0;            // the cell it is in
  Ball* cell_next = nullptr;     // the cell's list of balls
  Ball* cell_prev = nullptr;

  double x_at(double t) const { return x + vx * (t - t0); }
  double y_at(double t) const { return y + vy * (t - t0); }
  void advance(double t) {
    x = x_at(t);
    y = y_at(t);
    t0 = t;
  }
};

enum class EventKind : std::uint8_t { collision, wall_x, wall_y, cell_x, cell_y };

struct Event {
  double time = 0;
  std::uint64_t seq = 0;  // creation order: breaks ties in time deterministically
  std::uint64_t stamp_a = 0, stamp_b = 0;
  int a = 0, b = -1;  // ball slots; b only for collisions
  EventKind kind = EventKind::collision;
};

// ---- the allocator policies ------------------------------------------------

using strata::layers::FreelistHeap;
using strata::layers::MallocHeap;
using strata::layers::PerClassHeap;

// custom: boxed-sim's per-class freelists.
struct PerClassPolicy {
  struct PooledBall : PerClassHeap<Ball, FreelistHeap<MallocHeap>> {};
  struct PooledEvent : PerClassHeap<Event, FreelistHeap<MallocHeap>> {};
  Ball* new_ball() { return new PooledBall(); }
  void delete_ball(Ball* ball) { delete static_cast<PooledBall*>(ball); }
  Event* new_event() { return new PooledEvent(); }
  void delete_event(Event* event) { delete static_cast<PooledEvent*>(event); }
};

// naive: operator new/delete, i.e. malloc/free.
struct MallocPolicy {
  Ball* new_ball() { return new Ball(); }
  void delete_ball(Ball* ball) { delete ball; }
  Event* new_event() { return new Event(); }
  void delete_event(Event* event) { delete event; }
};

// reap: one reap for everything, each object freed to it when it dies.
struct ReapPolicy {
  strata::reap heap;
  template <class T>
  T* make() {
    void* p = heap.malloc(sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return ::new (p) T();
  }
  Ball* new_ball() { return make<Ball>(); }
  void delete_ball(Ball* ball) { heap.free(ball); }
  Event* new_event() { return make<Event>(); }
  void delete_event(Event* event) { heap.free(event); }
};

// ---- the simulation --------------------------------------------------------

template <class Policy>
class Simulation {
 public:
  explicit Simulation(std::uint64_t seed) : rng_(seed), slots_(kBalls, nullptr), cells_(kGrid * kGrid, nullptr) {
    for (int slot = 0; slot < kBalls; ++slot) spawn(slot, 0.0);
    for (int slot = 0; slot < kBalls; ++slot) predict(slots_[slot]);
  }

  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  ~Simulation() {
    for (Event* event : queue_) policy_.delete_event(event);
    for (Ball* ball : slots_) policy_.delete_ball(ball);
  }

  // Processes `count` valid events.
  void run(std::uint64_t count) {
    while (processed_ < count && !queue_.empty()) {
      std::pop_heap(queue_.begin(), queue_.end(), Later{});
      Event* event = queue_.back();
      queue_.pop_back();
      if (valid(*event)) {
        now_ = event->time;
        handle(*event);
        ++processed_;
      } else {
        ++stale_;
      }
      policy_.delete_event(event);
    }
  }

  std::uint64_t checksum() {
    Checksum sum;
    for (Ball* ball : slots_) {
      ball->advance(now_);
      sum.add(ball->serial);
      sum.add_double(ball->x);
      sum.add_double(ball->y);
      sum.add_double(ball->vx);
      sum.add_double(ball->vy);
      sum.add(ball->collisions);
    }
    sum.add_double(now_);
    sum.add(processed_);
    sum.add(stale_);
    sum.add(collisions_);
    sum.add(bounces_);
    sum.add(crossings_);
    sum.add(drained_);
    std::printf("boxed-sim: t=%.3f, %llu events (%llu stale), %llu collisions, %llu bounces, %llu drained\n", now_,
                static_cast<unsigned long long>(processed_), static_cast<unsigned long long>(stale_),
                static_cast<unsigned long long>(collisions_), static_cast<unsigned long long>(bounces_),
                static_cast<unsigned long long>(drained_));
    return sum.value();
  }

 private:
  // The heap order: earliest time first, then creation order.
  struct Later {
    bool operator()(const Event* p, const Event* q) const {
      return p->time != q->time ? p->time > q->time : p->seq > q->seq;
    }
  };

  bool valid(const Event& e) const {
    if (slots_[e.a]->stamp != e.stamp_a) return false;
    return e.b < 0 || slots_[e.b]->stamp == e.stamp_b;
  }

  void handle(const Event& e) {
    Ball* a = slots_[e.a];
    a->advance(now_);
    switch (e.kind) {
      case EventKind::collision: {
        Ball* b = slots_[e.b];
        b->advance(now_);
        collide(*a, *b);
        restamp(a);
        restamp(b);
        predict(a);
        predict(b);
        return;
      }
      case EventKind::wall_x:
        a->vx = -a->vx;
        ++bounces_;
        break;
      case EventKind::wall_y:
        if (a->vy < 0 && a->x < kDrainWidth) {
          drain(a);
          return;
        }
        a->vy = -a->vy;
        ++bounces_;
        break;
      case EventKind::cell_x:
        move_to_cell(a, a->cx + (a->vx > 0 ? 1 : -1), a->cy);
        ++crossings_;
        break;
      case EventKind::cell_y:
        move_to_cell(a, a->cx, a->cy + (a->vy > 0 ? 1 : -1));
        ++crossings_;
        break;
    }
    restamp(a);
    predict(a);
  }

  // An elastic collision of two discs (unequal masses).
  void collide(Ball& a, Ball& b) {
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double dvx = b.vx - a.vx, dvy = b.vy - a.vy;
    const double dvdr = dx * dvx + dy * dvy;
    const double dist = 2 * kRadius;
    const double impulse = 2 * a.mass * b.mass * dvdr / ((a.mass + b.mass) * dist);
    const double fx = impulse * dx / dist, fy = impulse * dy / dist;
    a.vx += fx / a.mass;
    a.vy += fy / a.mass;
    b.vx -= fx / b.mass;
    b.vy -= fy / b.mass;
    ++a.collisions;
    ++b.collisions;
    ++collisions_;
  }

  // The ball falls through the hole: it dies, and a new one is dropped in.
  void drain(Ball* a) {
    const int slot = a->slot;
    unlink(a);
    slots_[slot] = nullptr;
    policy_.delete_ball(a);
    ++drained_;
    spawn(slot, 1.0 - 4 * kCell);
    predict(slots_[slot]);
  }

  // A new ball at a random free place with y >= min_y.
  void spawn(int slot, double min_y) {
    double x = 0, y = 0;
    for (;;) {
      x = kRadius + rng_.unit() * (1 - 2 * kRadius);
      y = std::max(min_y, kRadius) + rng_.unit() * (1 - kRadius - std::max(min_y, kRadius));
      if (is_free(x, y)) break;
    }
    Ball* ball = policy_.new_ball();
    ball->x = x;
    ball->y = y;
    ball->vx = rng_.unit() * 2 - 1;
    ball->vy = rng_.unit() * 2 - 1;
    ball->t0 = now_;
    ball->mass = 1 + rng_.unit();
    ball->serial = serials_++;
    ball->slot = slot;
    slots_[slot] = ball;
    restamp(ball);
    link(ball, cell_of(x), cell_of(y));
  }

  static int cell_of(double v) { return std::clamp(static_cast<int>(v * kGrid), 0, kGrid - 1); }

  bool is_free(double x, double y) const {
    const int cx = cell_of(x), cy = cell_of(y);
    for (int i = std::max(cx - 1, 0); i <= std::min(cx + 1, kGrid - 1); ++i)
      for (int j = std::max(cy - 1, 0); j <= std::min(cy + 1, kGrid - 1); ++j)
        for (const Ball* b = cells_[j * kGrid + i]; b != nullptr; b = b->cell_next) {
          const double dx = b->x_at(now_) - x, dy = b->y_at(now_) - y;
          if (dx * dx + dy * dy <= 4.4 * kRadius * kRadius) return false;
        }
    return true;
  }

  void restamp(Ball* ball) { ball->stamp = ++stamps_; }

  void link(Ball* ball, int cx, int cy) {
    ball->cx = cx;
    ball->cy = cy;
    Ball*& head = cells_[cy * kGrid + cx];
    ball->cell_prev = nullptr;
    ball->cell_next = head;
    if (head != nullptr) head->cell_prev = ball;
    head = ball;
  }
  void unlink(Ball* ball) {
    if (ball->cell_prev != nullptr) ball->cell_prev->cell_next = ball->cell_next;
    else cells_[ball->cy * kGrid + ball->cx] = ball->cell_next;
    if (ball->cell_next != nullptr) ball->cell_next->cell_prev = ball->cell_prev;
  }
  void move_to_cell(Ball* ball, int cx, int cy) {
    unlink(ball);
    link(ball, std::clamp(cx, 0, kGrid - 1), std::clamp(cy, 0, kGrid - 1));
  }

  // Schedules a's next wall bounce or cell crossing (whichever comes first),
  // and its collisions with the balls around it that come before that (and
  // before the other ball's own next transit: either one changes course or
  // cell first and predicts again).
  void predict(Ball* a) {
    double when = kNever;
    EventKind kind = EventKind::cell_x;
    consider_transit(a->x, a->vx, a->cx, EventKind::wall_x, EventKind::cell_x, when, kind);
    consider_transit(a->y, a->vy, a->cy, EventKind::wall_y, EventKind::cell_y, when, kind);
    a->horizon = now_ + when;
    if (when < kNever) schedule(now_ + when, kind, a, nullptr);

    const double ax = a->x_at(now_), ay = a->y_at(now_);
    for (int i = std::max(a->cx - 1, 0); i <= std::min(a->cx + 1, kGrid - 1); ++i)
      for (int j = std::max(a->cy - 1, 0); j <= std::min(a->cy + 1, kGrid - 1); ++j)
        for (Ball* b = cells_[j * kGrid + i]; b != nullptr; b = b->cell_next) {
          if (b == a) continue;
          const double dt = time_to_hit(ax, ay, *a, *b);
          if (dt < kNever && now_ + dt <= std::min(a->horizon, b->horizon)) schedule(now_ + dt, EventKind::collision, a, b);
        }
  }

  // The earlier of: hitting the wall along this axis, crossing the cell's border.
  static void consider_transit(double pos, double v, int cell, EventKind wall, EventKind cross, double& when,
                               EventKind& kind) {
    if (v == 0) return;
    const double wall_at = v > 0 ? 1 - kRadius : kRadius;
    const double border = v > 0 ? (cell + 1) * kCell : cell * kCell;
    const bool border_first = v > 0 ? border < wall_at : border > wall_at;
    const double dt = std::max(0.0, ((border_first ? border : wall_at) - pos) / v);
    if (dt < when) {
      when = dt;
      kind = border_first ? cross : wall;
    }
  }

  // Time until discs a (at ax, ay now) and b touch, or kNever.
  double time_to_hit(double ax, double ay, const Ball& a, const Ball& b) const {
    const double dx = b.x_at(now_) - ax, dy = b.y_at(now_) - ay;
    const double dvx = b.vx - a.vx, dvy = b.vy - a.vy;
    const double dvdr = dx * dvx + dy * dvy;
    if (dvdr >= 0) return kNever;
    const double dvdv = dvx * dvx + dvy * dvy;
    const double drdr = dx * dx + dy * dy;
    const double sigma = 2 * kRadius;
    const double d = dvdr * dvdr - dvdv * (drdr - sigma * sigma);
    if (d < 0) return kNever;
    return std::max(0.0, -(dvdr + std::sqrt(d)) / dvdv);
  }

  void schedule(double time, EventKind kind, const Ball* a, const Ball* b) {
    Event* event = policy_.new_event();
    event->time = time;
    event->seq = seqs_++;
    event->kind = kind;
    event->a = a->slot;
    event->stamp_a = a->stamp;
    if (b != nullptr) {
      event->b = b->slot;
      event->stamp_b = b->stamp;
    }
    queue_.push_back(event);
    std::push_heap(queue_.begin(), queue_.end(), Later{});
  }

  static constexpr double kNever = 1e300;

  Policy policy_;
  Rng rng_;
  std::vector<Ball*> slots_;   // ball by slot: the checksum's order
  std::vector<Ball*> cells_;   // head of each cell's list
  std::vector<Event*> queue_;  // binary heap, earliest first
  double now_ = 0;
  std::uint64_t stamps_ = 0, seqs_ = 0, serials_ = 0;
  std::uint64_t processed_ = 0, stale_ = 0, collisions_ = 0, bounces_ = 0, crossings_ = 0, drained_ = 0;
};

template <class Policy>
std::uint64_t simulate(const Options& options) {
  Simulation<Policy> simulation(options.seed);
  simulation.run(options.scale * kEventsPerScale);
  return simulation.checksum();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<PerClassPolicy, MallocPolicy, ReapPolicy>(
      argc, argv, "boxed-sim", []<class Policy>(const Options& o) { return simulate<Policy>(o); });
}
