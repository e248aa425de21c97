// compiler — regions, as in lcc (2002 paper Tables 1–3, §7's drag and Figure
// 5; 2026 paper Table 1) and Clang's BumpPtrAllocator: a compiler for a small
// C-like language compiles a generated program one function at a time. For
// each function it tokenizes the source, parses it into an AST while
// resolving names through nested scope tables, checks types (inserting the
// implicit conversions), folds constants (and dead branches), lowers each
// expression through a value-numbered DAG into three-address code, cleans the
// code up with a peephole pass, gives the values registers (linear scan over
// six registers, spilling the rest) and "assembles" it into text.
//
// Lifetimes follow lcc's three arenas:
//   PERM  interned identifiers, types, globals and function symbols: the run;
//   FUNC  tokens, scope tables, local symbols, the AST and the code list: one
//         function, cleared when the function is emitted;
//   STMT  the DAG and its value table: one expression, cleared after it.
//
// Modes:
//   custom  lcc's arenas: ZoneHeap (bump allocation in 16 KB chunks) over a
//           FreelistHeap that keeps the chunks of a cleared arena for its
//           next use, as lcc's deallocate() keeps them on its freeblocks list;
//   naive   MallocRegion for each arena: every object its own malloc block,
//           freed one by one when the arena is cleared (2026 Table 4);
//   reap    a strata::reap per arena, cleared as the arena is, and objects
//           freed as soon as the compiler knows they are dead: a token block
//           once parsed, a scope's table when the scope closes, the nodes that
//           constant folding replaces (and the subtrees of dead branches), the
//           instructions the peephole pass deletes.
// The checksum covers the assembled text of every function, in order, and
// the counts of tokens, nodes, folds and instructions.
#include <algorithm>
#include <bit>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <strata/layers.hpp>
#include <strata/reap.hpp>

#include "compile_program.hpp"
#include "regions.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

constexpr std::uint64_t kFunctionsPerScale = 40;
constexpr int kGlobals = 48;

// ---- the arenas ------------------------------------------------------------

constexpr std::size_t kChunkBytes = 16 * 1024;
// No object is bigger than this, so every chunk the free list hands back fits
// (ZoneHeap gives an oversized object a chunk of its own).
constexpr std::size_t kMaxObject = kChunkBytes - 2 * strata::layers::kAlignment;

// custom: lcc's arenas, chunks recycled through a free list; naive: every
// object its own malloc block; reap: a reap per arena.
using ZoneArena = strata::workload::LayerRegion<
    strata::layers::ZoneHeap<kChunkBytes, strata::layers::FreelistHeap<strata::layers::MallocHeap>>>;
using strata::workload::MallocRegion;
using strata::workload::ReapRegion;

template <class T, class Arena>
T* make(Arena& arena, std::size_t extra = 0) {
  if (sizeof(T) + extra > kMaxObject) throw std::length_error("compiler: object too large for an arena chunk");
  void* p = arena.allocate(sizeof(T) + extra);
  if (p == nullptr) throw std::bad_alloc();
  return new (p) T{};
}

// ---- the language ----------------------------------------------------------

enum class Tok : std::uint8_t {
  end, ident, number, kw_int, kw_long, kw_char, kw_if, kw_else, kw_while, kw_for, kw_return, kw_break,
  kw_continue, lparen, rparen, lbrace, rbrace, lbracket, rbracket, comma, semicolon, assign, plus, minus,
  star, slash, percent, amp, pipe, caret, tilde, bang, shl, shr, lt, le, gt, ge, eq, ne, andand, oror
};

// An interned identifier (PERM): the same spelling is the same Name.
struct Name {
  Name* next;  // hash chain
  const char* text;
  std::uint32_t length;
  std::uint32_t hash;  // of the spelling: lookups never depend on addresses
  Tok keyword;         // Tok::ident unless a keyword
};

struct Type {
  enum Kind : std::uint8_t { tchar, tint, tlong, tarray, tfunction } kind;
  std::uint8_t rank;  // char 0, int 1, long 2
  std::uint32_t count;  // array length, parameter count
  const Type* base;     // array element, function result
  const Type** params;
};

struct Symbol {
  enum Kind : std::uint8_t { global, function, param, local } kind;
  const Name* name;
  const Type* type;
  Symbol* next;        // hash chain in its scope table
  Symbol* next_local;  // the function's params and locals, in order
  std::uint32_t level, slot, line, uses, version;
  std::int32_t offset;  // frame offset of a local
};

enum class Op : std::uint8_t { add, sub, mul, div, mod, band, bor, bxor, shl, shr, lt, le, gt, ge, eq, ne, land, lor,
                               neg, bnot, lnot };
constexpr const char* kOpNames[] = {"add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl", "shr", "lt",
                                    "le",  "gt",  "ge",  "eq",  "ne",  "land", "lor", "neg", "not", "lnot"};

struct Expr {
  enum Kind : std::uint8_t { constant, var, index, call, unary, binary, assign, cast } kind;
  Op op;
  const Type* type;
  Expr* a;     // operand, array index, assigned value...
  Expr* b;     // right operand, first call argument
  Expr* next;  // the next call argument
  Symbol* sym;
  std::int64_t value;
  std::uint32_t line;
};

struct Stmt {
  enum Kind : std::uint8_t { expr, decl, block, if_, while_, for_, return_, break_, continue_ } kind;
  std::uint32_t line;
  Stmt* next;
  Expr* e;     // expression, condition, initializer
  Expr* step;  // for's third clause
  Expr* init;  // for's first clause
  Stmt* body;  // block's statements, then-branch, loop body
  Stmt* other;  // else-branch
  Symbol* sym;  // decl
};

// A scope's hash table (lcc's struct table), made when the scope declares its first name.
struct Scope {
  Scope* parent;
  std::uint32_t level, mask;
  Symbol** buckets;  // mask + 1 of them, right after the Scope
};

// ---- the generated program -------------------------------------------------

// Writes the program's source, one function at a time, from the seed. It
// knows the globals and the functions written so far, and which locals are
// visible where, so every program is well formed.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  struct Var {
    std::string name;
    int type;  // 0 char, 1 int, 2 long
  };
  struct Function {
    std::string name;
    int result;
    std::vector<int> params;
  };

  std::string globals() {
    std::string out;
    for (int i = 0; i < kGlobals; ++i) {
      const int type = static_cast<int>(rng_.below(3));
      const bool array = i % 4 == 3;
      const std::string name = (array ? "gt" : "g") + std::to_string(i);
      out += kTypeNames[type];
      out += ' ';
      out += name;
      if (array) {
        const std::uint64_t length = 8u << rng_.below(4);
        out += '[' + std::to_string(length) + ']';
        arrays_.push_back({name, type, length});
      } else {
        globals_.push_back({name, type});
      }
      out += ";\n";
    }
    return out;
  }

  // The next function's text into out.
  void function(std::string& out) {
    out.clear();
    Function f{"f" + std::to_string(functions_.size()), static_cast<int>(rng_.below(3)), {}};
    const std::uint64_t params = rng_.below(5);
    for (std::uint64_t i = 0; i < params; ++i) f.params.push_back(static_cast<int>(rng_.below(3)));
    functions_.push_back(f);  // declared before its body: it may call itself
    out_ = &out;
    line("/* function " + f.name + " */", 0);
    std::string head = std::string(kTypeNames[f.result]) + " " + f.name + "(";
    scopes_.assign(1, {});
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      const std::string name = "p" + std::to_string(i);
      head += (i ? ", " : "") + std::string(kTypeNames[f.params[i]]) + " " + name;
      scopes_[0].push_back({name, f.params[i]});
    }
    line(head + ") {", 0);
    // Most functions are small; a few are very large (the ones that set the peak).
    std::uint64_t statements = 8 + rng_.below(70);
    if (rng_.chance(0.03)) statements *= 4 + rng_.below(40);
    budget_ = static_cast<std::int64_t>(statements);
    loop_depth_ = 0;
    counter_ = 0;
    scopes_.emplace_back();
    while (budget_ > 0) statement(1);
    line("return " + expression(3) + ";", 1);
    line("}", 0);
  }

 private:
  static constexpr const char* kTypeNames[] = {"char", "int", "long"};
  static constexpr const char* kBinary[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<",
                                            "<=", ">", ">=", "==", "!=", "&&", "||", "+", "-", "*", "+"};
  struct Array {
    std::string name;
    int type;
    std::uint64_t length;
  };

  void line(const std::string& text, int depth) {
    out_->append(static_cast<std::size_t>(depth) * 2, ' ');
    *out_ += text;
    if (rng_.chance(0.02)) *out_ += "  // note " + std::to_string(rng_.below(1000));
    *out_ += '\n';
  }

  std::string constant() {
    const std::uint64_t r = rng_.below(10);
    if (r < 5) return std::to_string(rng_.below(10));
    if (r < 9) return std::to_string(rng_.below(1000));
    return std::to_string(rng_.next() >> 24);  // a long
  }

  const Var* visible() {
    // Locals and params first (the inner scopes), sometimes a global.
    if (!rng_.chance(0.15)) {
      std::size_t total = 0;
      for (const auto& scope : scopes_) total += scope.size();
      if (total != 0) {
        std::size_t pick = rng_.below(total);
        // Scan innermost-out so that a shadowed name resolves to the inner one.
        for (std::size_t s = scopes_.size(); s-- > 0;) {
          if (pick < scopes_[s].size()) return &scopes_[s][pick];
          pick -= scopes_[s].size();
        }
      }
    }
    return &globals_[rng_.below(globals_.size())];
  }

  std::string expression(int depth) {
    const std::uint64_t r = rng_.below(100);
    if (depth <= 0 || r < 30) {
      const std::uint64_t leaf = rng_.below(100);
      if (leaf < 38) return constant();
      if (leaf < 90 || depth <= 0) return visible()->name;
      if (leaf < 95) {
        const Array& a = arrays_[rng_.below(arrays_.size())];
        return a.name + "[" + expression(depth - 1) + " & " + std::to_string(a.length - 1) + "]";
      }
      return call(depth - 1);
    }
    if (r < 40) {
      static constexpr const char* kUnary[] = {"-", "~", "!"};
      return kUnary[rng_.below(3)] + std::string("(") + expression(depth - 1) + ")";
    }
    const char* op = kBinary[rng_.below(std::size(kBinary))];
    std::string right = expression(depth - 1);
    if (op[0] == '/' || op[0] == '%') right = "(" + right + " | 1)";  // never divides by a folded zero
    if (op[1] == op[0] && (op[0] == '<' || op[0] == '>')) right = "(" + right + " & 15)";
    return "(" + expression(depth - 1) + " " + op + " " + right + ")";
  }

  std::string call(int depth) {
    const Function& f = functions_[rng_.below(functions_.size())];
    std::string text = f.name + "(";
    for (std::size_t i = 0; i < f.params.size(); ++i) text += (i ? ", " : "") + expression(depth);
    return text + ")";
  }

  std::string target() {
    if (rng_.chance(0.1)) {
      const Array& a = arrays_[rng_.below(arrays_.size())];
      return a.name + "[" + expression(1) + " & " + std::to_string(a.length - 1) + "]";
    }
    return visible()->name;
  }

  void block(int depth) {
    line("{", depth - 1);
    scopes_.emplace_back();
    for (std::uint64_t n = 1 + rng_.below(6); n > 0 && budget_ > 0; --n) statement(depth);
    scopes_.pop_back();
    line("}", depth - 1);
  }

  void statement(int depth) {
    --budget_;
    const std::uint64_t r = rng_.below(100);
    const bool can_nest = depth < 7;
    if (r < 14) {  // a declaration, sometimes shadowing an outer one
      const int type = static_cast<int>(rng_.below(3));
      std::string name = "v" + std::to_string(rng_.below(12 + 2 * static_cast<std::uint64_t>(depth)));
      for (const Var& v : scopes_.back())
        if (v.name == name) name = "w" + std::to_string(counter_++);
      std::string text = std::string(kTypeNames[type]) + " " + name;
      if (rng_.chance(0.8)) text += " = " + expression(3);
      line(text + ";", depth);
      scopes_.back().push_back({name, type});
    } else if (r < 56 || !can_nest) {
      line(target() + " = " + expression(static_cast<int>(2 + rng_.below(3))) + ";", depth);
    } else if (r < 62) {
      line(call(2) + ";", depth);
    } else if (r < 76) {
      // Now and then a condition that folds away, as configuration tests do.
      const std::string cond = rng_.chance(0.1) ? constant() + " > " + constant() : expression(3);
      line("if (" + cond + ")", depth);
      block(depth + 1);
      if (rng_.chance(0.4)) {
        line("else", depth);
        block(depth + 1);
      }
    } else if (r < 84) {
      line("while (" + expression(2) + ")", depth);
      ++loop_depth_;
      block(depth + 1);
      --loop_depth_;
    } else if (r < 90) {
      const Var* v = visible();
      line("for (" + v->name + " = 0; " + v->name + " < " + expression(2) + "; " + v->name + " = " + v->name +
               " + 1)",
           depth);
      ++loop_depth_;
      block(depth + 1);
      --loop_depth_;
    } else if (r < 94) {
      block(depth + 1);
    } else if (r < 97 && loop_depth_ > 0) {
      line(rng_.chance(0.5) ? "break;" : "continue;", depth);
    } else {
      line("return " + expression(3) + ";", depth);
    }
  }

  Rng rng_;
  std::vector<Var> globals_;
  std::vector<Array> arrays_;
  std::vector<Function> functions_;
  std::vector<std::vector<Var>> scopes_;
  std::string* out_ = nullptr;
  std::int64_t budget_ = 0;
  int loop_depth_ = 0;
  std::uint64_t counter_ = 0;
};

// ---- the compiler ----------------------------------------------------------

struct Token {
  Tok kind;
  std::uint32_t line;
  union {
    const Name* name;
    std::int64_t value;
  };
};

constexpr std::size_t kTokensPerBlock = 128;
struct TokenBlock {
  std::uint32_t count;
  Token tokens[kTokensPerBlock];
};

constexpr std::uint32_t kLocalBuckets = 64;
constexpr std::uint32_t kGlobalBuckets = 512;

[[noreturn]] void error(std::uint32_t line, const std::string& what) {
  throw std::runtime_error("compiler: line " + std::to_string(line) + ": " + what);
}

std::uint32_t hash_text(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// Wraps v to what a value of type t holds (two's complement).
std::int64_t wrap(std::int64_t v, const Type* t) {
  switch (t->kind) {
    case Type::tchar: return static_cast<std::int8_t>(static_cast<std::uint64_t>(v) & 0xff);
    case Type::tint: return static_cast<std::int32_t>(static_cast<std::uint64_t>(v) & 0xffffffffu);
    default: return v;
  }
}

template <class Arena>
class Compiler {
 public:
  explicit Compiler(Checksum& sum) : sum_(sum), names_(4096, nullptr) {
    static constexpr std::pair<const char*, Tok> kKeywords[] = {
        {"int", Tok::kw_int},     {"long", Tok::kw_long},     {"char", Tok::kw_char},   {"if", Tok::kw_if},
        {"else", Tok::kw_else},   {"while", Tok::kw_while},   {"for", Tok::kw_for},     {"return", Tok::kw_return},
        {"break", Tok::kw_break}, {"continue", Tok::kw_continue}};
    for (const auto& [text, kind] : kKeywords) intern(text)->keyword = kind;
    for (int k = 0; k < 3; ++k) {
      Type* t = make<Type>(perm_);
      t->kind = static_cast<Type::Kind>(k);
      t->rank = static_cast<std::uint8_t>(k);
      basic_[k] = t;
    }
    globals_ = new_scope(perm_, nullptr, 0, kGlobalBuckets);
  }

  // Global declarations: into PERM.
  void globals(std::string_view text) {
    start(text);
    while (tok().kind != Tok::end) {
      const Type* type = base_type();
      const Name* name = expect_ident();
      if (tok().kind == Tok::lbracket) {
        advance();
        if (tok().kind != Tok::number) error(tok().line, "array length expected");
        Type* array = make<Type>(perm_);
        array->kind = Type::tarray;
        array->rank = type->rank;
        array->count = static_cast<std::uint32_t>(tok().value);
        array->base = type;
        type = array;
        advance();
        expect(Tok::rbracket, "]");
      }
      expect(Tok::semicolon, ";");
      declare_global(name, type, Symbol::global);
    }
    finish_tokens();
    func_.clear();
  }

  // One function definition: compiled, emitted, and its FUNC arena cleared.
  void function(std::string_view text) {
    start(text);
    const Type* result = base_type();
    const Name* name = expect_ident();
    expect(Tok::lparen, "(");
    std::vector<const Type*>& params = param_types_;
    params.clear();
    level_ = 1;
    locals_ = nullptr;
    last_local_ = nullptr;
    slots_ = 0;
    while (tok().kind != Tok::rparen) {
      if (!params.empty()) expect(Tok::comma, ",");
      const Type* type = base_type();
      declare_local(expect_ident(), type, Symbol::param);
      params.push_back(type);
    }
    advance();
    Type* ftype = make<Type>(perm_);
    ftype->kind = Type::tfunction;
    ftype->base = result;
    ftype->count = static_cast<std::uint32_t>(params.size());
    ftype->params = static_cast<const Type**>(perm_.allocate(sizeof(Type*) * (params.size() + 1)));
    if (ftype->params == nullptr) throw std::bad_alloc();
    for (std::size_t i = 0; i < params.size(); ++i) ftype->params[i] = params[i];
    function_ = declare_global(name, ftype, Symbol::function);

    Stmt* body = compound();
    if (tok().kind != Tok::end) error(tok().line, "text after the function");
    finish_tokens();
    close_scope(1);

    loops_ = 0;
    check_statements(body);
    body = fold_statements(body);
    generate(body);
    emit();
    func_.clear();
    ++functions_;
  }

  void totals() {
    sum_.add(functions_);
    sum_.add(tokens_);
    sum_.add(nodes_);
    sum_.add(folds_);
    sum_.add(instructions_);
    sum_.add(deleted_);
    sum_.add(spills_);
    sum_.add(spill_slots_);
    std::printf("compiler: %llu functions, %llu tokens, %llu nodes, %llu folds, %llu instructions (%llu deleted), %llu spills\n",
                static_cast<unsigned long long>(functions_), static_cast<unsigned long long>(tokens_),
                static_cast<unsigned long long>(nodes_), static_cast<unsigned long long>(folds_),
                static_cast<unsigned long long>(instructions_), static_cast<unsigned long long>(deleted_), static_cast<unsigned long long>(spills_));
  }

 private:
  // ---- names and scopes ----

  Name* intern(std::string_view text) {
    const std::uint32_t h = hash_text(text);
    Name*& bucket = names_[h & (names_.size() - 1)];
    for (Name* n = bucket; n != nullptr; n = n->next)
      if (n->hash == h && n->length == text.size() && std::memcmp(n->text, text.data(), text.size()) == 0) return n;
    Name* n = make<Name>(perm_);
    auto* spelling = static_cast<char*>(perm_.allocate(text.size() + 1));
    if (spelling == nullptr) throw std::bad_alloc();
    std::memcpy(spelling, text.data(), text.size());
    spelling[text.size()] = '\0';
    *n = Name{bucket, spelling, static_cast<std::uint32_t>(text.size()), h, Tok::ident};
    bucket = n;
    return n;
  }

  template <class A>
  Scope* new_scope(A& arena, Scope* parent, std::uint32_t level, std::uint32_t buckets) {
    Scope* s = make<Scope>(arena, sizeof(Symbol*) * buckets);
    s->buckets = reinterpret_cast<Symbol**>(s + 1);
    s->parent = parent;
    s->level = level;
    s->mask = buckets - 1;
    for (std::uint32_t i = 0; i < buckets; ++i) s->buckets[i] = nullptr;
    return s;
  }

  static Symbol* find_in(const Scope* s, const Name* name) {
    for (Symbol* sym = s->buckets[name->hash & s->mask]; sym != nullptr; sym = sym->next)
      if (sym->name == name) return sym;
    return nullptr;
  }

  static void insert(Scope* s, Symbol* sym) {
    Symbol*& bucket = s->buckets[sym->name->hash & s->mask];
    sym->next = bucket;
    bucket = sym;
  }

  Symbol* declare_global(const Name* name, const Type* type, Symbol::Kind kind) {
    if (find_in(globals_, name) != nullptr) error(line_, std::string("redeclared: ") + name->text);
    Symbol* sym = make<Symbol>(perm_);
    sym->kind = kind;
    sym->name = name;
    sym->type = type;
    sym->line = line_;
    insert(globals_, sym);
    return sym;
  }

  Symbol* declare_local(const Name* name, const Type* type, Symbol::Kind kind) {
    if (scope_ == nullptr || scope_->level < level_) scope_ = new_scope(func_, scope_, level_, kLocalBuckets);
    else if (find_in(scope_, name) != nullptr) error(line_, std::string("redeclared: ") + name->text);
    Symbol* sym = make<Symbol>(func_);
    sym->kind = kind;
    sym->name = name;
    sym->type = type;
    sym->level = level_;
    sym->slot = slots_++;
    sym->line = line_;
    insert(scope_, sym);
    (last_local_ ? last_local_->next_local : locals_) = sym;
    last_local_ = sym;
    return sym;
  }

  Symbol* lookup(const Name* name) {
    for (const Scope* s = scope_; s != nullptr; s = s->parent)
      if (Symbol* sym = find_in(s, name)) return sym;
    if (Symbol* sym = find_in(globals_, name)) return sym;
    error(line_, std::string("undeclared: ") + name->text);
  }

  // Leaving a level: its table is dead (the symbols live on in the AST).
  void close_scope(std::uint32_t level) {
    if (scope_ != nullptr && scope_->level == level) {
      Scope* dead = scope_;
      scope_ = dead->parent;
      func_.release(dead);
    }
  }

  // ---- tokens ----

  void start(std::string_view text) {
    text_ = text;
    at_ = 0;
    line_ = lex_line_ = 1;
    block_ = lex_block();
    index_ = 0;
  }

  const Token& tok() const { return block_->tokens[index_]; }

  void advance() {
    if (tok().kind == Tok::end) return;
    line_ = tok().line;
    if (++index_ == block_->count) {
      TokenBlock* next = lex_block();
      func_.release(block_);  // parsed: dead
      block_ = next;
      index_ = 0;
    }
  }

  void finish_tokens() {
    func_.release(block_);
    block_ = nullptr;
  }

  TokenBlock* lex_block() {
    auto* block = make<TokenBlock>(func_);
    std::uint32_t n = 0;
    while (n < kTokensPerBlock) {
      Token& t = block->tokens[n++];
      lex(t);
      if (t.kind == Tok::end) break;
    }
    block->count = n;
    tokens_ += n;
    return block;
  }

  void lex(Token& t) {
    const char* s = text_.data();
    const std::size_t size = text_.size();
    for (;;) {  // white space and comments
      while (at_ < size && (s[at_] == ' ' || s[at_] == '\n' || s[at_] == '\t')) {
        if (s[at_] == '\n') ++lex_line_;
        ++at_;
      }
      if (at_ + 1 < size && s[at_] == '/' && s[at_ + 1] == '/') {
        while (at_ < size && s[at_] != '\n') ++at_;
      } else if (at_ + 1 < size && s[at_] == '/' && s[at_ + 1] == '*') {
        const std::size_t close = text_.find("*/", at_ + 2);
        if (close == std::string_view::npos) error(lex_line_, "unterminated comment");
        for (std::size_t i = at_; i < close; ++i) lex_line_ += s[i] == '\n';
        at_ = close + 2;
      } else {
        break;
      }
    }
    t.line = lex_line_;
    t.value = 0;
    if (at_ >= size) {
      t.kind = Tok::end;
      return;
    }
    const char c = s[at_];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
      const std::size_t from = at_;
      while (at_ < size && ((s[at_] >= 'a' && s[at_] <= 'z') || (s[at_] >= 'A' && s[at_] <= 'Z') ||
                            (s[at_] >= '0' && s[at_] <= '9') || s[at_] == '_'))
        ++at_;
      const Name* name = intern(text_.substr(from, at_ - from));
      t.kind = name->keyword;
      t.name = name;
      return;
    }
    if (c >= '0' && c <= '9') {
      std::uint64_t v = 0;
      while (at_ < size && s[at_] >= '0' && s[at_] <= '9') v = v * 10 + static_cast<std::uint64_t>(s[at_++] - '0');
      t.kind = Tok::number;
      t.value = static_cast<std::int64_t>(v);
      return;
    }
    const char d = at_ + 1 < size ? s[at_ + 1] : '\0';
    auto two = [&](Tok kind) {
      at_ += 2;
      t.kind = kind;
    };
    auto one = [&](Tok kind) {
      at_ += 1;
      t.kind = kind;
    };
    switch (c) {
      case '(': return one(Tok::lparen);
      case ')': return one(Tok::rparen);
      case '{': return one(Tok::lbrace);
      case '}': return one(Tok::rbrace);
      case '[': return one(Tok::lbracket);
      case ']': return one(Tok::rbracket);
      case ',': return one(Tok::comma);
      case ';': return one(Tok::semicolon);
      case '+': return one(Tok::plus);
      case '-': return one(Tok::minus);
      case '*': return one(Tok::star);
      case '/': return one(Tok::slash);
      case '%': return one(Tok::percent);
      case '^': return one(Tok::caret);
      case '~': return one(Tok::tilde);
      case '&': return d == '&' ? two(Tok::andand) : one(Tok::amp);
      case '|': return d == '|' ? two(Tok::oror) : one(Tok::pipe);
      case '!': return d == '=' ? two(Tok::ne) : one(Tok::bang);
      case '=': return d == '=' ? two(Tok::eq) : one(Tok::assign);
      case '<': return d == '<' ? two(Tok::shl) : d == '=' ? two(Tok::le) : one(Tok::lt);
      case '>': return d == '>' ? two(Tok::shr) : d == '=' ? two(Tok::ge) : one(Tok::gt);
      default: error(lex_line_, std::string("stray character '") + c + "'");
    }
  }

  void expect(Tok kind, const char* what) {
    if (tok().kind != kind) error(tok().line, std::string("expected ") + what);
    advance();
  }

  const Name* expect_ident() {
    if (tok().kind != Tok::ident) error(tok().line, "identifier expected");
    const Name* name = tok().name;
    advance();
    return name;
  }

  bool at_type() const { return tok().kind == Tok::kw_int || tok().kind == Tok::kw_long || tok().kind == Tok::kw_char; }

  const Type* base_type() {
    if (!at_type()) error(tok().line, "type expected");
    const Type* t = basic_[tok().kind == Tok::kw_char ? 0 : tok().kind == Tok::kw_int ? 1 : 2];
    advance();
    return t;
  }

  // ---- parsing: AST in FUNC ----

  Expr* node(Expr::Kind kind, Expr* a = nullptr, Expr* b = nullptr) {
    Expr* e = make<Expr>(func_);
    e->kind = kind;
    e->a = a;
    e->b = b;
    e->line = line_;
    ++nodes_;
    return e;
  }

  Stmt* statement_node(Stmt::Kind kind) {
    Stmt* s = make<Stmt>(func_);
    s->kind = kind;
    s->line = tok().line;
    ++nodes_;
    return s;
  }

  Stmt* compound() {
    Stmt* block = statement_node(Stmt::block);
    expect(Tok::lbrace, "{");
    ++level_;
    Stmt** tail = &block->body;
    while (tok().kind != Tok::rbrace) {
      if (tok().kind == Tok::end) error(tok().line, "unexpected end of function");
      *tail = at_type() ? declaration() : statement();
      tail = &(*tail)->next;
    }
    advance();
    close_scope(level_);
    --level_;
    return block;
  }

  Stmt* declaration() {
    Stmt* s = statement_node(Stmt::decl);
    const Type* type = base_type();
    const Name* name = expect_ident();
    // The initializer is in the new name's scope, as in C: parse it first and
    // the name would not be visible in it; here it may not use itself.
    Expr* init = nullptr;
    if (tok().kind == Tok::assign) {
      advance();
      init = expression();
    }
    expect(Tok::semicolon, ";");
    s->sym = declare_local(name, type, Symbol::local);
    s->e = init;
    return s;
  }

  Stmt* statement() {
    switch (tok().kind) {
      case Tok::lbrace: return compound();
      case Tok::kw_if: {
        Stmt* s = statement_node(Stmt::if_);
        advance();
        expect(Tok::lparen, "(");
        s->e = expression();
        expect(Tok::rparen, ")");
        s->body = statement();
        if (tok().kind == Tok::kw_else) {
          advance();
          s->other = statement();
        }
        return s;
      }
      case Tok::kw_while: {
        Stmt* s = statement_node(Stmt::while_);
        advance();
        expect(Tok::lparen, "(");
        s->e = expression();
        expect(Tok::rparen, ")");
        s->body = statement();
        return s;
      }
      case Tok::kw_for: {
        Stmt* s = statement_node(Stmt::for_);
        advance();
        expect(Tok::lparen, "(");
        if (tok().kind != Tok::semicolon) s->init = expression();
        expect(Tok::semicolon, ";");
        if (tok().kind != Tok::semicolon) s->e = expression();
        expect(Tok::semicolon, ";");
        if (tok().kind != Tok::rparen) s->step = expression();
        expect(Tok::rparen, ")");
        s->body = statement();
        return s;
      }
      case Tok::kw_return: {
        Stmt* s = statement_node(Stmt::return_);
        advance();
        s->e = expression();
        expect(Tok::semicolon, ";");
        return s;
      }
      case Tok::kw_break:
      case Tok::kw_continue: {
        Stmt* s = statement_node(tok().kind == Tok::kw_break ? Stmt::break_ : Stmt::continue_);
        advance();
        expect(Tok::semicolon, ";");
        return s;
      }
      default: {
        Stmt* s = statement_node(Stmt::expr);
        s->e = expression();
        expect(Tok::semicolon, ";");
        return s;
      }
    }
  }

  Expr* expression() {
    Expr* left = binary(0);
    if (tok().kind != Tok::assign) return left;
    advance();
    if (left->kind != Expr::var && left->kind != Expr::index) error(line_, "assignment to a value");
    return node(Expr::assign, left, expression());
  }

  struct BinaryOp {
    int precedence;
    Op op;
  };
  static BinaryOp binary_op(Tok t) {
    switch (t) {
      case Tok::oror: return {1, Op::lor};
      case Tok::andand: return {2, Op::land};
      case Tok::pipe: return {3, Op::bor};
      case Tok::caret: return {4, Op::bxor};
      case Tok::amp: return {5, Op::band};
      case Tok::eq: return {6, Op::eq};
      case Tok::ne: return {6, Op::ne};
      case Tok::lt: return {7, Op::lt};
      case Tok::le: return {7, Op::le};
      case Tok::gt: return {7, Op::gt};
      case Tok::ge: return {7, Op::ge};
      case Tok::shl: return {8, Op::shl};
      case Tok::shr: return {8, Op::shr};
      case Tok::plus: return {9, Op::add};
      case Tok::minus: return {9, Op::sub};
      case Tok::star: return {10, Op::mul};
      case Tok::slash: return {10, Op::div};
      case Tok::percent: return {10, Op::mod};
      default: return {0, Op::add};
    }
  }

  // Precedence climbing: operators binding tighter than min_precedence.
  Expr* binary(int min_precedence) {
    Expr* left = unary();
    for (;;) {
      const BinaryOp b = binary_op(tok().kind);
      if (b.precedence <= min_precedence) return left;
      advance();
      Expr* e = node(Expr::binary, left, binary(b.precedence));
      e->op = b.op;
      left = e;
    }
  }

  Expr* unary() {
    Op op;
    switch (tok().kind) {
      case Tok::minus: op = Op::neg; break;
      case Tok::tilde: op = Op::bnot; break;
      case Tok::bang: op = Op::lnot; break;
      default: return primary();
    }
    advance();
    Expr* e = node(Expr::unary, unary());
    e->op = op;
    return e;
  }

  Expr* primary() {
    if (tok().kind == Tok::number) {
      Expr* e = node(Expr::constant);
      e->value = tok().value;
      advance();
      return e;
    }
    if (tok().kind == Tok::lparen) {
      advance();
      Expr* e = expression();
      expect(Tok::rparen, ")");
      return e;
    }
    const Name* name = expect_ident();
    Symbol* sym = lookup(name);
    ++sym->uses;
    if (tok().kind == Tok::lparen) {
      advance();
      Expr* e = node(Expr::call);
      e->sym = sym;
      Expr** tail = &e->b;
      while (tok().kind != Tok::rparen) {
        if (e->b != nullptr) expect(Tok::comma, ",");
        *tail = expression();
        tail = &(*tail)->next;
      }
      advance();
      return e;
    }
    if (tok().kind == Tok::lbracket) {
      advance();
      Expr* e = node(Expr::index, expression());
      e->sym = sym;
      expect(Tok::rbracket, "]");
      return e;
    }
    Expr* e = node(Expr::var);
    e->sym = sym;
    return e;
  }

  // ---- type checking: types on every node, conversions made explicit ----

  Expr* convert(Expr* e, const Type* to) {
    if (e->type == to) return e;
    Expr* c = node(Expr::cast, e);
    c->type = to;
    c->line = e->line;
    return c;
  }

  const Type* promoted(const Type* t) const { return t->rank < 1 ? basic_[1] : t; }

  void check(Expr*& e) {
    line_ = e->line;
    switch (e->kind) {
      case Expr::constant: {
        const bool fits_int = e->value >= INT32_MIN && e->value <= INT32_MAX;
        e->type = basic_[fits_int ? 1 : 2];
        return;
      }
      case Expr::var:
        if (e->sym->type->kind >= Type::tarray) error(e->line, std::string("not a scalar: ") + e->sym->name->text);
        e->type = e->sym->type;
        return;
      case Expr::index:
        if (e->sym->type->kind != Type::tarray) error(e->line, std::string("not an array: ") + e->sym->name->text);
        check(e->a);
        e->a = convert(e->a, basic_[2]);
        e->type = e->sym->type->base;
        return;
      case Expr::call: {
        const Type* f = e->sym->type;
        if (f->kind != Type::tfunction) error(e->line, std::string("not a function: ") + e->sym->name->text);
        std::uint32_t n = 0;
        for (Expr** arg = &e->b; *arg != nullptr; arg = &(*arg)->next, ++n) {
          if (n == f->count) error(e->line, "too many arguments");
          Expr* next = (*arg)->next;
          (*arg)->next = nullptr;  // a conversion must not own the arguments after it
          check(*arg);
          *arg = convert(*arg, f->params[n]);
          (*arg)->next = next;
        }
        if (n != f->count) error(e->line, "too few arguments");
        e->type = f->base;
        return;
      }
      case Expr::unary:
        check(e->a);
        if (e->op == Op::lnot) {
          e->type = basic_[1];
        } else {
          e->a = convert(e->a, promoted(e->a->type));
          e->type = e->a->type;
        }
        return;
      case Expr::binary: {
        check(e->a);
        check(e->b);
        if (e->op == Op::land || e->op == Op::lor) {
          e->type = basic_[1];
          return;
        }
        if (e->op == Op::shl || e->op == Op::shr) {  // the left operand's type
          e->a = convert(e->a, promoted(e->a->type));
          e->b = convert(e->b, basic_[1]);
          e->type = e->a->type;
          return;
        }
        const Type* common = promoted(e->a->type->rank >= e->b->type->rank ? e->a->type : e->b->type);
        e->a = convert(e->a, common);
        e->b = convert(e->b, common);
        e->type = e->op >= Op::lt ? basic_[1] : common;
        return;
      }
      case Expr::assign:
        check(e->a);
        check(e->b);
        e->b = convert(e->b, e->a->type);
        e->type = e->a->type;
        return;
      case Expr::cast: check(e->a); return;
    }
  }

  void check_statements(Stmt* s) {
    for (; s != nullptr; s = s->next) {
      line_ = s->line;
      switch (s->kind) {
        case Stmt::expr: check(s->e); break;
        case Stmt::decl:
          if (s->e != nullptr) {
            check(s->e);
            s->e = convert(s->e, s->sym->type);
          }
          break;
        case Stmt::block: check_statements(s->body); break;
        case Stmt::if_:
          check(s->e);
          check_statements(s->body);
          check_statements(s->other);
          break;
        case Stmt::while_:
        case Stmt::for_:
          if (s->init) check(s->init);
          if (s->e) check(s->e);
          if (s->step) check(s->step);
          ++loops_;
          check_statements(s->body);
          --loops_;
          break;
        case Stmt::return_:
          check(s->e);
          s->e = convert(s->e, function_->type->base);
          break;
        case Stmt::break_:
        case Stmt::continue_:
          if (loops_ == 0) error(s->line, "break or continue outside a loop");
          break;
      }
    }
  }

  // ---- constant folding: replaced nodes are dead ----

  void discard(Expr* e) {
    while (e != nullptr) {
      discard(e->a);
      discard(e->b);
      Expr* next = e->next;
      func_.release(e);
      e = next;
    }
  }

  void discard(Stmt* s) {
    while (s != nullptr) {
      if (s->e) discard(s->e);
      if (s->init) discard(s->init);
      if (s->step) discard(s->step);
      discard(s->body);
      discard(s->other);
      Stmt* next = s->next;
      func_.release(s);
      s = next;
    }
  }

  static bool pure(const Expr* e) {
    if (e == nullptr) return true;
    if (e->kind == Expr::call || e->kind == Expr::assign) return false;
    return pure(e->a) && pure(e->b);
  }

  // e (a binary or unary node) becomes a constant of its type.
  Expr* to_constant(Expr* e, std::int64_t value) {
    Expr* c = node(Expr::constant);
    c->type = e->type;
    c->value = wrap(value, e->type);
    c->line = e->line;
    c->next = e->next;
    discard(e->a);
    discard(e->b);
    func_.release(e);
    ++folds_;
    return c;
  }

  // e becomes its operand `keep` (same type: operands were converted).
  Expr* to_operand(Expr* e, Expr* keep) {
    Expr* dead = keep == e->a ? e->b : e->a;
    keep->next = e->next;
    discard(dead);
    func_.release(e);
    ++folds_;
    return keep;
  }

  static std::int64_t evaluate(Op op, std::int64_t x, std::int64_t y, const Type* t, bool& ok) {
    using U = std::uint64_t;
    const int bits = t->rank == 2 ? 64 : 32;
    switch (op) {
      case Op::add: return static_cast<std::int64_t>(static_cast<U>(x) + static_cast<U>(y));
      case Op::sub: return static_cast<std::int64_t>(static_cast<U>(x) - static_cast<U>(y));
      case Op::mul: return static_cast<std::int64_t>(static_cast<U>(x) * static_cast<U>(y));
      case Op::div:
      case Op::mod:
        if (y == 0 || (y == -1 && x == (bits == 64 ? INT64_MIN : INT32_MIN))) {
          ok = false;
          return 0;
        }
        return op == Op::div ? x / y : x % y;
      case Op::band: return x & y;
      case Op::bor: return x | y;
      case Op::bxor: return x ^ y;
      case Op::shl: return static_cast<std::int64_t>(static_cast<U>(x) << (y & (bits - 1)));
      case Op::shr: return x >> (y & (bits - 1));
      case Op::lt: return x < y;
      case Op::le: return x <= y;
      case Op::gt: return x > y;
      case Op::ge: return x >= y;
      case Op::eq: return x == y;
      case Op::ne: return x != y;
      case Op::land: return x != 0 && y != 0;
      case Op::lor: return x != 0 || y != 0;
      default: ok = false; return 0;
    }
  }

  void fold(Expr*& e) {
    if (e->a) fold(e->a);
    if (e->kind == Expr::call) {
      for (Expr** arg = &e->b; *arg != nullptr; arg = &(*arg)->next) fold(*arg);
      return;
    }
    if (e->b) fold(e->b);
    Expr* a = e->a;
    Expr* b = e->b;
    switch (e->kind) {
      case Expr::cast:
        if (a->kind == Expr::constant) e = to_constant(e, a->value);
        return;
      case Expr::unary:
        if (a->kind == Expr::constant) {
          const std::int64_t v = a->value;
          e = to_constant(e, e->op == Op::neg ? static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(v))
                             : e->op == Op::bnot ? ~v
                                                 : v == 0);
        }
        return;
      case Expr::binary: {
        const bool ca = a->kind == Expr::constant, cb = b->kind == Expr::constant;
        if (ca && cb) {
          bool ok = true;
          const std::int64_t v = evaluate(e->op, a->value, b->value, a->type, ok);
          if (ok) e = to_constant(e, v);
          return;
        }
        // Short circuits that a constant decides, identities, annihilators.
        if (ca && (e->op == Op::land || e->op == Op::lor)) {
          if ((a->value != 0) == (e->op == Op::lor)) e = to_constant(e, e->op == Op::lor);
          return;
        }
        if (ca && e->type == b->type &&
            ((a->value == 0 && (e->op == Op::add || e->op == Op::bor || e->op == Op::bxor)) ||
             (a->value == 1 && e->op == Op::mul))) {
          e = to_operand(e, b);
          return;
        }
        if (!cb) return;
        const std::int64_t y = b->value;
        const bool same_type = e->type == a->type;
        if (same_type && y == 0 &&
            (e->op == Op::add || e->op == Op::sub || e->op == Op::bor || e->op == Op::bxor || e->op == Op::shl ||
             e->op == Op::shr)) {
          e = to_operand(e, a);
        } else if (same_type && y == 1 && (e->op == Op::mul || e->op == Op::div)) {
          e = to_operand(e, a);
        } else if (y == 0 && (e->op == Op::mul || e->op == Op::band) && pure(a)) {
          e = to_constant(e, 0);
        }
        return;
      }
      default: return;
    }
  }

  // Folds a statement list; returns the new head (dead branches are gone).
  Stmt* fold_statements(Stmt* s) {
    Stmt* head = nullptr;
    Stmt** tail = &head;
    while (s != nullptr) {
      Stmt* next = s->next;
      s->next = nullptr;
      if (s->e) fold(s->e);
      if (s->init) fold(s->init);
      if (s->step) fold(s->step);
      s->body = fold_statements(s->body);
      s->other = fold_statements(s->other);
      Stmt* replacement = s;
      if (s->kind == Stmt::if_ && s->e->kind == Expr::constant) {
        // The branch not taken is dead; the one taken takes the if's place.
        Stmt* taken = s->e->value != 0 ? s->body : s->other;
        (s->e->value != 0 ? s->body : s->other) = nullptr;
        discard(s);
        replacement = taken;
        ++folds_;
      } else if (s->kind == Stmt::while_ && s->e->kind == Expr::constant && s->e->value == 0) {
        discard(s);
        replacement = nullptr;
        ++folds_;
      }
      if (replacement != nullptr) {
        *tail = replacement;
        while (*tail != nullptr) tail = &(*tail)->next;
      }
      s = next;
    }
    return head;
  }

  // ---- code generation: three-address code through a DAG per expression ----

  enum class I : std::uint8_t { konst, load, store, gload, gstore, aload, astore, arith, cvt, arg, call, label, jump,
                                jz, jnz, ret };
  struct Instr {
    Instr* next;
    I kind;
    Op op;
    std::uint8_t type;  // rank of the result / operand
    std::int32_t dst, x, y;
    std::int64_t imm;
    const Symbol* sym;
  };

  // A DAG node (STMT): an instruction already emitted for this expression,
  // found again by its key (lcc's dag.c: common subexpressions in a forest).
  struct DagNode {
    DagNode* next;
    I kind;
    Op op;
    std::uint8_t type;
    std::int32_t x, y;
    std::int64_t imm;
    const Symbol* sym;
    std::uint32_t version;
    std::int32_t vreg;
  };
  static constexpr std::uint32_t kDagBuckets = 64;
  struct DagTable {
    DagNode* buckets[kDagBuckets];
  };

  Instr* emit_instr(I kind, std::int32_t dst = -1, std::int32_t x = -1, std::int32_t y = -1) {
    Instr* in = make<Instr>(func_);
    in->kind = kind;
    in->dst = dst;
    in->x = x;
    in->y = y;
    *code_tail_ = in;
    code_tail_ = &in->next;
    ++instructions_;
    return in;
  }

  // The vreg of (kind, op, type, x, y, imm, sym@version): reused if this
  // expression computed it already, else a new instruction.
  std::int32_t value(I kind, Op op, std::uint8_t type, std::int32_t x, std::int32_t y, std::int64_t imm,
                     const Symbol* sym) {
    const std::uint32_t version = sym ? (sym->kind == Symbol::global ? sym->version + memory_epoch_ : sym->version) : 0;
    std::uint64_t h = static_cast<std::uint64_t>(kind) * 31 + static_cast<std::uint64_t>(op);
    h = h * 0x9E3779B97F4A7C15ULL + static_cast<std::uint32_t>(x);
    h = h * 0x9E3779B97F4A7C15ULL + static_cast<std::uint32_t>(y);
    h = h * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(imm);
    h = h * 0x9E3779B97F4A7C15ULL + (sym ? sym->name->hash + sym->level : 0);
    DagNode*& bucket = dag_->buckets[(h >> 40) % kDagBuckets];
    for (DagNode* d = bucket; d != nullptr; d = d->next)
      if (d->kind == kind && d->op == op && d->type == type && d->x == x && d->y == y && d->imm == imm &&
          d->sym == sym && d->version == version) {
        ++cse_hits_;
        return d->vreg;
      }
    DagNode* d = make<DagNode>(stmt_);
    *d = DagNode{bucket, kind, op, type, x, y, imm, sym, version, next_vreg_++};
    bucket = d;
    Instr* in = emit_instr(kind, d->vreg, x, y);
    in->op = op;
    in->type = type;
    in->imm = imm;
    in->sym = sym;
    return d->vreg;
  }

  std::int32_t gen(const Expr* e) {
    const std::uint8_t t = e->type->rank;
    switch (e->kind) {
      case Expr::constant: return value(I::konst, Op::add, t, -1, -1, e->value, nullptr);
      case Expr::var:
        return value(e->sym->kind == Symbol::global ? I::gload : I::load, Op::add, t, -1, -1, 0, e->sym);
      case Expr::index: return value(I::aload, Op::add, t, gen(e->a), -1, 0, e->sym);
      case Expr::cast: return value(I::cvt, Op::add, t, gen(e->a), -1, e->a->type->rank, nullptr);
      case Expr::unary: return value(I::arith, e->op, t, gen(e->a), -1, 0, nullptr);
      case Expr::binary: {
        if (e->op == Op::land || e->op == Op::lor) {  // control flow: both sides are not always evaluated
          const std::int32_t result = next_vreg_++;
          const std::int32_t done = next_label_++;
          Instr* set = emit_instr(I::konst, result);
          set->imm = e->op == Op::lor;
          emit_instr(e->op == Op::lor ? I::jnz : I::jz, -1, gen(e->a))->imm = done;
          const std::int32_t right = gen(e->b);
          emit_instr(I::arith, result, right, -1)->op = Op::lnot;
          emit_instr(I::arith, result, result, -1)->op = Op::lnot;
          emit_instr(I::label)->imm = done;
          forget_dag();  // values computed on one path only
          return result;
        }
        const std::int32_t x = gen(e->a);
        return value(I::arith, e->op, t, x, gen(e->b), 0, nullptr);
      }
      case Expr::assign: {
        const std::int32_t v = gen(e->b);
        Symbol* target = e->a->sym;
        if (e->a->kind == Expr::index) {
          emit_instr(I::astore, -1, gen(e->a->a), v)->sym = target;
          ++memory_epoch_;
        } else {
          emit_instr(target->kind == Symbol::global ? I::gstore : I::store, -1, v)->sym = target;
          ++target->version;
        }
        return v;
      }
      case Expr::call: {
        std::int32_t args[8];
        int n = 0;
        for (const Expr* arg = e->b; arg != nullptr; arg = arg->next) {
          if (n == 8) error(e->line, "more than 8 arguments");
          args[n++] = gen(arg);
        }
        for (int i = 0; i < n; ++i) emit_instr(I::arg, -1, args[i])->imm = i;
        Instr* in = emit_instr(I::call, next_vreg_++);
        in->sym = e->sym;
        in->type = t;
        ++memory_epoch_;  // the callee may change any global
        return in->dst;
      }
    }
    return -1;
  }

  void forget_dag() {
    for (DagNode*& bucket : dag_->buckets) bucket = nullptr;
  }

  // One full expression: its DAG lives in STMT and dies with it.
  std::int32_t gen_root(const Expr* e) {
    dag_ = make<DagTable>(stmt_);
    forget_dag();
    const std::int32_t v = gen(e);
    stmt_.clear();
    dag_ = nullptr;
    return v;
  }

  void branch(I kind, std::int32_t v, std::int32_t label) { emit_instr(kind, -1, v)->imm = label; }
  void place(std::int32_t label) { emit_instr(I::label)->imm = label; }
  void jump(std::int32_t label) { emit_instr(I::jump)->imm = label; }

  void gen_statements(const Stmt* s, std::int32_t break_label, std::int32_t continue_label) {
    for (; s != nullptr; s = s->next) {
      switch (s->kind) {
        case Stmt::expr: gen_root(s->e); break;
        case Stmt::decl:
          if (s->e != nullptr) emit_instr(I::store, -1, gen_root(s->e))->sym = s->sym;
          break;
        case Stmt::block: gen_statements(s->body, break_label, continue_label); break;
        case Stmt::if_: {
          const std::int32_t skip = next_label_++;
          branch(I::jz, gen_root(s->e), skip);
          gen_statements(s->body, break_label, continue_label);
          if (s->other != nullptr) {
            const std::int32_t done = next_label_++;
            jump(done);
            place(skip);
            gen_statements(s->other, break_label, continue_label);
            place(done);
          } else {
            place(skip);
          }
          break;
        }
        case Stmt::while_:
        case Stmt::for_: {
          const std::int32_t top = next_label_++, next = next_label_++, done = next_label_++;
          if (s->init) gen_root(s->init);
          place(top);
          if (s->e != nullptr && !(s->e->kind == Expr::constant && s->e->value != 0)) branch(I::jz, gen_root(s->e), done);
          gen_statements(s->body, done, next);
          place(next);
          if (s->step) gen_root(s->step);
          jump(top);
          place(done);
          break;
        }
        case Stmt::return_: emit_instr(I::ret, -1, gen_root(s->e)); break;
        case Stmt::break_: jump(break_label); break;
        case Stmt::continue_: jump(continue_label); break;
      }
    }
  }

  void generate(const Stmt* body) {
    code_ = nullptr;
    code_tail_ = &code_;
    next_vreg_ = 0;
    next_label_ = 0;
    memory_epoch_ = 0;
    gen_statements(body, -1, -1);
    // Falling off the end returns 0.
    Instr* zero = emit_instr(I::konst, next_vreg_++);
    emit_instr(I::ret, -1, zero->dst);
  }

  // ---- the back end: peephole, frame, assembly text ----

  void peephole() {
    // Code after an unconditional jump or return, up to the next label, is
    // unreachable; a jump to the label right after it does nothing.
    for (Instr** link = &code_; *link != nullptr;) {
      Instr* in = *link;
      if ((in->kind == I::jump || in->kind == I::ret) && in->next != nullptr && in->next->kind != I::label) {
        Instr* dead = in->next;
        in->next = dead->next;
        func_.release(dead);
        ++deleted_;
        continue;
      }
      if (in->kind == I::jump && in->next != nullptr && in->next->kind == I::label && in->next->imm == in->imm) {
        *link = in->next;
        func_.release(in);
        ++deleted_;
        continue;
      }
      link = &in->next;
    }
  }

  // Linear scan over the straight-line code (a value never lives across a
  // loop's back edge: locals live in the frame): kRegisters registers, the
  // rest spilled. Operands and results are rewritten to their locations
  // (registers 0..kRegisters-1, stack slots from kRegisters up).
  static constexpr int kRegisters = 6;
  void allocate_registers() {
    last_use_.assign(static_cast<std::size_t>(next_vreg_), -1);
    location_.assign(static_cast<std::size_t>(next_vreg_), -1);
    std::int32_t at = 0;
    for (const Instr* in = code_; in != nullptr; in = in->next, ++at) {
      if (in->x >= 0) last_use_[static_cast<std::size_t>(in->x)] = at;
      if (in->y >= 0) last_use_[static_cast<std::size_t>(in->y)] = at;
      if (in->dst >= 0) last_use_[static_cast<std::size_t>(in->dst)] = std::max(last_use_[static_cast<std::size_t>(in->dst)], at);
    }
    std::uint32_t free_registers = (1u << kRegisters) - 1;
    std::int32_t slots = 0;
    // A value's location, given at its first definition — or at its first
    // use, when the peephole pass deleted the unreachable code defining it.
    auto locate = [&](std::int32_t vreg) {
      std::int32_t& where = location_[static_cast<std::size_t>(vreg)];
      if (where < 0) {
        if (free_registers != 0) {
          where = std::countr_zero(free_registers);
          free_registers &= free_registers - 1;
        } else {
          where = kRegisters + slots++;
          ++spills_;
        }
      }
      return where;
    };
    auto release = [&](std::int32_t vreg, std::int32_t now) {
      const auto v = static_cast<std::size_t>(vreg);
      if (last_use_[v] == now && location_[v] < kRegisters) free_registers |= 1u << location_[v];
    };
    at = 0;
    for (Instr* in = code_; in != nullptr; in = in->next, ++at) {
      const std::int32_t x = in->x, y = in->y;
      if (x >= 0) in->x = locate(x);
      if (y >= 0) in->y = locate(y);
      if (x >= 0) release(x, at);
      if (y >= 0 && y != x) release(y, at);
      if (in->dst >= 0) {
        const std::int32_t dst = in->dst;
        in->dst = locate(dst);
        release(dst, at);  // a result nobody reads
      }
    }
    spill_slots_ += static_cast<std::uint64_t>(slots);
  }

  void emit() {
    peephole();
    allocate_registers();
    // The frame: each local at an offset aligned to its size.
    std::int32_t frame = 0;
    for (Symbol* s = locals_; s != nullptr; s = s->next_local) {
      const std::int32_t size = s->type->rank == 0 ? 1 : s->type->rank == 1 ? 4 : 8;
      frame = (frame + size - 1) / size * size;
      s->offset = frame;
      frame += size;
    }
    std::uint64_t h = 0x243F6A8885A308D3ULL;
    std::uint64_t count = 0;
    char text[96];
    auto put = [&](std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(text[i])) * 0x100000001b3ULL;
    };
    put(static_cast<std::size_t>(std::snprintf(text, sizeof text, "%s: frame %d\n", function_->name->text, frame)));
    for (const Instr* in = code_; in != nullptr; in = in->next, ++count) {
      std::size_t n = 0;
      switch (in->kind) {
        case I::konst: n = format(text, "  r%d = %lld", in->dst, static_cast<long long>(in->imm)); break;
        case I::load: n = format(text, "  r%d = [fp+%d] ; %s", in->dst, in->sym->offset, in->sym->name->text); break;
        case I::store: n = format(text, "  [fp+%d] = r%d ; %s", in->sym->offset, in->x, in->sym->name->text); break;
        case I::gload: n = format(text, "  r%d = %s", in->dst, in->sym->name->text); break;
        case I::gstore: n = format(text, "  %s = r%d", in->sym->name->text, in->x); break;
        case I::aload: n = format(text, "  r%d = %s[r%d]", in->dst, in->sym->name->text, in->x); break;
        case I::astore: n = format(text, "  %s[r%d] = r%d", in->sym->name->text, in->x, in->y); break;
        case I::arith:
          n = in->y < 0 ? format(text, "  r%d = %s.%d r%d", in->dst, kOpNames[static_cast<int>(in->op)], in->type, in->x)
                        : format(text, "  r%d = %s.%d r%d, r%d", in->dst, kOpNames[static_cast<int>(in->op)], in->type,
                                 in->x, in->y);
          break;
        case I::cvt: n = format(text, "  r%d = cvt.%lld.%d r%d", in->dst, static_cast<long long>(in->imm), in->type, in->x); break;
        case I::arg: n = format(text, "  arg %lld, r%d", static_cast<long long>(in->imm), in->x); break;
        case I::call: n = format(text, "  r%d = call %s", in->dst, in->sym->name->text); break;
        case I::label: n = format(text, "L%lld:", static_cast<long long>(in->imm)); break;
        case I::jump: n = format(text, "  jmp L%lld", static_cast<long long>(in->imm)); break;
        case I::jz: n = format(text, "  jz r%d, L%lld", in->x, static_cast<long long>(in->imm)); break;
        case I::jnz: n = format(text, "  jnz r%d, L%lld", in->x, static_cast<long long>(in->imm)); break;
        case I::ret: n = format(text, "  ret r%d", in->x); break;
      }
      put(n);
    }
    sum_.add(h);
    sum_.add(count);
    sum_.add(static_cast<std::uint64_t>(next_vreg_));
    sum_.add(cse_hits_);
  }

  __attribute__((format(printf, 2, 3))) static std::size_t format(char (&text)[96], const char* f, ...) {
    va_list args;
    va_start(args, f);
    const int n = std::vsnprintf(text, sizeof text, f, args);
    va_end(args);
    return n < 0 ? 0 : std::min(static_cast<std::size_t>(n), sizeof text - 1);
  }

  Checksum& sum_;
  Arena perm_, func_, stmt_;
  std::vector<Name*> names_;  // the intern table's buckets (the Names are PERM)
  const Type* basic_[3] = {};
  Scope* globals_ = nullptr;
  Scope* scope_ = nullptr;  // innermost local table
  Symbol* locals_ = nullptr;
  Symbol* last_local_ = nullptr;
  Symbol* function_ = nullptr;
  std::vector<const Type*> param_types_;
  std::uint32_t level_ = 0, slots_ = 0, loops_ = 0;

  std::string_view text_;
  std::size_t at_ = 0;
  std::uint32_t line_ = 1, lex_line_ = 1;
  TokenBlock* block_ = nullptr;
  std::uint32_t index_ = 0;

  Instr* code_ = nullptr;
  Instr** code_tail_ = &code_;
  DagTable* dag_ = nullptr;
  std::int32_t next_vreg_ = 0, next_label_ = 0;
  std::uint32_t memory_epoch_ = 0;

  std::vector<std::int32_t> last_use_, location_;  // per vreg (reused from function to function)
  std::uint64_t spills_ = 0, spill_slots_ = 0;
  std::uint64_t functions_ = 0, tokens_ = 0, nodes_ = 0, folds_ = 0, instructions_ = 0, deleted_ = 0, cse_hits_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<ZoneArena, MallocRegion, ReapRegion>(
      argc, argv, "compiler", []<class Arena>(const Options& o) {
        return strata::workload::compile_program<Compiler<Arena>, Generator>(o, kFunctionsPerScale);
      });
}
