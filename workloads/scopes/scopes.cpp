// scopes — an obstack, as in 176.gcc (2002 paper Tables 1–3 and §5.2; 2026
// paper Table 1): the front end of a C-like compiler reads a generated
// program of functions with deeply nested blocks. Names are bound the way
// gcc's pushdecl/poplevel bind them: every identifier has one permanent node
// that points to its innermost declaration, a declaration remembers the one
// it shadows, and leaving a block restores them. Every identifier use is
// resolved to its declaration; the resolutions are hashed, and declarations
// never used are counted (-Wunused).
//
// What is allocated, and when it dies:
//   identifiers  built a character at a time as the growing object of the
//                permanent obstack (obstack_1grow); get_identifier keeps it
//                (finish) if it is new and cancels it if it is known, which
//                is nearly always;
//   identifier nodes and globals: permanent;
//   a block's record, its declarations and the expression trees of its
//                statements: on the scope obstack, freed by free-to-mark when
//                the block closes (the record is the mark);
//   insns        each statement is expanded into insns as soon as it is
//                parsed (as gcc 2.x did); they stay on the function obstack
//                until the function is done (rest_of_compilation), which sets
//                the peak.
//
// Modes:
//   custom  three ObstackHeaps (4 KB chunks, as GNU obstacks): the permanent
//           one grows the identifiers, the scope one is freed to the block's
//           record when the block closes, the function one is emptied after
//           each function;
//   naive   malloc/free: an identifier is grown in a malloc'd buffer
//           (realloc doubling it) and freed when known; each nesting level
//           has a MallocRegion (the per-scope list of objects), cleared when
//           its block closes, and the insns another, cleared per function;
//   reap    a strata::reap per nesting level, each the child of the level
//           around it, cleared when its block closes — free-to-mark, as every
//           deeper block's reap is empty by then; identifiers grown with
//           strata_reap_realloc in the permanent reap and freed when known;
//           and a statement's expression tree freed as soon as it has been
//           expanded, since nothing refers to it afterwards (the obstack keeps
//           it until the block closes); the insns in a reap cleared per
//           function.
// Why a reap per level rather than one reap with individual frees: closing a
// block frees exactly what was allocated since it opened, which is what a
// child reap cleared at that moment holds, at the cost of one clear instead
// of a walk over the block's objects.
// The checksum covers every resolution (declaration number and nesting
// distance, in order, through the insns), every declaration's use count, and
// the counts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <strata/layers.hpp>
#include <strata/reap.hpp>

#include "compile_program.hpp"
#include "regions.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::MallocRegion;
using strata::workload::ReapRegion;
using strata::workload::Options;
using strata::workload::Rng;

constexpr std::uint64_t kFunctionsPerScale = 40;
constexpr int kGlobals = 96;
constexpr int kMaxDepth = 12;

// ---- the allocator policies ------------------------------------------------

void* checked(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// custom: gcc's permanent obstack and its function obstack with block marks.
class ObstackPolicy {
  using Obstack = strata::layers::ObstackHeap<4096, strata::layers::MallocHeap>;

 public:
  void* permanent(std::size_t n) { return checked(permanent_.malloc(n)); }
  void* in_scope(std::size_t n) { return checked(scopes_.malloc(n)); }
  // Opens a block: its first object (its record) is the mark.
  void* open(std::size_t record) { return in_scope(record); }
  // Closes the block: everything allocated since its record goes.
  void close(void* record) { scopes_.free(record); }
  void release(void*) {}  // an obstack frees nothing alone
  // The function obstack: the insns, freed when the function is done.
  void* in_function(std::size_t n) { return checked(function_.malloc(n)); }
  void end_function() { function_.clear(); }

  // The identifier being read, grown on the permanent obstack.
  void begin() {}
  void grow(char c) {
    if (!permanent_.append(&c, 1)) throw std::bad_alloc();
  }
  std::string_view text() const { return {static_cast<const char*>(permanent_.base()), permanent_.objectSize()}; }
  void cancel() { permanent_.free(permanent_.base()); }
  const char* finish() {
    if (!permanent_.append("", 1)) throw std::bad_alloc();
    return static_cast<const char*>(checked(permanent_.finish()));
  }

 private:
  Obstack permanent_, scopes_, function_;
};

// The regions of the naive and reap policies: a permanent one, one for the
// function being compiled, and one per block nesting level (levels_[d]: blocks
// nested d deep); closing a block clears its level.
template <class Region>
class LevelRegions {
 public:
  void* permanent(std::size_t n) { return checked(permanent_.allocate(n)); }
  void* in_scope(std::size_t n) { return checked(level().allocate(n)); }
  void* open(std::size_t record) {
    if (++depth_ > kMaxDepth) throw std::length_error("scopes: blocks nested too deeply");
    return in_scope(record);
  }
  void close(void*) {
    level().clear();
    --depth_;
  }
  // A dead object: only a reap level gives it back before its block closes.
  void release(void* p) { level().release(p); }
  void* in_function(std::size_t n) { return checked(function_.allocate(n)); }
  void end_function() { function_.clear(); }

 protected:
  Region& level() { return *levels_[static_cast<std::size_t>(depth_)]; }

  Region permanent_, function_;
  std::vector<std::unique_ptr<Region>> levels_;
  int depth_ = 0;
};

// naive: one malloc per object; a MallocRegion per nesting level lists the
// block's objects so that closing it frees them one by one.
class NaivePolicy : public LevelRegions<MallocRegion> {
 public:
  NaivePolicy() {
    for (int d = 0; d <= kMaxDepth; ++d) levels_.push_back(std::make_unique<MallocRegion>());
  }
  ~NaivePolicy() {
    for (char* text : names_) std::free(text);
    if (buffer_ != nullptr) std::free(buffer_);
  }
  NaivePolicy(const NaivePolicy&) = delete;
  NaivePolicy& operator=(const NaivePolicy&) = delete;

  void begin() {
    buffer_ = static_cast<char*>(checked(std::malloc(kFirstCapacity)));
    capacity_ = kFirstCapacity;
    size_ = 0;
  }
  void grow(char c) {
    if (size_ + 1 == capacity_) {  // room for the final '\0' too
      buffer_ = static_cast<char*>(checked(std::realloc(buffer_, capacity_ * 2)));
      capacity_ *= 2;
    }
    buffer_[size_++] = c;
  }
  std::string_view text() const { return {buffer_, size_}; }
  void cancel() {
    std::free(buffer_);
    buffer_ = nullptr;
  }
  const char* finish() {
    buffer_[size_] = '\0';
    names_.push_back(buffer_);
    return std::exchange(buffer_, nullptr);
  }

 private:
  static constexpr std::size_t kFirstCapacity = 8;
  std::vector<char*> names_;  // identifiers kept: freed at the end
  char* buffer_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

// reap: nested reaps, one per level; dead objects freed at once.
class ReapPolicy : public LevelRegions<ReapRegion> {
 public:
  ReapPolicy() {
    levels_.reserve(kMaxDepth + 1);
    levels_.push_back(std::make_unique<ReapRegion>());
    for (int d = 1; d <= kMaxDepth; ++d) levels_.push_back(std::make_unique<ReapRegion>(*levels_.back()));
  }
  ~ReapPolicy() {
    while (!levels_.empty()) levels_.pop_back();  // children before parents
  }
  ReapPolicy(const ReapPolicy&) = delete;
  ReapPolicy& operator=(const ReapPolicy&) = delete;

  void begin() {
    buffer_ = static_cast<char*>(checked(permanent_.allocate(kFirstCapacity)));
    capacity_ = kFirstCapacity;
    size_ = 0;
  }
  void grow(char c) {
    if (size_ + 1 == capacity_) {
      buffer_ = static_cast<char*>(checked(permanent_.reap().realloc(buffer_, capacity_ * 2)));
      capacity_ *= 2;
    }
    buffer_[size_++] = c;
  }
  std::string_view text() const { return {buffer_, size_}; }
  void cancel() { permanent_.release(buffer_); }
  const char* finish() {
    buffer_[size_] = '\0';
    return buffer_;
  }

 private:
  static constexpr std::size_t kFirstCapacity = 8;
  char* buffer_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

// ---- the program's data ----------------------------------------------------

struct Decl;

// An identifier node (gcc's IDENTIFIER_NODE): permanent, one per spelling.
struct Name {
  Name* next;  // hash chain
  const char* text;
  std::uint32_t length, hash;
  Decl* binding;  // the innermost visible declaration, if any
};

struct Decl {
  const Name* name;
  Decl* shadowed;  // what name->binding was before this declaration
  Decl* next;      // the block's declarations, newest first
  std::uint32_t id, depth, uses, line;
};

// A block (gcc's binding_level); allocated first, so it is the block's mark.
struct Block {
  Decl* decls;
  std::uint32_t depth, count;
};

// Expression trees: small nodes of three shapes, as gcc's tree codes.
struct Node {
  enum Kind : std::uint8_t { ref, number, binary, call } kind;
  char op;
  std::uint16_t count;  // call arguments
  std::uint32_t line;
};
struct Ref : Node {
  Decl* decl;
};
struct Number : Node {
  std::int64_t value;
};
struct Binary : Node {
  Node* left;
  Node* right;
};
struct Call : Node {
  Decl* callee;
  // The arguments follow the node (it is allocated to fit them).
  Node** args() { return reinterpret_cast<Node**>(this + 1); }
  Node* const* args() const { return reinterpret_cast<Node* const*>(this + 1); }
};
static_assert(sizeof(Call) % alignof(Node*) == 0);

// An insn (gcc's RTL): on the function obstack until the function is compiled.
struct Insn {
  Insn* next;
  std::uint32_t code;  // 'r' read a variable, 'n' a number, an operator, 'a' argument, 'c' call, 's' statement
  std::uint32_t dest;  // the pseudo register it sets
  std::uint32_t a, b;  // pseudos, or a declaration's number and distance, a number's bits
};

// ---- the generated program -------------------------------------------------

constexpr const char* kWords[] = {"count", "index", "tmp", "buf", "len", "ptr", "node", "next", "prev", "value",
                                  "key", "size", "offset", "result", "flags", "mode", "state", "depth", "width",
                                  "height", "total", "limit", "base", "item", "entry", "level", "score", "delta"};
constexpr std::size_t kWordCount = std::size(kWords);

// Writes one function at a time from the seed, tracking what is visible
// where, so every use has a declaration (often a shadowing one).
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  std::string globals() {
    std::string out;
    for (int i = 0; i < kGlobals; ++i) {
      globals_.push_back("g_" + std::string(kWords[rng_.below(kWordCount)]) + std::to_string(i));
      out += "int " + globals_.back() + ";\n";
    }
    return out;
  }

  void function(std::string& out) {
    out.clear();
    out_ = &out;
    const std::string name = "fn_" + std::string(kWords[rng_.below(kWordCount)]) + std::to_string(functions_.size());
    const std::uint64_t params = rng_.below(5);
    functions_.push_back({name, params});
    visible_.assign(1, {});
    std::string head = "int " + name + "(";
    for (std::uint64_t i = 0; i < params; ++i) {
      std::string p = std::string(kWords[rng_.below(kWordCount)]) + "_p" + std::to_string(i);
      head += (i ? ", int " : "int ") + p;
      visible_[0].push_back(p);
    }
    out += head + ") {\n";
    // Most functions are small; a few are huge (they set the peak).
    std::uint64_t statements = 20 + rng_.below(150);
    if (rng_.chance(0.02)) statements *= 5 + rng_.below(40);
    else if (rng_.chance(0.005)) statements *= 100 + rng_.below(300);
    budget_ = static_cast<std::int64_t>(statements);
    while (budget_ > 0) statement(1);
    out += "}\n";
  }

 private:
  struct Function {
    std::string name;
    std::uint64_t params;
  };

  void indent(int depth) { out_->append(static_cast<std::size_t>(depth) * 2, ' '); }

  const std::string& use() {
    if (!rng_.chance(0.1)) {
      // Inner blocks' names are used more often: pick a level, then a name.
      for (int tries = 0; tries < 3; ++tries) {
        const std::size_t level = visible_.size() - 1 - rng_.below(std::min<std::size_t>(visible_.size(), 3));
        if (!visible_[level].empty()) return visible_[level][rng_.below(visible_[level].size())];
      }
    }
    return globals_[rng_.below(globals_.size())];
  }

  void expression(int depth) {
    const std::uint64_t r = rng_.below(100);
    if (depth <= 0 || r < 35) {
      if (r < 8 && depth > 0) {
        const Function& f = functions_[rng_.below(functions_.size())];
        *out_ += f.name + "(";
        for (std::uint64_t i = 0; i < f.params; ++i) {
          if (i) *out_ += ", ";
          expression(depth - 1);
        }
        *out_ += ")";
      } else if (r % 4 == 0) {
        *out_ += std::to_string(rng_.below(1000));
      } else {
        *out_ += use();
      }
      return;
    }
    static constexpr char kOps[] = {'+', '-', '*', '&', '|', '^', '<', '>'};
    *out_ += '(';
    expression(depth - 1);
    *out_ += ' ';
    *out_ += kOps[rng_.below(std::size(kOps))];
    *out_ += ' ';
    expression(depth - 1);
    *out_ += ')';
  }

  void block(int depth) {
    indent(depth - 1);
    *out_ += "{\n";
    visible_.emplace_back();
    for (std::uint64_t n = 1 + rng_.below(8); n > 0 && budget_ > 0; --n) statement(depth);
    visible_.pop_back();
    indent(depth - 1);
    *out_ += "}\n";
  }

  void statement(int depth) {
    --budget_;
    const std::uint64_t r = rng_.below(100);
    const bool can_nest = depth < kMaxDepth - 1;
    indent(depth);
    if (r < 32) {  // a declaration: often shadows a name of an outer block
      std::string name = std::string(kWords[rng_.below(12)]) + std::to_string(rng_.below(3));
      for (const std::string& v : visible_.back())
        if (v == name) name.append(1, '_').append(std::to_string(budget_));
      *out_ += "int " + name;
      if (rng_.chance(0.7)) {
        *out_ += " = ";
        expression(static_cast<int>(1 + rng_.below(3)));
      }
      *out_ += ";\n";
      visible_.back().push_back(name);
    } else if (r < 70 || !can_nest) {
      *out_ += use() + " = ";
      expression(static_cast<int>(1 + rng_.below(3)));
      *out_ += ";\n";
    } else if (r < 82) {
      *out_ += "if (";
      expression(2);
      *out_ += ")\n";
      block(depth + 1);
      if (rng_.chance(0.3)) {
        indent(depth);
        *out_ += "else\n";
        block(depth + 1);
      }
    } else if (r < 90) {
      *out_ += "while (";
      expression(2);
      *out_ += ")\n";
      block(depth + 1);
    } else {
      *out_ += "\n";
      block(depth + 1);
    }
  }

  Rng rng_;
  std::vector<std::string> globals_;
  std::vector<Function> functions_;
  std::vector<std::vector<std::string>> visible_;
  std::string* out_ = nullptr;
  std::int64_t budget_ = 0;
};

// ---- the front end ---------------------------------------------------------

[[noreturn]] void error(std::uint32_t line, const std::string& what) {
  throw std::runtime_error("scopes: line " + std::to_string(line) + ": " + what);
}

template <class Policy>
class FrontEnd {
 public:
  explicit FrontEnd(Checksum& sum) : sum_(sum), names_(1 << 14, nullptr) {
    kw_int_ = identifier("int");
    kw_if_ = identifier("if");
    kw_else_ = identifier("else");
    kw_while_ = identifier("while");
  }

  void globals(std::string_view text) {
    start(text);
    while (!at_end()) {
      expect_name(kw_int_);
      Name* name = read_name();
      expect(';');
      declare_global(name);
    }
  }

  void function(std::string_view text) {
    start(text);
    expect_name(kw_int_);
    Name* name = read_name();
    declare_global(name);
    next_id_ = 0;
    // The parameters and the body share the function's block (as in C).
    auto* block = open();
    expect('(');
    while (!peek(')')) {
      if (block->count != 0) expect(',');
      expect_name(kw_int_);
      declare(block, read_name());
    }
    expect(')');
    expect('{');
    body(block);
    close(block);
    if (!at_end()) error(line_, "text after the function");
    finish_function();
    sum_.add(next_id_);
    ++functions_;
  }

  void totals() {
    sum_.add(functions_);
    sum_.add(identifiers_);
    sum_.add(distinct_);
    sum_.add(declarations_);
    sum_.add(shadowing_);
    sum_.add(unused_);
    sum_.add(uses_);
    sum_.add(nodes_);
    sum_.add(insns_);
    std::printf("scopes: %llu functions, %llu identifiers read (%llu distinct), %llu declarations (%llu shadowing, "
                "%llu unused), %llu uses, %llu expression nodes, %llu insns\n",
                static_cast<unsigned long long>(functions_), static_cast<unsigned long long>(identifiers_),
                static_cast<unsigned long long>(distinct_), static_cast<unsigned long long>(declarations_),
                static_cast<unsigned long long>(shadowing_), static_cast<unsigned long long>(unused_),
                static_cast<unsigned long long>(uses_), static_cast<unsigned long long>(nodes_), static_cast<unsigned long long>(insns_));
  }

 private:
  // ---- identifiers: grown, then kept or cancelled (get_identifier) ----

  static std::uint32_t hash_text(std::string_view s) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : s) h = (h ^ c) * 16777619u;
    return h;
  }

  // The growing identifier's node: found, or made from it.
  Name* intern_grown() {
    const std::string_view text = policy_.text();
    const std::uint32_t h = hash_text(text);
    Name*& bucket = names_[h & (names_.size() - 1)];
    for (Name* n = bucket; n != nullptr; n = n->next)
      if (n->hash == h && n->length == text.size() && std::memcmp(n->text, text.data(), text.size()) == 0) {
        policy_.cancel();
        return n;
      }
    const auto length = static_cast<std::uint32_t>(text.size());
    const char* kept = policy_.finish();
    auto* n = new (policy_.permanent(sizeof(Name))) Name{bucket, kept, length, h, nullptr};
    bucket = n;
    ++distinct_;
    return n;
  }

  Name* identifier(const char* text) {
    policy_.begin();
    for (const char* c = text; *c; ++c) policy_.grow(*c);
    return intern_grown();
  }

  // ---- characters ----

  void start(std::string_view text) {
    text_ = text;
    at_ = 0;
    line_ = 1;
    skip_space();
  }

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) line_ += text_[at_++] == '\n';
  }

  bool at_end() const { return at_ >= text_.size(); }
  bool peek(char c) const { return at_ < text_.size() && text_[at_] == c; }

  void expect(char c) {
    if (!peek(c)) error(line_, std::string("expected '") + c + "'");
    ++at_;
    skip_space();
  }

  static bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

  // Reads an identifier a character at a time into the growing object.
  Name* read_name() {
    if (at_end() || !name_char(text_[at_]) || (text_[at_] >= '0' && text_[at_] <= '9'))
      error(line_, "identifier expected");
    policy_.begin();
    while (at_ < text_.size() && name_char(text_[at_])) policy_.grow(text_[at_++]);
    ++identifiers_;
    Name* name = intern_grown();
    skip_space();
    return name;
  }

  void expect_name(const Name* keyword) {
    if (read_name() != keyword) error(line_, std::string("expected '") + keyword->text + "'");
  }

  bool at_name() const { return !at_end() && name_char(text_[at_]) && !(text_[at_] >= '0' && text_[at_] <= '9'); }

  // ---- blocks and declarations ----

  Block* open() {
    auto* block = new (policy_.open(sizeof(Block))) Block{nullptr, ++depth_, 0};
    return block;
  }

  // pops the block's bindings, counts the unused, frees the block's objects.
  void close(Block* block) {
    for (Decl* d = block->decls; d != nullptr; d = d->next) {
      const_cast<Name*>(d->name)->binding = d->shadowed;
      if (d->uses == 0) ++unused_;
      sum_.add(static_cast<std::uint64_t>(d->id) << 32 | d->uses);
    }
    --depth_;
    policy_.close(block);
  }

  Decl* declare(Block* block, Name* name) {
    if (name->binding != nullptr && name->binding->depth == block->depth)
      error(line_, std::string("redeclared: ") + name->text);
    auto* d = new (policy_.in_scope(sizeof(Decl))) Decl{name, name->binding, block->decls, next_id_++, block->depth, 0, line_};
    if (d->shadowed != nullptr && d->shadowed->depth != 0) ++shadowing_;
    name->binding = d;
    block->decls = d;
    ++block->count;
    ++declarations_;
    return d;
  }

  void declare_global(Name* name) {
    if (name->binding != nullptr) error(line_, std::string("redeclared: ") + name->text);
    name->binding = new (policy_.permanent(sizeof(Decl))) Decl{name, nullptr, nullptr, global_ids_++, 0, 0, line_};
  }

  Decl* resolve(Name* name) {
    Decl* d = name->binding;
    if (d == nullptr) error(line_, std::string("undeclared: ") + name->text);
    ++d->uses;
    ++uses_;
    return d;
  }

  // ---- statements ----

  // The statements of a block up to its '}'.
  void body(Block* block) {
    while (!peek('}')) {
      if (at_end()) error(line_, "unexpected end of function");
      statement(block);
    }
    expect('}');
  }

  void statement(Block* block) {
    if (peek('{')) {
      expect('{');
      Block* inner = open();
      body(inner);
      close(inner);
      return;
    }
    Name* word = read_name();
    if (word == kw_int_) {
      Name* name = read_name();
      // The initializer is read before the name is bound: it sees the outer one.
      Node* init = nullptr;
      if (peek('=')) {
        expect('=');
        init = expression();
      }
      expect(';');
      // The initializer's tree is expanded and freed before the declaration
      // is made: it is then still the reap's newest object (see discard).
      const std::uint32_t value = expand_and_discard(init);
      const Decl* d = declare(block, name);
      emit('s', value, d->id, 0);
    } else if (word == kw_if_ || word == kw_while_) {
      expect('(');
      Node* cond = expression();
      expect(')');
      finish_statement(cond, word == kw_if_ ? 1 : 2);
      nested_block();
      if (word == kw_if_ && at_name() && text_.substr(at_, 4) == "else") {
        if (read_name() != kw_else_) error(line_, "expected 'else'");
        nested_block();
      }
    } else {
      Decl* target = resolve(word);
      expect('=');
      Node* value = expression();
      expect(';');
      finish_statement(value, 3 + (static_cast<std::uint64_t>(target->id) << 8) + (depth_ - target->depth));
    }
  }

  void nested_block() {
    expect('{');
    Block* inner = open();
    body(inner);
    close(inner);
  }

  // The statement's tree is resolved: expanded into insns (gcc expands each
  // statement as it is parsed); then nothing refers to the tree.
  void finish_statement(Node* tree, std::uint64_t what) {
    const std::uint32_t value = expand_and_discard(tree);
    emit('s', value, static_cast<std::uint32_t>(what), static_cast<std::uint32_t>(what >> 32));
  }

  // The tree's insns; then the tree is dead. Returns the pseudo holding its value (0: no tree).
  std::uint32_t expand_and_discard(Node* tree) {
    if (tree == nullptr) return 0;
    const std::uint32_t value = expand(tree);
    discard(tree);
    return value;
  }

  std::uint32_t emit(std::uint32_t code, std::uint32_t a, std::uint32_t b, std::uint32_t c = 0) {
    auto* insn = new (policy_.in_function(sizeof(Insn))) Insn{nullptr, code, next_pseudo_++, a, b ^ c};
    *insn_tail_ = insn;
    insn_tail_ = &insn->next;
    ++insns_;
    return insn->dest;
  }

  // Emits the insns computing n; returns the pseudo register holding it.
  std::uint32_t expand(const Node* n) {
    switch (n->kind) {
      case Node::ref: {
        const Decl* d = static_cast<const Ref*>(n)->decl;
        return emit('r', d->id, depth_ - d->depth);
      }
      case Node::number: {
        const auto v = static_cast<std::uint64_t>(static_cast<const Number*>(n)->value);
        return emit('n', static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32));
      }
      case Node::binary: {
        const auto* b = static_cast<const Binary*>(n);
        const std::uint32_t left = expand(b->left);
        return emit(static_cast<unsigned char>(b->op), left, expand(b->right));
      }
      case Node::call: {
        const auto* c = static_cast<const Call*>(n);
        std::uint32_t args[8];
        for (std::uint16_t i = 0; i < c->count; ++i) args[i] = expand(c->args()[i]);
        for (std::uint16_t i = 0; i < c->count; ++i) emit('a', args[i], i);
        return emit('c', c->callee->id, c->count);
      }
    }
    return 0;
  }

  // rest_of_compilation: a pass over the function's insns (how often each
  // pseudo is read, and a digest of the code), then they are all freed.
  void finish_function() {
    reads_.assign(next_pseudo_, 0);
    std::uint64_t h = 0x243F6A8885A308D3ULL;
    for (const Insn* i = insns_head_; i != nullptr; i = i->next) {
      if (i->code != 'r' && i->code != 'n' && i->code != 'c') {
        if (i->a < next_pseudo_) ++reads_[i->a];
        if (i->code != 's' && i->code != 'a' && i->b < next_pseudo_) ++reads_[i->b];
      }
      h = (h ^ (static_cast<std::uint64_t>(i->code) << 56 ^ static_cast<std::uint64_t>(i->a) << 24 ^ i->b)) *
          0x100000001b3ULL;
    }
    std::uint64_t dead = 0;
    for (const std::uint32_t r : reads_) dead += r == 0;
    sum_.add(h);
    sum_.add(dead);
    policy_.end_function();
    insns_head_ = nullptr;
    insn_tail_ = &insns_head_;
    next_pseudo_ = 0;
  }

  // In reap mode the tree's nodes are freed now; the obstack and the naive
  // lists keep them until the block closes.
  // Newest first, the reverse of the order the parser allocated them in
  // (children before their parent, left before right): each node freed is
  // then the reap's last object, which it takes back by un-bumping, as an
  // obstack frees its top.
  void discard(Node* n) {
    if (n->kind == Node::binary) {
      auto* b = static_cast<Binary*>(n);
      Node* const left = b->left;
      Node* const right = b->right;
      policy_.release(n);
      discard(right);
      discard(left);
    } else if (n->kind == Node::call) {
      auto* c = static_cast<Call*>(n);
      Node* args[8];
      const std::uint16_t count = c->count;
      std::copy_n(c->args(), count, args);
      policy_.release(n);
      for (std::uint16_t i = count; i > 0; --i) discard(args[i - 1]);
    } else {
      policy_.release(n);
    }
  }

  // ---- expressions ----

  template <class T>
  T* node(Node::Kind kind, std::size_t extra = 0) {
    auto* n = new (policy_.in_scope(sizeof(T) + extra)) T;
    n->kind = kind;
    n->op = 0;
    n->count = 0;
    n->line = line_;
    ++nodes_;
    return n;
  }

  Node* expression() {
    if (peek('(')) {
      expect('(');
      Node* left = expression();
      if (at_end()) error(line_, "unexpected end in an expression");
      const char op = text_[at_++];
      skip_space();
      Node* right = expression();
      expect(')');
      auto* b = node<Binary>(Node::binary);
      b->op = op;
      b->left = left;
      b->right = right;
      return b;
    }
    if (!at_end() && text_[at_] >= '0' && text_[at_] <= '9') {
      std::int64_t v = 0;
      while (!at_end() && text_[at_] >= '0' && text_[at_] <= '9') v = v * 10 + (text_[at_++] - '0');
      skip_space();
      auto* n = node<Number>(Node::number);
      n->value = v;
      return n;
    }
    Name* name = read_name();
    Decl* d = resolve(name);
    if (!peek('(')) {
      auto* r = node<Ref>(Node::ref);
      r->decl = d;
      return r;
    }
    // A call: the arguments first, then the node sized to hold them.
    expect('(');
    Node* args[8];
    std::uint16_t count = 0;
    while (!peek(')')) {
      if (count != 0) expect(',');
      if (count == 8) error(line_, "more than 8 arguments");
      args[count++] = expression();
    }
    expect(')');
    auto* c = node<Call>(Node::call, sizeof(Node*) * count);
    c->callee = d;
    c->count = count;
    for (std::uint16_t i = 0; i < count; ++i) c->args()[i] = args[i];
    return c;
  }

  Checksum& sum_;
  Policy policy_;
  std::vector<Name*> names_;  // the identifier table's buckets
  const Name* kw_int_;
  const Name* kw_if_;
  const Name* kw_else_;
  const Name* kw_while_;
  std::string_view text_;
  std::size_t at_ = 0;
  std::uint32_t line_ = 1, depth_ = 0, next_id_ = 0, global_ids_ = 0, next_pseudo_ = 0;
  Insn* insns_head_ = nullptr;
  Insn** insn_tail_ = &insns_head_;
  std::vector<std::uint32_t> reads_;  // per pseudo (reused from function to function)
  std::uint64_t functions_ = 0, identifiers_ = 0, distinct_ = 0, declarations_ = 0, shadowing_ = 0, unused_ = 0,
                uses_ = 0, nodes_ = 0, insns_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<ObstackPolicy, NaivePolicy, ReapPolicy>(
      argc, argv, "scopes", []<class Policy>(const Options& o) {
        return strata::workload::compile_program<FrontEnd<Policy>, Generator>(o, kFunctionsPerScale);
      });
}
