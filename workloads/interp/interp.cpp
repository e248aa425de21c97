// interp — regions, as in mudlle (2002 paper Tables 1–3 and Fig. 9; 2026
// paper Tables 1, 2 and 4, RQ2/RQ3): a compiler and bytecode interpreter for
// a small Lisp-like language. Each unit of scale generates a program from the
// seed — 15 functions in three tiers (recursive list builders and consumers,
// Fibonacci, closures with map and fold, string building; then loops,
// insertion sorts and let-compositions over those; then driver loops over
// those) and 48 (print e) forms — tokenizes and parses each top-level form,
// compiles it to stack bytecode and runs it.
//
// Memory is a stack of regions, one per call depth ("level"), created once
// and cleared, never given back: a call at level L allocates its frame
// (locals and operand stack) and its temporaries (pairs, strings, closures,
// map's scratch array) in region L. On return the result is copied into
// region L-1 — only the objects that live at level L or deeper; older ones
// are shared — and region L is cleared. Level 0 holds a top-level form's
// result, hashed and cleared after the form; a per-form compile region holds
// the form's tokens and syntax tree. A region is the owner of everything in
// it, so the interpreter needs no garbage collector.
//
// Modes:
//   custom  each region is a chain of strata's region layers,
//           TaggedStreamHeap<RegionChunkHeap<ChunkSource>>: objects bumped
//           inline through the stream's window (one byte tag each) from a
//           page-sized first chunk and doubling ones that clear() keeps and
//           replays; nothing freed before the clear;
//   naive   MallocRegion per level: every object its own malloc block, all
//           freed at the clear ("reduce chunk size to fit single objects",
//           2026 Table 4);
//   reap    a strata::reap per level, cleared at the same points, and every
//           object freed as soon as the interpreter knows it is dead: the
//           tokens once parsed; map's scratch array once the list is built;
//           a fresh temporary (objects made while evaluating an argument)
//           once a builtin whose result cannot refer to it (sum, len, str,
//           cat, null?) has consumed it; a fresh closure once map, fold or
//           call is done with it. Objects carry a stamp (allocation number
//           within the form), so "made while evaluating the argument" is
//           "stamp after the mark taken before it": values are immutable, so
//           nothing older can point to them.
// The checksum digests every printed value (ints, strings, lists, closures)
// in order; pointers are never hashed.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <strata/layers.hpp>
#include <strata/layers/region.hpp>
#include <strata/reap.hpp>

#include "regions.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

constexpr int kFormsPerProgram = 48;
constexpr int kMaxLevels = 200;          // deeper calls return nil (the programs never get there)
constexpr std::size_t kMaxRange = 64;    // (range a b) gives at most this many numbers
constexpr std::size_t kMaxString = 2000; // (cat a b) truncates here

// ---- the allocator policies: one region per level --------------------------

// custom: a bump region from strata's region layers. Allocation bumps
// inline through the stream's window, as a hand-written region (or
// strata_reap_malloc) does, and calls the layer only when the window is used
// up. The layers keep memory hidden from ASan/Valgrind until its owner hands
// an object out; this class is the owner.
class InlineBumpRegion {
 public:
  static constexpr bool kFreesEarly = false;
  InlineBumpRegion() { stream_.useCursor(&cursor_); }
  InlineBumpRegion(const InlineBumpRegion&) = delete;
  InlineBumpRegion& operator=(const InlineBumpRegion&) = delete;

  void* allocate(std::size_t size) noexcept {
    using namespace strata::layers;
    const std::size_t slot = tagged_slot_of(size);
    void* p;
    if (slot - 1 < cursor_.limit - cursor_.bump) {
      p = reinterpret_cast<void*>(cursor_.bump);
      cursor_.bump += slot;
      if (!instrumented_) {  // the plain bump: one byte store for the tag
        static_cast<unsigned char*>(p)[-1] = static_cast<unsigned char>(slot / kTagGranule);
        return p;
      }
      set_tag(p, slot / kTagGranule);
    } else {
      p = stream_.malloc(size);
      if (p == nullptr || !instrumented_) return p;
    }
    instrument::expose(p, size);
    return p;
  }
  void release(void*) noexcept {}  // a region frees nothing early
  void clear() noexcept { stream_.clear(); }

 private:
  // Under ASan or Valgrind objects are announced (asked once, not per object).
  const bool instrumented_ = strata::layers::instrument::kAsan || strata::layers::instrument::valgrind_hooks_on();
  strata::layers::BumpCursor cursor_;  // declared first: the stream keeps its bump pointer here
  strata::layers::TaggedStreamHeap<strata::layers::RegionChunkHeap<strata::layers::ChunkSource, 4096>> stream_;
};

using strata::workload::MallocRegion;  // naive
using strata::workload::ReapRegion;    // reap

// ---- values ---------------------------------------------------------------

// A value is a word: odd = a 63-bit integer, 0 = nil, else a pointer to an Obj.
using Value = std::uint64_t;
constexpr Value kNil = 0;
bool is_int(Value v) { return (v & 1) != 0; }
Value make_int(std::int64_t i) { return (static_cast<std::uint64_t>(i) << 1) | 1; }
std::int64_t int_of(Value v) { return is_int(v) ? static_cast<std::int64_t>(v) >> 1 : 0; }
bool truthy(Value v) { return v != kNil && v != make_int(0); }
// Integer arithmetic wraps (as unsigned), so every program is defined.
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

enum class Kind : std::uint8_t { pair, string, closure, scratch };

// Every heap object starts with this header; its payload follows.
struct Obj {
  Kind kind;
  std::uint8_t level;    // the region it lives in
  std::uint16_t length;  // string bytes, closure captures, scratch slots
  std::uint32_t stamp;   // allocation number within the top-level form
};
static_assert(sizeof(Obj) == 8);

Obj* obj(Value v) { return reinterpret_cast<Obj*>(static_cast<std::uintptr_t>(v)); }
Value value_of(const Obj* o) { return static_cast<Value>(reinterpret_cast<std::uintptr_t>(o)); }
bool is_obj(Value v) { return v != kNil && !is_int(v); }
bool is_kind(Value v, Kind k) { return is_obj(v) && obj(v)->kind == k; }
Value* slots(Obj* o) { return reinterpret_cast<Value*>(o + 1); }  // pair: car, cdr; closure: function, captures
char* bytes(Obj* o) { return reinterpret_cast<char*>(o + 1); }
Value car(Value v) { return is_kind(v, Kind::pair) ? slots(obj(v))[0] : make_int(0); }
Value cdr(Value v) { return is_kind(v, Kind::pair) ? slots(obj(v))[1] : kNil; }
std::string_view string_of(Value v) {
  return is_kind(v, Kind::string) ? std::string_view(bytes(obj(v)), obj(v)->length) : std::string_view();
}

// ---- the regions and the objects in them -----------------------------------

template <class Region>
class Memory {
 public:
  Memory() : levels_(kMaxLevels + 1) {}

  void* raw(int level, std::size_t size) {
    ++allocations_;
    void* p = region(level).allocate(size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  Obj* allocate(int level, Kind kind, std::size_t payload, std::size_t length) {
    auto* o = static_cast<Obj*>(raw(level, sizeof(Obj) + payload));
    *o = Obj{kind, static_cast<std::uint8_t>(level), static_cast<std::uint16_t>(length), ++stamp_};
    return o;
  }
  Value pair(int level, Value a, Value d) {
    Obj* o = allocate(level, Kind::pair, 2 * sizeof(Value), 0);
    slots(o)[0] = a;
    slots(o)[1] = d;
    return value_of(o);
  }
  Value string(int level, std::string_view s) {
    s = s.substr(0, kMaxString);
    Obj* o = allocate(level, Kind::string, s.size(), s.size());
    if (!s.empty()) std::memcpy(bytes(o), s.data(), s.size());
    return value_of(o);
  }

  // Copies what of v lives at level `from` or deeper into level from - 1.
  Value copy_out(Value v, int from) {
    if (!is_obj(v) || obj(v)->level < from) return v;
    Obj* o = obj(v);
    const int to = from - 1;
    switch (o->kind) {
      case Kind::pair: {  // along the list without recursion
        Value head = kNil;
        Value* link = &head;
        while (is_kind(v, Kind::pair) && obj(v)->level >= from) {
          const Value copy = pair(to, copy_out(car(v), from), kNil);
          *link = copy;
          link = &slots(obj(copy))[1];
          v = cdr(v);
        }
        *link = copy_out(v, from);
        return head;
      }
      case Kind::string: return string(to, string_of(v));
      case Kind::closure: {
        Obj* c = allocate(to, Kind::closure, (1 + o->length) * sizeof(Value), o->length);
        slots(c)[0] = slots(o)[0];
        for (std::size_t i = 1; i <= o->length; ++i) slots(c)[i] = copy_out(slots(o)[i], from);
        return value_of(c);
      }
      case Kind::scratch: break;
    }
    throw std::logic_error("interp: a scratch array escaped its call");
  }

  // Reap mode: frees every object reachable from v that was made after the
  // mark (and so is reachable from nothing else: values are immutable).
  void release_fresh(Value v, std::uint32_t mark, int level) {
    while (is_obj(v) && obj(v)->stamp > mark && obj(v)->level == level) {
      Obj* o = obj(v);
      Value next = kNil;
      if (o->kind == Kind::pair) {
        release_fresh(slots(o)[0], mark, level);
        next = slots(o)[1];
      } else if (o->kind == Kind::closure) {
        for (std::size_t i = 1; i <= o->length; ++i) release_fresh(slots(o)[i], mark, level);
      }
      region(level).release(o);
      v = next;
    }
  }
  void release(Obj* o) { region(o->level).release(o); }

  void clear(int level) {
    if (levels_[static_cast<std::size_t>(level)]) levels_[static_cast<std::size_t>(level)]->clear();
  }
  void reset_stamps() { stamp_ = 0; }
  std::uint32_t stamp() const { return stamp_; }
  std::uint64_t allocations() const { return allocations_; }

 private:
  Region& region(int level) {
    auto& r = levels_[static_cast<std::size_t>(level)];
    if (!r) r = std::make_unique<Region>();  // kept for the whole run, cleared per call
    return *r;
  }
  std::vector<std::unique_ptr<Region>> levels_;
  std::uint32_t stamp_ = 0;
  std::uint64_t allocations_ = 0;
};

// ---- source programs, generated from the seed -------------------------------

// Types of the generated code: i int, n size (a small int that bounds a
// recursion or a loop), l list of ints, s string, f closure int -> int.
struct Signature {
  std::string name;
  std::string params;  // one type letter per parameter
  char result;
  int bound;  // for 'n' parameters: the caller passes a value below this
  int tier;   // 0 light (recursion over short lists), 1 loops and sorts over
              // tier 0, 2 drivers looping over tier 1; calls go to lower tiers
};

// A program: kLight tier-0 functions, kMedium tier-1, kDrivers tier-2, then
// kFormsPerProgram (print e) forms over all of them.
constexpr int kLight = 9, kMedium = 4, kDrivers = 2;

class Generator {
 public:
  explicit Generator(Rng& rng) : rng_(rng) {}

  std::string program() {
    std::string text;
    for (int k = 0; k < kLight + kMedium + kDrivers; ++k) text += function(k);
    for (int k = 0; k < kFormsPerProgram; ++k) {
      text += "(print ";
      text += k % 3 == 0 ? int_call(2, {}) : expr("iilsf"[rng_.below(5)], 2, {}, 2);
      text += ")\n";
    }
    return text;
  }

 private:
  struct Var {
    std::string name;
    char type;
  };
  using Vars = std::vector<Var>;

  std::string num(std::int64_t lo, std::int64_t hi) {
    return std::to_string(lo + static_cast<std::int64_t>(rng_.below(static_cast<std::uint64_t>(hi - lo + 1))));
  }
  std::string fresh(const char* stem) { return stem + std::to_string(names_++); }

  // Small arithmetic over the given int variables (no calls: cheap).
  std::string arith(const Vars& vars, int depth) {
    std::vector<const Var*> ints;
    for (const Var& v : vars)
      if (v.type == 'i' || v.type == 'n') ints.push_back(&v);
    const auto leaf = [&] { return ints.empty() || rng_.chance(0.3) ? num(-9, 99) : ints[rng_.below(ints.size())]->name; };
    if (depth == 0) return leaf();
    static constexpr const char* kOps[] = {"+", "-", "*", "+", "mod", "/"};
    const char* op = kOps[rng_.below(std::size(kOps))];
    const std::string left = rng_.chance(0.6) ? arith(vars, depth - 1) : leaf();
    const std::string right = op[0] == 'm' || op[0] == '/' ? num(2, 97) : rng_.chance(0.5) ? num(1, 9) : arith(vars, depth - 1);
    return std::string("(") + op + " " + left + " " + right + ")";
  }

  std::string size_arg(int bound, const Vars& vars, int tier) {
    if (rng_.chance(0.4)) return num(bound / 3, bound - 1);
    return "(mod " + expr('i', 1, vars, tier) + " " + std::to_string(bound) + ")";
  }

  std::string call(const Signature& s, const Vars& vars, int tier) {
    std::string text(1, '(');  // appended piece by piece: GCC 12's -Wrestrict misfires on "(" + name
    text += s.name;
    for (char p : s.params) {
      text += ' ';
      text += p == 'n' ? size_arg(s.bound, vars, tier) : expr(p, 1, vars, tier);
    }
    text += ')';
    return text;
  }

  // An int expression around a call to a function of exactly this tier,
  // whose arguments may call lower tiers.
  std::string int_call(int tier, const Vars& vars) {
    std::vector<const Signature*> fit;
    for (const Signature& s : sigs_)
      if (s.tier == tier) fit.push_back(&s);
    const Signature& s = *fit[rng_.below(fit.size())];
    const std::string c = call(s, vars, tier - 1);
    switch (s.result) {
      case 'l': return (rng_.chance(0.5) ? "(sum " : "(len ") + c + ")";
      case 's': return "(len " + c + ")";
      case 'f': return "(call " + c + " " + arith(vars, 1) + ")";
      default: return c;
    }
  }

  // An expression of the given type, nesting at most `depth`, calling
  // generated functions of tier <= max_tier (none if max_tier < 0).
  std::string expr(char type, int depth, const Vars& vars, int max_tier) {
    if (type == 'n') type = 'i';
    std::vector<const Var*> same;
    for (const Var& v : vars)
      if (v.type == type || (type == 'i' && v.type == 'n')) same.push_back(&v);
    std::vector<const Signature*> callable;
    if (depth > 0)
      for (const Signature& s : sigs_)
        if (s.result == type && s.tier <= max_tier) callable.push_back(&s);
    const std::uint64_t r = rng_.below(10);
    if (!same.empty() && r < 2) return same[rng_.below(same.size())]->name;
    if (!callable.empty() && r < 6) return call(*callable[rng_.below(callable.size())], vars, std::min(max_tier, 0));
    const bool deeper = depth > 0 && r < 8;
    switch (type) {
      case 'i':
        if (deeper) {
          switch (rng_.below(4)) {
            case 0: return "(sum " + expr('l', depth - 1, vars, max_tier) + ")";
            case 1: return "(len " + expr(rng_.chance(0.5) ? 'l' : 's', depth - 1, vars, max_tier) + ")";
            case 2: return "(call " + expr('f', depth - 1, vars, max_tier) + " " + expr('i', depth - 1, vars, max_tier) + ")";
            default: return "(+ " + expr('i', depth - 1, vars, max_tier) + " " + expr('i', depth - 1, vars, max_tier) + ")";
          }
        }
        return arith(vars, 1);
      case 'l':
        if (deeper) {
          switch (rng_.below(3)) {
            case 0: return "(map " + expr('f', depth - 1, vars, max_tier) + " " + expr('l', depth - 1, vars, max_tier) + ")";
            case 1: return "(cons " + expr('i', depth - 1, vars, max_tier) + " " + expr('l', depth - 1, vars, max_tier) + ")";
            default: return "(cdr " + expr('l', depth - 1, vars, max_tier) + ")";
          }
        }
        {
          const std::string from = ints_in(vars) ? arith(vars, 1) : num(-5, 40);
          return "(range " + from + " (+ " + from + " " + num(4, 24) + "))";
        }
      case 's':
        if (deeper) return "(cat " + expr('s', depth - 1, vars, max_tier) + " " + expr('s', depth - 1, vars, max_tier) + ")";
        return rng_.chance(0.3) ? "\"" + std::string(kWords[rng_.below(std::size(kWords))]) + "\"" : "(str " + arith(vars, 1) + ")";
      case 'f': {
        Vars inner = vars;
        inner.push_back({fresh("x"), 'i'});
        return "(lambda (" + inner.back().name + ") " + arith(inner, 2) + ")";
      }
    }
    throw std::logic_error("interp generator: bad type");
  }
  static bool ints_in(const Vars& vars) {
    return std::any_of(vars.begin(), vars.end(), [](const Var& v) { return v.type == 'i' || v.type == 'n'; });
  }

  // One function definition from a template; its signature joins sigs_.
  std::string function(int k) {
    const std::string id = std::to_string(k);
    const std::string c = num(1, 9);
    auto add = [&](const std::string& name, std::string params, char result, int bound, int tier) {
      sigs_.push_back(Signature{name, std::move(params), result, bound, tier});
    };
    if (k >= kLight + kMedium) {  // a driver: a loop over tier-1 work
      const std::string name = "drive" + id;
      const Vars vars = {{"j", 'n'}, {"n", 'n'}, {"acc", 'i'}};
      add(name, "n", 'i', 20 + static_cast<int>(rng_.below(40)), 2);
      return "(def " + name + " (n) (loop j 0 n acc " + c + " (+ (* acc 3) " + int_call(1, vars) + ")))\n";
    }
    if (k >= kLight) {  // tier 1: a loop, a sort or a composition over tier 0
      switch (rng_.below(3)) {
        case 0: {  // a counted loop whose body makes and consumes temporaries
          const std::string name = "loop" + id;
          const Vars vars = {{"i", 'n'}, {"n", 'n'}, {"acc", 'i'}};
          add(name, "n", 'i', 20 + static_cast<int>(rng_.below(40)), 1);
          return "(def " + name + " (n) (loop i 0 n acc " + c + " (+ acc " + int_call(0, vars) + ")))\n";
        }
        case 1: {  // insertion sort
          const std::string name = "sort" + id;
          add(name, "l", 'l', 0, 1);
          return "(def " + name + "i (x xs) (if (null? xs) (cons x nil) (if (< x (car xs)) (cons x xs) (cons (car xs) (" +
                 name + "i x (cdr xs))))))\n(def " + name + " (xs) (if (null? xs) nil (" + name + "i (car xs) (" + name +
                 " (cdr xs)))))\n";
        }
        default: {  // let-bound intermediate results
          const std::string name = "comp" + id;
          add(name, "n", 's', 30, 1);
          return "(def " + name + " (n) (let ys " + expr('l', 2, {{"n", 'n'}}, 0) + " (let zs " +
                 expr('l', 1, {{"ys", 'l'}, {"n", 'n'}}, 0) + " (cat (str (+ " + int_call(0, {{"n", 'n'}}) +
                 " (len zs))) " + expr('s', 1, {{"ys", 'l'}, {"zs", 'l'}}, 0) + "))))\n";
        }
      }
    }
    // Tier 0. The first three are the builders and consumers the others call.
    const std::uint64_t choice = k < 3 ? static_cast<std::uint64_t>(k) : rng_.below(9);
    switch (choice) {
      case 0: {  // build a list by recursion: every level's list is copied up
        const std::string name = "build" + id;
        add(name, "n", 'l', 10 + static_cast<int>(rng_.below(24)), 0);
        return "(def " + name + " (n) (if (< n 1) nil (cons " + arith({{"n", 'n'}}, 2) + " (" + name + " (- n 1)))))\n";
      }
      case 1: {  // consume a list by recursion
        const std::string name = "sumf" + id;
        add(name, "l", 'i', 0, 0);
        return "(def " + name + " (xs) (if (null? xs) " + c + " (let x (car xs) (+ " + arith({{"x", 'i'}}, 2) + " (" +
               name + " (cdr xs))))))\n";
      }
      case 2: {  // a string of the list's numbers
        const std::string name = "show" + id;
        add(name, "l", 's', 0, 0);
        return "(def " + name + " (xs) (if (null? xs) \"\" (cat (str (car xs)) (cat \",\" (" + name + " (cdr xs))))))\n";
      }
      case 3: {  // tree recursion: frames only
        const std::string name = "fib" + id;
        add(name, "n", 'i', 8 + static_cast<int>(rng_.below(6)), 0);
        return "(def " + name + " (n) (if (< n 2) (+ n " + c + ") (+ (" + name + " (- n 1)) (" + name + " (- n 2)))))\n";
      }
      case 4: {  // map with a closure over a parameter
        const std::string name = "scale" + id;
        add(name, "li", 'l', 0, 0);
        return "(def " + name + " (xs a) (map (lambda (x) " + arith({{"x", 'i'}, {"a", 'i'}}, 2) + ") xs))\n";
      }
      case 5: {  // make a closure
        const std::string name = "mk" + id;
        add(name, "i", 'f', 0, 0);
        return "(def " + name + " (a) (lambda (x) " + arith({{"x", 'i'}, {"a", 'i'}}, 2) + "))\n";
      }
      case 6: {  // fold with a closure
        const std::string name = "fold" + id;
        add(name, "l", 'i', 0, 0);
        return "(def " + name + " (xs) (fold (lambda (acc x) (+ acc " + arith({{"x", 'i'}}, 2) + ")) " + c + " xs))\n";
      }
      case 7: {  // filter by recursion
        const std::string name = "filt" + id;
        add(name, "li", 'l', 0, 0);
        return "(def " + name + " (xs p) (if (null? xs) nil (let x (car xs) (if (< (mod x " + num(3, 17) + ") p) (cons x (" +
               name + " (cdr xs) p)) (" + name + " (cdr xs) p)))))\n";
      }
      default: {  // reverse with an accumulator: each step's list copied up
        const std::string name = "rev" + id;
        add(name, "l", 'l', 0, 0);
        return "(def " + name + "a (xs acc) (if (null? xs) acc (" + name + "a (cdr xs) (cons (car xs) acc))))\n(def " +
               name + " (xs) (" + name + "a xs nil))\n";
      }
    }
  }

  static constexpr const char* kWords[] = {"a", "ok", "nil?", "mud", "lle", "region", "frame", ""};
  Rng& rng_;
  std::vector<Signature> sigs_;
  int names_ = 0;
};

// ---- tokens and syntax trees: in the compile region, one form at a time -----

enum class Tok : std::uint8_t { open, close, number, symbol, string };

struct Token {
  Token* next;
  const char* text;
  std::uint32_t length;
  Tok kind;
  std::int64_t number;
};

struct Node {  // an S-expression
  enum Type : std::uint8_t { number, symbol, string, list } type;
  std::int64_t value;
  std::string_view text;
  Node* first;  // list: first element
  Node* next;   // the next element of the enclosing list
};

template <class Region>
class Reader {
 public:
  explicit Reader(Region& region) : region_(region) {}

  // Tokens of one top-level form starting at `at`; advances `at` past it.
  Token* tokenize(std::string_view source, std::size_t& at) {
    Token* head = nullptr;
    Token** link = &head;
    int depth = 0;
    while (at < source.size()) {
      const char ch = source[at];
      if (ch == ' ' || ch == '\n') {
        ++at;
        continue;
      }
      Token* t = make<Token>();
      *t = Token{nullptr, source.data() + at, 1, Tok::open, 0};
      if (ch == '(') {
        ++depth, ++at;
      } else if (ch == ')') {
        t->kind = Tok::close;
        --depth, ++at;
      } else if (ch == '"') {
        const std::size_t end = source.find('"', at + 1);
        if (end == std::string_view::npos) throw std::runtime_error("interp: unterminated string");
        t->kind = Tok::string;
        t->text = source.data() + at + 1;
        t->length = static_cast<std::uint32_t>(end - at - 1);
        at = end + 1;
      } else {
        std::size_t end = at;
        while (end < source.size() && source[end] != ' ' && source[end] != '\n' && source[end] != '(' && source[end] != ')')
          ++end;
        const std::string_view word = source.substr(at, end - at);
        t->length = static_cast<std::uint32_t>(word.size());
        const bool negative = word.size() > 1 && word[0] == '-';
        if (std::isdigit(static_cast<unsigned char>(word[negative ? 1 : 0]))) {
          t->kind = Tok::number;
          t->number = std::strtoll(std::string(word).c_str(), nullptr, 10);
        } else {
          t->kind = Tok::symbol;
        }
        at = end;
      }
      *link = t;
      link = &t->next;
      if (depth == 0) break;
    }
    return head;
  }

  Node* parse(Token*& t) {
    if (t == nullptr) throw std::runtime_error("interp: unexpected end of form");
    Node* n = make<Node>();
    *n = Node{Node::number, t->number, std::string_view(t->text, t->length), nullptr, nullptr};
    const Tok kind = t->kind;
    t = t->next;
    switch (kind) {
      case Tok::number: return n;
      case Tok::symbol: n->type = Node::symbol; return n;
      case Tok::string: n->type = Node::string; return n;
      case Tok::close: throw std::runtime_error("interp: unexpected ')'");
      case Tok::open: break;
    }
    n->type = Node::list;
    Node** link = &n->first;
    while (t != nullptr && t->kind != Tok::close) {
      *link = parse(t);
      link = &(*link)->next;
    }
    if (t == nullptr) throw std::runtime_error("interp: missing ')'");
    t = t->next;
    return n;
  }

  // The tokens are dead once parsed (reap mode gives them back).
  void release(Token* t) {
    while (t != nullptr) {
      Token* next = t->next;
      region_.release(t);
      t = next;
    }
  }

 private:
  template <class T>
  T* make() {
    void* p = region_.allocate(sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  Region& region_;
};

// ---- bytecode ---------------------------------------------------------------

enum Op : std::uint8_t {
  kConst, kNilOp, kStr, kLoad, kStore, kJump, kJumpIfFalse,
  kAdd, kSub, kMul, kDiv, kMod, kLt, kEq,
  kCall, kClosure, kBuiltin, kMark, kReturn,
};
enum Builtin : std::uint8_t { bCons, bCar, bCdr, bNull, bStr, bCat, bLen, bSum, bRange, bMap, bFold, bCall };

struct Instr {
  Op op;
  std::uint8_t b;   // argument count, captures
  std::uint16_t c;  // builtin: mark slot + 1 (0: no mark)
  std::int32_t a;   // constant, slot, target, function, builtin
};

struct Function {
  std::string name;
  std::vector<Instr> code;
  int arity = 0, captures = 0, locals = 0, max_stack = 0;
};

struct Program {
  std::vector<Function> functions;
  std::vector<std::string> strings;  // literals
  int find(std::string_view name) const {
    for (std::size_t i = 0; i < functions.size(); ++i)
      if (functions[i].name == name) return static_cast<int>(i);
    return -1;
  }
};

struct BuiltinInfo {
  const char* name;
  Builtin id;
  int arity;  // -1: any
  enum Release : std::uint8_t { none, all_args, closure_arg } release;
};
constexpr BuiltinInfo kBuiltins[] = {
    {"cons", bCons, 2, BuiltinInfo::none},      {"car", bCar, 1, BuiltinInfo::none},
    {"cdr", bCdr, 1, BuiltinInfo::none},        {"null?", bNull, 1, BuiltinInfo::all_args},
    {"str", bStr, 1, BuiltinInfo::all_args},    {"cat", bCat, 2, BuiltinInfo::all_args},
    {"len", bLen, 1, BuiltinInfo::all_args},    {"sum", bSum, 1, BuiltinInfo::all_args},
    {"range", bRange, 2, BuiltinInfo::none},    {"map", bMap, 2, BuiltinInfo::closure_arg},
    {"fold", bFold, 3, BuiltinInfo::closure_arg}, {"call", bCall, -1, BuiltinInfo::closure_arg},
};

// Compiles one function body (a def, a lambda or a top-level form). A
// frame's slots: a closure's captured values, then the parameters, then the
// let and loop variables and the marks.
class Compiler {
 public:
  explicit Compiler(Program& program) : program_(program) {}

  static void compile_form(Program& program, const Node* form) {
    const Node* head = form->type == Node::list ? form->first : nullptr;
    if (head != nullptr && head->text == "def") {
      const Node* name = head->next;
      const Node* params = name->next;
      const int index = new_function(program, std::string(name->text));  // visible to its own body
      Compiler c(program);
      for (const Node* p = params->first; p != nullptr; p = p->next) c.declare(p->text);
      program.functions[static_cast<std::size_t>(index)].arity = c.next_slot_;
      c.finish(params->next, index, 0);
    } else if (head != nullptr && head->text == "print") {
      Compiler(program).finish(head->next, new_function(program, "(print)"), 0);
    } else {
      throw std::runtime_error("interp: a top-level form must be def or print");
    }
  }

 private:
  struct Local {
    std::string_view name;
    int slot;
  };

  static int new_function(Program& program, std::string name) {
    program.functions.emplace_back();
    program.functions.back().name = std::move(name);
    return static_cast<int>(program.functions.size() - 1);
  }

  int declare(std::string_view name) {
    const int slot = next_slot_++;
    locals_ = std::max(locals_, next_slot_);
    scope_.push_back({name, slot});
    return slot;
  }
  int hidden() {
    const int slot = next_slot_++;
    locals_ = std::max(locals_, next_slot_);
    return slot;
  }

  void finish(const Node* body, int index, int captures) {
    const int arity = next_slot_ - captures;
    expr(body);
    emit(kReturn);
    Function& f = program_.functions[static_cast<std::size_t>(index)];
    f.code = std::move(code_);
    f.arity = arity;
    f.captures = captures;
    f.locals = locals_;
    f.max_stack = max_stack_;
  }

  int resolve(std::string_view name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->name == name) return it->slot;
    return -1;
  }

  void emit(Op op, std::int32_t a = 0, std::uint8_t b = 0, std::uint16_t c = 0) {
    code_.push_back(Instr{op, b, c, a});
    switch (op) {
      case kConst: case kNilOp: case kStr: case kLoad: push(1); break;
      case kStore: case kJumpIfFalse: case kReturn: push(-1); break;
      case kAdd: case kSub: case kMul: case kDiv: case kMod: case kLt: case kEq: push(-1); break;
      case kCall: case kBuiltin: case kClosure: push(1 - b); break;
      case kJump: case kMark: break;
    }
  }
  void push(int n) {
    depth_ += n;
    max_stack_ = std::max(max_stack_, depth_);
  }

  void expr(const Node* n) {
    switch (n->type) {
      case Node::number: emit(kConst, static_cast<std::int32_t>(n->value)); return;
      case Node::string:
        program_.strings.emplace_back(n->text);
        emit(kStr, static_cast<std::int32_t>(program_.strings.size() - 1));
        return;
      case Node::symbol: {
        if (n->text == "nil") return emit(kNilOp);
        const int slot = resolve(n->text);
        if (slot < 0) throw std::runtime_error("interp: unknown variable " + std::string(n->text));
        return emit(kLoad, slot);
      }
      case Node::list: break;
    }
    const Node* head = n->first;
    const std::string_view op = head->text;
    const Node* a1 = head->next;
    if (op == "if") {
      expr(a1);
      const std::size_t to_else = code_.size();
      emit(kJumpIfFalse);
      expr(a1->next);
      const std::size_t to_end = code_.size();
      emit(kJump);
      depth_ -= 1;  // only one branch's value is on the stack
      code_[to_else].a = static_cast<std::int32_t>(code_.size());
      expr(a1->next->next);
      code_[to_end].a = static_cast<std::int32_t>(code_.size());
      return;
    }
    if (op == "let") {  // (let x e body)
      expr(a1->next);
      emit(kStore, declare(a1->text));
      expr(a1->next->next);
      scope_.pop_back();
      return;
    }
    if (op == "loop") return loop(a1);
    if (op == "lambda") return lambda(a1, a1->next);
    static constexpr std::pair<std::string_view, Op> kArith[] = {{"+", kAdd}, {"-", kSub}, {"*", kMul}, {"/", kDiv},
                                                                 {"mod", kMod}, {"<", kLt}, {"=", kEq}};
    for (const auto& [name, code] : kArith)
      if (op == name) {
        expr(a1);
        expr(a1->next);
        return emit(code);
      }
    int argc = 0;
    for (const Node* a = a1; a != nullptr; a = a->next) ++argc;
    for (const BuiltinInfo& b : kBuiltins) {
      if (op != b.name) continue;
      if (b.arity >= 0 && argc != b.arity) throw std::runtime_error("interp: wrong argument count for " + std::string(op));
      // A mark before the arguments when one of them may make fresh objects.
      std::uint16_t mark = 0;
      if (b.release != BuiltinInfo::none) {
        bool fresh = false;
        for (const Node* a = a1; a != nullptr; a = a->next) fresh |= a->type == Node::list || a->type == Node::string;
        if (fresh) {
          const int slot = hidden();
          emit(kMark, slot);
          mark = static_cast<std::uint16_t>(slot + 1);
        }
      }
      for (const Node* a = a1; a != nullptr; a = a->next) expr(a);
      return emit(kBuiltin, b.id, static_cast<std::uint8_t>(argc), mark);
    }
    const int callee = program_.find(op);
    if (callee < 0) throw std::runtime_error("interp: unknown function " + std::string(op));
    if (argc != program_.functions[static_cast<std::size_t>(callee)].arity)
      throw std::runtime_error("interp: wrong argument count for " + std::string(op));
    for (const Node* a = a1; a != nullptr; a = a->next) expr(a);
    emit(kCall, callee, static_cast<std::uint8_t>(argc));
  }

  // (loop i from to acc init body): acc = body for i = from .. to-1; -> acc
  void loop(const Node* i_name) {
    const Node* from = i_name->next;
    const Node* to = from->next;
    const Node* acc = to->next;
    const Node* init = acc->next;
    const Node* body = init->next;
    expr(from);
    const int limit = hidden();
    expr(to);
    emit(kStore, limit);
    expr(init);
    const int a = declare(acc->text);
    emit(kStore, a);
    const int i = declare(i_name->text);
    emit(kStore, i);
    const auto top = static_cast<std::int32_t>(code_.size());
    emit(kLoad, i);
    emit(kLoad, limit);
    emit(kLt);
    const std::size_t to_end = code_.size();
    emit(kJumpIfFalse);
    expr(body);
    emit(kStore, a);
    emit(kLoad, i);
    emit(kConst, 1);
    emit(kAdd);
    emit(kStore, i);
    emit(kJump, top);
    code_[to_end].a = static_cast<std::int32_t>(code_.size());
    emit(kLoad, a);
    scope_.pop_back();
    scope_.pop_back();
  }

  // (lambda (params) body): a function of its own whose first slots hold the
  // values it captures (its free variables, copied when the closure is made).
  void lambda(const Node* params, const Node* body) {
    std::vector<std::string_view> bound, free;
    for (const Node* p = params->first; p != nullptr; p = p->next) bound.push_back(p->text);
    free_variables(body, bound, free);
    const int index = new_function(program_, "(lambda)");
    Compiler inner(program_);
    for (std::string_view name : free) inner.declare(name);
    for (const Node* p = params->first; p != nullptr; p = p->next) inner.declare(p->text);
    inner.finish(body, index, static_cast<int>(free.size()));
    for (std::string_view name : free) emit(kLoad, resolve(name));
    emit(kClosure, index, static_cast<std::uint8_t>(free.size()));
  }

  // Names used in n, bound neither in n nor by `bound`, that are locals here.
  void free_variables(const Node* n, std::vector<std::string_view>& bound, std::vector<std::string_view>& free) const {
    if (n->type == Node::symbol) {
      if (std::find(bound.begin(), bound.end(), n->text) == bound.end() &&
          std::find(free.begin(), free.end(), n->text) == free.end() && resolve(n->text) >= 0)
        free.push_back(n->text);
      return;
    }
    if (n->type != Node::list) return;
    const Node* head = n->first;
    const std::size_t outer = bound.size();
    if (head->text == "lambda") {
      for (const Node* p = head->next->first; p != nullptr; p = p->next) bound.push_back(p->text);
      free_variables(head->next->next, bound, free);
    } else if (head->text == "let") {
      const Node* name = head->next;
      free_variables(name->next, bound, free);
      bound.push_back(name->text);
      free_variables(name->next->next, bound, free);
    } else if (head->text == "loop") {
      const Node* i = head->next;
      const Node* acc = i->next->next->next;
      free_variables(i->next, bound, free);
      free_variables(i->next->next, bound, free);
      free_variables(acc->next, bound, free);
      bound.push_back(i->text);
      bound.push_back(acc->text);
      free_variables(acc->next->next, bound, free);
    } else {
      for (const Node* a = head->next; a != nullptr; a = a->next) free_variables(a, bound, free);
    }
    bound.resize(outer);
  }

  Program& program_;
  std::vector<Local> scope_;
  std::vector<Instr> code_;
  int next_slot_ = 0, locals_ = 0, depth_ = 0, max_stack_ = 0;
};

// ---- the interpreter --------------------------------------------------------

template <class Region>
class Interpreter {
 public:
  Interpreter(const Program& program, Memory<Region>& memory) : program_(program), memory_(memory) {}

  // Runs a top-level form at level 1; its value ends up in level 0.
  Value run(const Function& form) { return execute(form, nullptr, 0, nullptr, 1); }
  std::uint64_t calls() const { return calls_; }

 private:
  // One call at `level`: its frame and temporaries live in that level's
  // region; the result is copied to level - 1 and the region cleared.
  Value execute(const Function& f, const Value* args, int argc, Obj* closure, int level) {
    if (level >= kMaxLevels) return kNil;
    ++calls_;
    const auto locals_count = static_cast<std::size_t>(f.locals);
    auto* locals = static_cast<Value*>(memory_.raw(level, (locals_count + static_cast<std::size_t>(f.max_stack)) * sizeof(Value)));
    for (std::size_t i = 0; i < locals_count; ++i) locals[i] = kNil;
    for (int i = 0; i < f.captures; ++i) locals[i] = slots(closure)[1 + i];
    for (int i = 0; i < f.arity && i < argc; ++i) locals[f.captures + i] = args[i];
    Value* sp = locals + locals_count;
    const Instr* code = f.code.data();
    for (std::size_t pc = 0;;) {
      const Instr& in = code[pc++];
      switch (in.op) {
        case kConst: *sp++ = make_int(in.a); break;
        case kNilOp: *sp++ = kNil; break;
        case kStr: *sp++ = memory_.string(level, program_.strings[static_cast<std::size_t>(in.a)]); break;
        case kLoad: *sp++ = locals[in.a]; break;
        case kStore: locals[in.a] = *--sp; break;
        case kJump: pc = static_cast<std::size_t>(in.a); break;
        case kJumpIfFalse:
          if (!truthy(*--sp)) pc = static_cast<std::size_t>(in.a);
          break;
        case kAdd: case kSub: case kMul: case kDiv: case kMod: case kLt: case kEq: {
          --sp;
          sp[-1] = arithmetic(in.op, int_of(sp[-1]), int_of(sp[0]));
          break;
        }
        case kCall: {
          sp -= in.b;
          const Value result = execute(program_.functions[static_cast<std::size_t>(in.a)], sp, in.b, nullptr, level + 1);
          *sp++ = result;
          break;
        }
        case kClosure: {
          sp -= in.b;
          Obj* c = memory_.allocate(level, Kind::closure, (1 + std::size_t{in.b}) * sizeof(Value), in.b);
          slots(c)[0] = make_int(in.a);
          for (std::size_t i = 0; i < in.b; ++i) slots(c)[1 + i] = sp[i];
          *sp++ = value_of(c);
          break;
        }
        case kMark: locals[in.a] = make_int(memory_.stamp()); break;
        case kBuiltin: {
          sp -= in.b;
          const Value result = builtin(static_cast<Builtin>(in.a), sp, in.b, level);
          if constexpr (Region::kFreesEarly) {
            if (in.c != 0) release_arguments(static_cast<Builtin>(in.a), sp, in.b, locals[in.c - 1], level);
          }
          *sp++ = result;
          break;
        }
        case kReturn: {
          const Value out = memory_.copy_out(sp[-1], level);
          memory_.clear(level);
          return out;
        }
      }
    }
  }

  static Value arithmetic(Op op, std::int64_t a, std::int64_t b) {
    switch (op) {
      case kAdd: return make_int(wrap_add(a, b));
      case kSub: return make_int(wrap_sub(a, b));
      case kMul: return make_int(wrap_mul(a, b));
      case kDiv: return make_int(b == 0 ? 0 : a / b);  // |a| < 2^62: no overflow
      case kMod: {
        if (b == 0) return make_int(0);
        std::int64_t r = a % b;
        if (r < 0) r += b < 0 ? -b : b;
        return make_int(r);
      }
      case kLt: return make_int(a < b);
      case kEq: return make_int(a == b);
      default: return kNil;
    }
  }

  Value apply(Value f, const Value* args, int argc, int level) {
    if (!is_kind(f, Kind::closure)) return kNil;
    const auto index = static_cast<std::size_t>(int_of(slots(obj(f))[0]));
    return execute(program_.functions[index], args, argc, obj(f), level);
  }

  static std::size_t length(Value xs) {
    std::size_t n = 0;
    for (; is_kind(xs, Kind::pair); xs = cdr(xs)) ++n;
    return n;
  }

  Value builtin(Builtin id, const Value* a, int argc, int level) {
    switch (id) {
      case bCons: return memory_.pair(level, a[0], a[1]);
      case bCar: return car(a[0]);
      case bCdr: return cdr(a[0]);
      case bNull: return make_int(a[0] == kNil);
      case bStr: {
        const std::string digits = std::to_string(int_of(a[0]));
        return memory_.string(level, digits);
      }
      case bCat: {
        const std::string_view x = string_of(a[0]), y = string_of(a[1]);
        const std::size_t n = std::min(x.size() + y.size(), kMaxString);
        Obj* o = memory_.allocate(level, Kind::string, n, n);
        const std::size_t from_x = std::min(x.size(), n);
        if (from_x != 0) std::memcpy(bytes(o), x.data(), from_x);
        if (n > from_x) std::memcpy(bytes(o) + from_x, y.data(), n - from_x);
        return value_of(o);
      }
      case bLen:
        return make_int(static_cast<std::int64_t>(is_kind(a[0], Kind::string) ? string_of(a[0]).size() : length(a[0])));
      case bSum: {
        std::int64_t total = 0;
        for (Value xs = a[0]; is_kind(xs, Kind::pair); xs = cdr(xs)) total = wrap_add(total, int_of(car(xs)));
        return make_int(total);
      }
      case bRange: {
        const std::int64_t from = int_of(a[0]), to = int_of(a[1]);
        const auto n = to > from ? std::min(static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from),
                                            std::uint64_t{kMaxRange})
                                 : 0;
        Value list = kNil;
        for (std::uint64_t i = n; i-- > 0;) list = memory_.pair(level, make_int(wrap_add(from, static_cast<std::int64_t>(i))), list);
        return list;
      }
      case bMap: {
        // The results wait in a scratch array (a temporary of this call),
        // then become a list built from the back.
        const std::size_t n = length(a[1]);
        Obj* scratch = memory_.allocate(level, Kind::scratch, n * sizeof(Value), 0);
        Value xs = a[1];
        for (std::size_t i = 0; i < n; ++i, xs = cdr(xs)) {
          const Value x = car(xs);
          slots(scratch)[i] = apply(a[0], &x, 1, level + 1);
        }
        Value list = kNil;
        for (std::size_t i = n; i-- > 0;) list = memory_.pair(level, slots(scratch)[i], list);
        memory_.release(scratch);  // dead: only reap mode gives it back now
        return list;
      }
      case bFold: {
        Value acc = a[1];
        for (Value xs = a[2]; is_kind(xs, Kind::pair); xs = cdr(xs)) {
          const Value pair[2] = {acc, car(xs)};
          acc = apply(a[0], pair, 2, level + 1);
        }
        return acc;
      }
      case bCall: return argc == 0 ? kNil : apply(a[0], a + 1, argc - 1, level + 1);
    }
    return kNil;
  }

  // Reap mode: what the builtin consumed and made after the mark is dead.
  void release_arguments(Builtin id, const Value* a, int argc, Value mark_value, int level) {
    const auto mark = static_cast<std::uint32_t>(int_of(mark_value));
    const BuiltinInfo* info = nullptr;
    for (const BuiltinInfo& b : kBuiltins)
      if (b.id == id) info = &b;
    if (info->release == BuiltinInfo::all_args) {
      for (int i = 0; i < argc; ++i) memory_.release_fresh(a[i], mark, level);
    } else if (info->release == BuiltinInfo::closure_arg && argc > 0 && is_kind(a[0], Kind::closure)) {
      // Only the closure object: what it captured may be in the result.
      Obj* c = obj(a[0]);
      if (c->stamp > mark && c->level == level) memory_.release(c);
    }
  }

  const Program& program_;
  Memory<Region>& memory_;
  std::uint64_t calls_ = 0;
};

// A printed value into the checksum: structure and contents, never addresses.
void digest(Checksum& sum, Value v) {
  for (;;) {
    if (v == kNil) return sum.add(std::uint64_t{0});
    if (is_int(v)) {
      sum.add(std::uint64_t{1});
      return sum.add(static_cast<std::uint64_t>(int_of(v)));
    }
    Obj* o = obj(v);
    switch (o->kind) {
      case Kind::string:
        sum.add(std::uint64_t{2});
        return sum.add(string_of(v));
      case Kind::closure:
        sum.add(std::uint64_t{3});
        sum.add(slots(o)[0]);
        for (std::size_t i = 1; i <= o->length; ++i) digest(sum, slots(o)[i]);
        return;
      case Kind::pair:
        sum.add(std::uint64_t{4});
        digest(sum, slots(o)[0]);
        v = slots(o)[1];
        break;
      case Kind::scratch: throw std::logic_error("interp: a scratch array was printed");
    }
  }
}

template <class Region>
std::uint64_t run(const Options& options) {
  Rng rng(options.seed);
  Checksum sum;
  Memory<Region> memory;
  Region compile_region;  // one form's tokens and syntax tree
  std::uint64_t forms = 0, calls = 0, source_bytes = 0, instructions = 0;
  for (std::uint64_t p = 0; p < options.scale; ++p) {
    const std::string source = Generator(rng).program();
    source_bytes += source.size();
    Program program;
    Interpreter<Region> interpreter(program, memory);
    Reader<Region> reader(compile_region);
    for (std::size_t at = 0;;) {
      Token* tokens = reader.tokenize(source, at);
      if (tokens == nullptr) break;
      Token* cursor = tokens;
      const Node* form = reader.parse(cursor);
      reader.release(tokens);  // dead once parsed
      const std::size_t first = program.functions.size();
      Compiler::compile_form(program, form);
      compile_region.clear();
      if (program.functions[first].name != "(print)") continue;
      const Value result = interpreter.run(program.functions[first]);
      digest(sum, result);
      memory.clear(0);
      memory.reset_stamps();
      ++forms;
    }
    for (const Function& f : program.functions) instructions += f.code.size();
    calls += interpreter.calls();
  }
  sum.add(forms);
  sum.add(calls);
  std::printf("interp: %llu programs, %llu source bytes, %llu instructions, %llu forms run, %llu calls, %llu frames and objects\n",
              static_cast<unsigned long long>(options.scale), static_cast<unsigned long long>(source_bytes),
              static_cast<unsigned long long>(instructions), static_cast<unsigned long long>(forms),
              static_cast<unsigned long long>(calls), static_cast<unsigned long long>(memory.allocations()));
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<InlineBumpRegion, MallocRegion, ReapRegion>(
      argc, argv, "interp", []<class Policy>(const Options& o) { return run<Policy>(o); });
}
