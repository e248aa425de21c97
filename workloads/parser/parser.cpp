// parser — a hybrid, 197.parser's xalloc (2002 paper Tables 1–3 and §5.1;
// 2026 paper Tables 1, 2 and 4): a link grammar parser. The dictionary — a
// binary search tree of 2,376 words (the listed ones plus made-up open-class
// words, the same for every seed) — gives each word class a formula over
// connectors (D+ & A- ...). Sentences are generated from the seed by a small
// phrase grammar (noun phrases with adjectives and prepositional phrases,
// transitive and intransitive verbs, "that" clauses, clauses joined by
// "and"; one in eight has a word dropped or two swapped) and written out as
// text. For each sentence the parser
//   1. splits the line into words, copied into the arena and looked up,
//   2. copies each word's formula (expression trees),
//   3. expands the formulas into disjuncts (cross products of clause lists;
//      the clauses die as soon as the disjuncts are built, the formula copies
//      right after),
//   4. prunes disjuncts with a connector no word on its side offers,
//   5. counts the linkages with the memoized recursion of Sleator and
//      Temperley (a hash table of counts keyed by left word, right word and
//      the two connectors' numbers),
//   6. extracts the first linkage (its links, hashed, then freed),
// and then frees the sentence. The dictionary, built at start-up, lives as
// long as the program, at the bottom of the arena.
//
// Modes:
//   custom  XallocHeap: one 32 MB region (197.parser's is 30 MB); malloc bumps
//           after the last block in use, free marks a block free and moves the
//           pointer back only when the last block goes. Most frees are LIFO
//           (a sentence's structures die in reverse order at its end) but not
//           all: the clauses and formula copies die under the disjuncts built
//           from them, pruned disjuncts die in the middle, the memo table is
//           freed bucket by bucket; their memory waits for everything above;
//   naive   every object malloc'd and freed exactly where custom frees it
//           ("use malloc/free directly", 2026 Table 4);
//   reap    the dictionary in a reap of its own, each sentence in a child reap:
//           what dies during the sentence (clauses, formula copies, pruned
//           disjuncts, the linkage's links) is freed individually and reused
//           at once; what lives to the end of the sentence (words, disjuncts,
//           the memo table) goes with one clear.
// The checksum covers each sentence's words (class and entry number), its
// linkage count (mod 2^64), its disjunct counts before and after pruning, and
// the links of its first linkage.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <strata/layers.hpp>
#include <strata/reap.hpp>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

constexpr std::uint64_t kSentencesPerScale = 100;
constexpr std::size_t kArenaBytes = std::size_t{32} << 20;
constexpr int kMaxWords = 80;

// ---- the allocator policies -------------------------------------------------

// custom: 197.parser's xalloc over one fixed region.
struct XallocPolicy {
  static constexpr bool kClearsSentence = false;
  strata::layers::XallocHeap<kArenaBytes, strata::layers::MallocHeap> arena;
  void* dictionary(std::size_t n) { return arena.malloc(n); }
  void forget_dictionary(void* p) { arena.free(p); }
  void* allocate(std::size_t n) { return arena.malloc(n); }
  void release(void* p) { arena.free(p); }
  void end_sentence() {}
  // The arena's use when a sentence is done (before it is freed): what the
  // fixed region must hold.
  void note_use() { high_water = std::max(high_water, arena.bytesInUse()); }
  std::size_t high_water = 0;
};

// naive: malloc and free, object by object.
struct MallocPolicy {
  static constexpr bool kClearsSentence = false;
  void* dictionary(std::size_t n) { return std::malloc(n); }
  void forget_dictionary(void* p) { std::free(p); }
  void* allocate(std::size_t n) { return std::malloc(n); }
  void release(void* p) { std::free(p); }
  void end_sentence() {}
  void note_use() {}
  static constexpr std::size_t high_water = 0;
};

// reap: a reap for the dictionary, a child reap per sentence.
struct ReapPolicy {
  static constexpr bool kClearsSentence = true;
  strata::reap dictionary_reap;
  strata::reap sentence{dictionary_reap};
  void* dictionary(std::size_t n) { return dictionary_reap.malloc(n); }
  void forget_dictionary(void*) {}  // goes with the reap
  void* allocate(std::size_t n) { return sentence.malloc(n); }
  void release(void* p) { sentence.free(p); }
  void end_sentence() { sentence.clear(); }
  void note_use() {}
  static constexpr std::size_t high_water = 0;
};

// ---- connectors, expressions, disjuncts ---------------------------------------

// A connector: a label (one letter, maybe a subscript letter) and a direction.
struct Connector {
  Connector* next;  // in a disjunct: the next nearer connector on the same side
  std::uint32_t id;  // numbered per sentence: the memo table's key (never an address)
  char label, subscript;
  bool right;  // '+': links to a word on the right
  std::uint8_t pad;
  std::int32_t word;  // the word it belongs to
  std::int32_t reserved;
};

bool match(const Connector* a, const Connector* b) {
  return a->label == b->label && (a->subscript == b->subscript || a->subscript == '*' || b->subscript == '*');
}

// A formula: a connector leaf, an and (ordered), an or, or an optional part.
struct Exp {
  enum Type : std::uint8_t { leaf, all, any, optional } type;
  char label, subscript;
  bool right;
  std::int32_t cost;
  Exp* operands;  // all/any/optional: the first operand
  Exp* next;      // the next operand of the enclosing all/any
};

// During expansion: a list of connectors in formula order (a clause).
struct TConnector {
  TConnector* next;
  const Exp* leaf;
};
struct Clause {
  Clause* next;
  TConnector* connectors;
  std::int64_t cost;
};

struct Disjunct {
  Disjunct* next;
  // Farthest first: the first connector links to the farthest word, the
  // rest to words in between (what count() relies on).
  Connector* left;
  Connector* right;
  std::int16_t cost, word;
  std::uint32_t mark;  // the fast matcher's "already in this list"
};

// ---- the dictionary ---------------------------------------------------------------

// Word classes and their formulas. In an &, '-' connectors listed first link
// farther away, '+' connectors listed first link nearer. {x} is optional.
enum WordClass { kWall, kDet, kAdj, kNoun, kName, kPronounS, kPronounO, kVerbT, kVerbI, kVerbThat, kThat, kPrep, kAnd, kClasses };
struct ClassSpec {
  WordClass cls;
  const char* formula;
  const char* words;
};
constexpr ClassSpec kGrammar[] = {
    {kWall, "Wd+", "LEFT-WALL"},
    {kDet, "D+", "the a every some this"},
    {kAdj, "({E-} & A+) or ({E-} & E+)", "big old red small happy green"},
    {kNoun, "((Wd- or C-) & {D-} & {A-} & {Mp+} & S+) or ((O- or J-) & {D-} & {A-} & {Mp+})",
     "dog cat man woman park telescope garden idea house"},
    {kName, "((Wd- or C-) & {Mp+} & S+) or O- or J-", "John Mary Alice"},
    {kPronounS, "(Wd- or C-) & S+", "he she they"},
    {kPronounO, "O- or J-", "him her them"},
    {kVerbT, "S- & O+ & {MV+} & {CO+}", "saw liked chased found"},
    {kVerbI, "S- & {MV+} & {CO+}", "ran slept laughed"},
    {kVerbThat, "S- & (TH+ or O+) & {CO+}", "thought said knew"},
    {kThat, "TH- & C+", "that"},
    {kPrep, "(Mp- or MV-) & J+", "in with near on"},
    {kAnd, "CO- & C+", "and"},
};
consteval bool grammar_in_class_order() {
  for (int c = 0; c < kClasses; ++c)
    if (kGrammar[c].cls != c) return false;
  return sizeof kGrammar / sizeof kGrammar[0] == kClasses;
}
static_assert(grammar_in_class_order(), "kGrammar: one entry per word class, in enum order");

// Words made up beyond each class's listed ones (open classes only), so that
// the dictionary, like 197.parser's, is a real search tree at the bottom of
// the arena, and as large: its nodes and spellings are most of the program's
// peak live objects (2002 Table 3, 2026 Fig. 2; docs/workloads.md, calibration).
constexpr int kMadeUpWords[kClasses] = {0, 0, 16800, 67200, 16800, 0, 0, 16800, 11200, 1680, 0, 0, 0};

// A dictionary entry (197.parser's Dict_node): a binary search tree by spelling.
struct DictNode {
  DictNode* left;
  DictNode* right;
  const char* spelling;
  const Exp* formula;  // shared by the word's class
  std::int32_t cls, index;
};

template <class Policy>
class Dictionary {
 public:
  explicit Dictionary(Policy& policy) : policy_(policy) {
    for (const ClassSpec& spec : kGrammar) {
      std::string_view text = spec.formula;
      formulas_[spec.cls] = parse_or(text);
    }
    // The same vocabulary for every seed: the dictionary is the program's input file.
    Rng rng(197);
    for (const ClassSpec& spec : kGrammar) {
      for (std::string_view words = spec.words; !words.empty();) {
        const std::size_t space = words.find(' ');
        if (!insert(words.substr(0, space), spec.cls)) throw std::logic_error("parser dictionary: a word listed twice");
        words = space == std::string_view::npos ? std::string_view() : words.substr(space + 1);
      }
      for (int made = 0; made < kMadeUpWords[spec.cls];) made += insert(made_up(rng), spec.cls);
    }
  }
  Dictionary(const Dictionary&) = delete;
  Dictionary& operator=(const Dictionary&) = delete;
  ~Dictionary() {
    // Newest first: the arena's pointer walks back to where it started.
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      DictNode* node = *it;
      char* spelling = const_cast<char*>(node->spelling);  // made just before its node
      policy_.forget_dictionary(node);
      policy_.forget_dictionary(spelling);
    }
    for (int c = kClasses; c-- > 0;) forget(formulas_[c]);
  }

  const DictNode* lookup(std::string_view spelling) const {
    for (const DictNode* node = root_; node != nullptr;) {
      const int order = spelling.compare(node->spelling);
      if (order == 0) return node;
      node = order < 0 ? node->left : node->right;
    }
    return nullptr;
  }
  const std::vector<const DictNode*>& entries(int cls) const { return entries_[cls]; }
  std::size_t size() const { return nodes_.size(); }

 private:
  // formula := term ("or" term)* ; term := factor ("&" factor)* ;
  // factor := "(" formula ")" | "{" formula "}" | LABEL [subscript] ("+" | "-")
  Exp* make(Exp::Type type) {
    auto* e = static_cast<Exp*>(policy_.dictionary(sizeof(Exp)));
    if (e == nullptr) throw std::bad_alloc();
    *e = Exp{type, 0, 0, false, 0, nullptr, nullptr};
    return e;
  }
  static void skip(std::string_view& t) {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  }
  Exp* parse_or(std::string_view& t) { return parse_list(t, Exp::any, "or", &Dictionary::parse_and); }
  Exp* parse_and(std::string_view& t) { return parse_list(t, Exp::all, "&", &Dictionary::parse_factor); }
  Exp* parse_list(std::string_view& t, Exp::Type type, std::string_view separator, Exp* (Dictionary::*operand)(std::string_view&)) {
    Exp* first = (this->*operand)(t);
    skip(t);
    if (!t.starts_with(separator)) return first;
    Exp* list = make(type);
    list->operands = first;
    Exp* last = first;
    while (skip(t), t.starts_with(separator)) {
      t.remove_prefix(separator.size());
      last = last->next = (this->*operand)(t);
    }
    return list;
  }
  Exp* parse_factor(std::string_view& t) {
    skip(t);
    if (t.empty()) throw std::logic_error("parser dictionary: formula ends early");
    if (t.front() == '(' || t.front() == '{') {
      const char close = t.front() == '(' ? ')' : '}';
      t.remove_prefix(1);
      Exp* inner = parse_or(t);
      skip(t);
      if (t.empty() || t.front() != close) throw std::logic_error("parser dictionary: unbalanced formula");
      t.remove_prefix(1);
      if (close == ')') return inner;
      Exp* opt = make(Exp::optional);
      opt->operands = inner;
      opt->cost = 1;  // leaving an optional part out costs a little
      return opt;
    }
    Exp* leaf = make(Exp::leaf);
    leaf->label = t.front();
    t.remove_prefix(1);
    leaf->subscript = '*';
    if (!t.empty() && t.front() >= 'a' && t.front() <= 'z') {
      leaf->subscript = t.front();
      t.remove_prefix(1);
    } else if (!t.empty() && t.front() >= 'A' && t.front() <= 'Z') {  // a two-letter label: MV, TH, Wd
      leaf->subscript = static_cast<char>(t.front() + ('a' - 'A'));
      t.remove_prefix(1);
    }
    if (t.empty() || (t.front() != '+' && t.front() != '-')) throw std::logic_error("parser dictionary: connector without direction");
    leaf->right = t.front() == '+';
    t.remove_prefix(1);
    return leaf;
  }

  // Gives a formula back, children first (the reverse of how it was made).
  void forget(Exp* e) {
    if (e == nullptr) return;
    std::vector<Exp*> operands;
    for (Exp* o = e->operands; o != nullptr; o = o->next) operands.push_back(o);
    for (auto it = operands.rbegin(); it != operands.rend(); ++it) forget(*it);
    policy_.forget_dictionary(e);
  }

  static std::string made_up(Rng& rng) {
    static constexpr const char* kSyllables[] = {"ba", "ko", "ri", "tes", "lun", "mar", "do", "pe", "vi", "sor",
                                                 "gal", "en", "tho", "qui", "zan", "el", "mu", "rok", "sa", "fen"};
    std::string word;
    for (std::uint64_t n = rng.between(2, 5); n > 0; --n) word += kSyllables[rng.below(std::size(kSyllables))];
    return word;
  }

  // false when the spelling is there already.
  bool insert(std::string_view spelling, WordClass cls) {
    DictNode** link = &root_;
    while (*link != nullptr) {
      const int order = spelling.compare((*link)->spelling);
      if (order == 0) return false;
      link = order < 0 ? &(*link)->left : &(*link)->right;
    }
    auto* text = static_cast<char*>(policy_.dictionary(spelling.size() + 1));
    auto* node = static_cast<DictNode*>(policy_.dictionary(sizeof(DictNode)));
    if (text == nullptr || node == nullptr) throw std::bad_alloc();
    std::memcpy(text, spelling.data(), spelling.size());
    text[spelling.size()] = '\0';
    *node = DictNode{nullptr, nullptr, text, formulas_[cls], cls, static_cast<std::int32_t>(entries_[cls].size())};
    *link = node;
    entries_[cls].push_back(node);
    nodes_.push_back(node);
    return true;
  }

  Policy& policy_;
  Exp* formulas_[kClasses] = {};
  DictNode* root_ = nullptr;
  std::vector<const DictNode*> entries_[kClasses];
  std::vector<DictNode*> nodes_;  // in the order they were made
};

// ---- sentences, generated from a small phrase grammar -------------------------

// Writes a sentence's text (the words, spaces between) into a buffer that
// is reused, as 197.parser reads each sentence into one line buffer.
template <class Policy>
class SentenceMaker {
 public:
  SentenceMaker(Rng& rng, const Dictionary<Policy>& dictionary) : rng_(rng), dictionary_(dictionary) {}

  void make(std::string& text) {
    words_.clear();
    sentence();
    // Now and then a word is dropped or two swapped: often no linkage at all.
    if (words_.size() > 3 && rng_.chance(0.12)) {
      const std::size_t i = rng_.below(words_.size() - 1);
      if (rng_.chance(0.5)) words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i));
      else std::swap(words_[i], words_[i + 1]);
    }
    text.clear();
    for (const DictNode* w : words_) {
      if (!text.empty()) text += ' ';
      text += w->spelling;
    }
  }

 private:
  void word(WordClass cls) {
    const auto& entries = dictionary_.entries(cls);
    words_.push_back(entries[rng_.below(entries.size())]);
  }
  bool room() const { return words_.size() < kMaxWords - 13; }

  void noun_phrase(bool subject, int depth) {
    const std::uint64_t r = rng_.below(10);
    if (r == 0) return word(kName);
    if (r == 1) return word(subject ? kPronounS : kPronounO);
    word(kDet);
    for (std::uint64_t a = rng_.below(4); a > 0 && rng_.chance(0.7); --a) word(kAdj);
    word(kNoun);
    if (depth < 3 && room() && rng_.chance(0.4)) prep_phrase(depth + 1);
  }
  void sentence() {
    clause(0);
    while (room() && rng_.chance(0.5)) {
      word(kAnd);
      clause(1);
    }
  }
  void prep_phrase(int depth) {
    word(kPrep);
    noun_phrase(false, depth);
  }
  void clause(int depth) {
    noun_phrase(true, depth);
    const std::uint64_t r = rng_.below(10);
    if (r < 5) {
      word(kVerbT);
      noun_phrase(false, depth);
    } else if (r < 8 || depth >= 3 || !room()) {
      word(kVerbI);
    } else {
      word(kVerbThat);
      word(kThat);
      clause(depth + 1);
      return;
    }
    while (room() && rng_.chance(0.45)) prep_phrase(depth + 1);
  }

  Rng& rng_;
  const Dictionary<Policy>& dictionary_;
  std::vector<const DictNode*> words_;
};

// ---- parsing one sentence -------------------------------------------------------

template <class Policy>
class SentenceParser {
 public:
  SentenceParser(Policy& policy, const Dictionary<Policy>& dictionary) : policy_(policy), dictionary_(dictionary) {}

  struct Result {
    std::uint64_t words = 0, linkages = 0;
    std::uint64_t disjuncts_built = 0, disjuncts_kept = 0, memo_entries = 0;
  };

  Result parse(std::string_view text, Checksum& sum) {
    Result result;
    split(text, sum);
    result.words = static_cast<std::uint64_t>(n_ - 1);
    next_id_ = 0;
    // An array of disjunct lists and one of formula copies, a slot per word.
    disjuncts_ = static_cast<Disjunct**>(allocate(sizeof(Disjunct*) * static_cast<std::size_t>(n_)));
    auto** expressions = static_cast<Exp**>(allocate(sizeof(Exp*) * static_cast<std::size_t>(n_)));
    for (int w = 0; w < n_; ++w) expressions[w] = copy(words_[w].entry->formula);
    for (int w = 0; w < n_; ++w) {
      disjuncts_[w] = build_disjuncts(expressions[w], w);
      for (const Disjunct* d = disjuncts_[w]; d != nullptr; d = d->next) ++result.disjuncts_built;
    }
    // The formula copies are dead once expanded (they sit below the
    // disjuncts: xalloc cannot reuse them until the sentence ends).
    for (int w = n_; w-- > 0;) forget(expressions[w]);
    policy_.release(expressions);

    prune();
    for (int w = 0; w < n_; ++w)
      for (const Disjunct* d = disjuncts_[w]; d != nullptr; d = d->next) ++result.disjuncts_kept;

    open_matcher();
    open_table();
    for (Disjunct* d = disjuncts_[0]; d != nullptr; d = d->next)
      if (d->left == nullptr) result.linkages += count(0, n_, d->right, nullptr);
    result.memo_entries = entries_;
    if (result.linkages != 0) extract_first(sum);
    close_table();
    close_matcher();

    // The end of the sentence: everything goes, most of it in reverse order.
    policy_.note_use();
    if constexpr (Policy::kClearsSentence) {
      policy_.end_sentence();
    } else {
      for (int w = n_; w-- > 0;) forget_disjuncts(disjuncts_[w]);
      policy_.release(disjuncts_);
      for (int w = n_; w-- > 0;) policy_.release(words_[w].spelling);
      policy_.release(words_);
    }
    disjuncts_ = nullptr;
    words_ = nullptr;
    return result;
  }

 private:
  template <class T = void>
  T* allocate(std::size_t n) {
    void* p = policy_.allocate(n);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }

  // ---- the sentence's words: copied out of the line, looked up ----

  struct SentenceWord {
    char* spelling;
    const DictNode* entry;
  };

  void split(std::string_view text, Checksum& sum) {
    n_ = 1;  // the wall
    for (std::size_t i = 0; i < text.size(); ++i) n_ += (i == 0 || text[i - 1] == ' ') && text[i] != ' ';
    words_ = allocate<SentenceWord>(sizeof(SentenceWord) * static_cast<std::size_t>(n_));
    int w = 0;
    auto add = [&](std::string_view spelling) {
      char* copy = allocate<char>(spelling.size() + 1);
      std::memcpy(copy, spelling.data(), spelling.size());
      copy[spelling.size()] = '\0';
      const DictNode* entry = dictionary_.lookup(spelling);
      if (entry == nullptr) throw std::runtime_error("parser: unknown word '" + std::string(spelling) + "'");
      words_[w++] = SentenceWord{copy, entry};
      sum.add(static_cast<std::uint64_t>(entry->cls) << 32 | static_cast<std::uint64_t>(entry->index));
    };
    add("LEFT-WALL");
    while (!text.empty()) {
      const std::size_t space = text.find(' ');
      if (space != 0) add(text.substr(0, space));
      text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    }
  }

  // ---- expressions into disjuncts ----

  Exp* copy(const Exp* e) {
    Exp* c = allocate<Exp>(sizeof(Exp));
    *c = *e;
    c->next = nullptr;
    Exp** link = &c->operands;
    for (const Exp* o = e->operands; o != nullptr; o = o->next) {
      *link = copy(o);
      link = &(*link)->next;
    }
    return c;
  }
  void forget(Exp* e) {
    for (Exp* o = e->operands; o != nullptr;) {
      Exp* next = o->next;
      forget(o);
      o = next;
    }
    policy_.release(e);
  }

  Clause* clause(TConnector* connectors, std::int64_t cost) {
    Clause* c = allocate<Clause>(sizeof(Clause));
    *c = Clause{nullptr, connectors, cost};
    return c;
  }
  TConnector* tconnector(const Exp* leaf, TConnector* next) {
    TConnector* t = allocate<TConnector>(sizeof(TConnector));
    *t = TConnector{next, leaf};
    return t;
  }
  void forget_clauses(Clause* c) {
    while (c != nullptr) {
      Clause* next = c->next;
      for (TConnector* t = c->connectors; t != nullptr;) {
        TConnector* tn = t->next;
        policy_.release(t);
        t = tn;
      }
      policy_.release(c);
      c = next;
    }
  }

  // The clauses of a formula: every way of choosing its connectors.
  Clause* expand(const Exp* e) {
    switch (e->type) {
      case Exp::leaf: return clause(tconnector(e, nullptr), 0);
      case Exp::optional: {
        Clause* inner = expand(e->operands);
        Clause* none = clause(nullptr, e->cost);
        none->next = inner;
        return none;
      }
      case Exp::any: {
        Clause* all = nullptr;
        Clause** tail = &all;
        for (const Exp* o = e->operands; o != nullptr; o = o->next) {
          *tail = expand(o);
          while (*tail != nullptr) tail = &(*tail)->next;
        }
        return all;
      }
      case Exp::all: {
        Clause* product = clause(nullptr, 0);
        for (const Exp* o = e->operands; o != nullptr; o = o->next) {
          Clause* part = expand(o);
          Clause* joined = nullptr;
          for (Clause* p = product; p != nullptr; p = p->next)
            for (Clause* q = part; q != nullptr; q = q->next) {
              Clause* c = clause(concatenate(p->connectors, q->connectors), p->cost + q->cost);
              c->next = joined;
              joined = c;
            }
          // The factors are dead once multiplied (not the most recent blocks).
          forget_clauses(part);
          forget_clauses(product);
          product = joined;
        }
        return product;
      }
    }
    return nullptr;
  }
  TConnector* concatenate(const TConnector* a, const TConnector* b) {
    if (a == nullptr) return copy_list(b);
    return tconnector(a->leaf, concatenate(a->next, b));
  }
  TConnector* copy_list(const TConnector* t) {
    return t == nullptr ? nullptr : tconnector(t->leaf, copy_list(t->next));
  }

  Connector* connector(const Exp* leaf, int w, Connector* next) {
    Connector* c = allocate<Connector>(sizeof(Connector));
    *c = Connector{next, next_id_++, leaf->label, leaf->subscript, leaf->right, 0, w, 0};
    return c;
  }

  Disjunct* build_disjuncts(const Exp* e, int w) {
    Clause* clauses = expand(e);
    Disjunct* list = nullptr;
    for (const Clause* c = clauses; c != nullptr; c = c->next) {
      // Both lists farthest first. '-' connectors: listed first = farther,
      // so they are appended in order; '+' connectors: listed first =
      // nearer, so prepending each puts the farthest first.
      Connector* left = nullptr;
      Connector* right = nullptr;
      Connector** left_tail = &left;
      for (const TConnector* t = c->connectors; t != nullptr; t = t->next) {
        if (t->leaf->right) {
          right = connector(t->leaf, w, right);
        } else {
          *left_tail = connector(t->leaf, w, nullptr);
          left_tail = &(*left_tail)->next;
        }
      }
      Disjunct* d = allocate<Disjunct>(sizeof(Disjunct));
      *d = Disjunct{list, left, right, static_cast<std::int16_t>(c->cost), static_cast<std::int16_t>(w), 0};
      list = d;
    }
    forget_clauses(clauses);
    return list;
  }

  void forget_connectors(Connector* c) {
    while (c != nullptr) {
      Connector* next = c->next;
      policy_.release(c);
      c = next;
    }
  }
  void forget_disjunct(Disjunct* d) {
    forget_connectors(d->right);
    forget_connectors(d->left);
    policy_.release(d);
  }
  void forget_disjuncts(Disjunct* d) {
    // Newest first: the list was built by prepending, so this is LIFO-ish.
    while (d != nullptr) {
      Disjunct* next = d->next;
      forget_disjunct(d);
      d = next;
    }
  }

  // ---- pruning: a connector nobody on its side can match dooms its disjunct ----

  // Labels on each side of each word, as bits: a connector whose label no
  // word on its side offers is dead (subscripts are left to count()).
  static std::uint32_t bit(const Connector* c) { return std::uint32_t{1} << ((c->label - 'A') & 31); }
  void gather_labels() {
    left_of_.assign(static_cast<std::size_t>(n_) + 1, 0);   // labels on left lists of words >= w
    right_of_.assign(static_cast<std::size_t>(n_) + 1, 0);  // labels on right lists of words < w
    for (int w = n_; w-- > 0;) {
      std::uint32_t bits = 0;
      for (const Disjunct* d = disjuncts_[w]; d != nullptr; d = d->next)
        for (const Connector* c = d->left; c != nullptr; c = c->next) bits |= bit(c);
      left_of_[static_cast<std::size_t>(w)] = left_of_[static_cast<std::size_t>(w) + 1] | bits;
    }
    for (int w = 0; w < n_; ++w) {
      std::uint32_t bits = 0;
      for (const Disjunct* d = disjuncts_[w]; d != nullptr; d = d->next)
        for (const Connector* c = d->right; c != nullptr; c = c->next) bits |= bit(c);
      right_of_[static_cast<std::size_t>(w) + 1] = right_of_[static_cast<std::size_t>(w)] | bits;
    }
  }
  bool matchable(const Connector* c, int w) const {
    const std::uint32_t offered = c->right ? left_of_[static_cast<std::size_t>(w) + 1] : right_of_[static_cast<std::size_t>(w)];
    return (offered & bit(c)) != 0;
  }
  bool viable(const Disjunct* d) const {
    for (const Connector* c = d->left; c != nullptr; c = c->next)
      if (!matchable(c, d->word)) return false;
    for (const Connector* c = d->right; c != nullptr; c = c->next)
      if (!matchable(c, d->word)) return false;
    // The wall has no left side; every other word needs a link.
    return d->word == 0 ? d->left == nullptr : (d->left != nullptr || d->right != nullptr);
  }
  void prune() {
    for (bool changed = true; changed;) {
      changed = false;
      gather_labels();
      for (int w = 0; w < n_; ++w) {
        for (Disjunct** link = &disjuncts_[w]; *link != nullptr;) {
          Disjunct* d = *link;
          if (viable(d)) {
            link = &d->next;
            continue;
          }
          *link = d->next;
          forget_disjunct(d);  // freed in the middle of the sentence's blocks
          changed = true;
        }
      }
    }
  }

  // ---- counting (Sleator and Temperley's recursion, memoized) ----

  struct Entry {
    Entry* next;
    std::int16_t lw, rw;
    std::uint32_t le, re;  // connector ids + 1 (0: none)
    std::uint64_t count;
  };
  static std::uint32_t key(const Connector* c) { return c == nullptr ? 0 : c->id + 1; }

  void open_table() {
    // A power of two above a few entries per word pair (count.c's init_table).
    buckets_ = 1024;
    while (buckets_ < static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_) * 4) buckets_ *= 2;
    table_ = allocate<Entry*>(sizeof(Entry*) * buckets_);
    std::fill(table_, table_ + buckets_, nullptr);
    entries_ = 0;
  }
  void close_table() {
    if constexpr (!Policy::kClearsSentence) {
      // Bucket by bucket, as count.c frees it: not the order they were made.
      for (std::size_t b = 0; b < buckets_; ++b)
        for (Entry* e = table_[b]; e != nullptr;) {
          Entry* next = e->next;
          policy_.release(e);
          e = next;
        }
      policy_.release(table_);
    }
    table_ = nullptr;
  }
  std::size_t bucket(int lw, int rw, std::uint32_t le, std::uint32_t re) const {
    std::uint64_t h = static_cast<std::uint64_t>(lw) * 0x9E3779B97F4A7C15ULL;
    h = (h ^ static_cast<std::uint64_t>(rw)) * 0xC2B2AE3D27D4EB4FULL;
    h = (h ^ le) * 0x165667B19E3779F9ULL;
    h = (h ^ re) * 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(h >> 40) & (buckets_ - 1);
  }

  std::uint64_t count(int lw, int rw, const Connector* le, const Connector* re) {
    if (lw + 1 == rw) return le == nullptr && re == nullptr ? 1 : 0;
    if (le == nullptr && re == nullptr) return 0;  // the words between would be cut off
    const std::uint32_t lk = key(le), rk = key(re);
    const std::size_t b = bucket(lw, rw, lk, rk);
    for (const Entry* e = table_[b]; e != nullptr; e = e->next)
      if (e->lw == lw && e->rw == rw && e->le == lk && e->re == rk) return e->count;
    std::uint64_t total = 0;  // wraps: the checksum takes it mod 2^64
    for (int w = lw + 1; w < rw; ++w) {
      // Only the disjuncts that can link to le or re add anything.
      MatchNode* candidates = match_list(w, le, re);
      for (const MatchNode* m = candidates; m != nullptr; m = m->next) {
        const Disjunct* d = m->disjunct;
        const bool left_match = le != nullptr && d->left != nullptr && match(le, d->left);
        const bool right_match = re != nullptr && d->right != nullptr && match(d->right, re);
        const std::uint64_t left_count = left_match ? count(lw, w, le->next, d->left->next) : 0;
        const std::uint64_t right_count = right_match ? count(w, rw, d->right->next, re->next) : 0;
        total += left_count * right_count;
        if (left_count != 0) total += left_count * count(w, rw, d->right, re);
        if (right_count != 0 && le == nullptr) total += right_count * count(lw, w, le, d->left);
      }
      put_match_list(candidates);
    }
    Entry* e = allocate<Entry>(sizeof(Entry));
    *e = Entry{table_[b], static_cast<std::int16_t>(lw), static_cast<std::int16_t>(rw), lk, rk, total};
    table_[b] = e;
    ++entries_;
    return total;
  }

  // ---- the fast matcher (link grammar's fast-match.c) ----
  // Per word and side, the disjuncts by the label of their first (farthest)
  // connector; count() asks for a list of the disjuncts of a word that can
  // link to le or re. List nodes are recycled through a free list, as
  // 197.parser's are, and go back to the allocator with the sentence.

  struct MatchNode {
    MatchNode* next;
    Disjunct* disjunct;
  };
  static constexpr std::size_t kLabelBuckets = 32;
  static std::size_t label_bucket(const Connector* c) { return static_cast<std::size_t>(c->label - 'A') & (kLabelBuckets - 1); }

  MatchNode* match_node(Disjunct* d, MatchNode* next) {
    MatchNode* m = spare_nodes_;
    if (m != nullptr) spare_nodes_ = m->next;
    else m = allocate<MatchNode>(sizeof(MatchNode));
    *m = MatchNode{next, d};
    return m;
  }
  void put_match_list(MatchNode* m) {
    while (m != nullptr) {
      MatchNode* next = m->next;
      m->next = spare_nodes_;
      spare_nodes_ = m;
      m = next;
    }
  }

  void open_matcher() {
    generation_ = 0;
    tables_ = allocate<MatchNode**>(sizeof(MatchNode**) * 2 * static_cast<std::size_t>(n_));
    for (int w = 0; w < n_; ++w)
      for (int side = 0; side < 2; ++side) {
        auto** table = allocate<MatchNode*>(sizeof(MatchNode*) * kLabelBuckets);
        std::fill(table, table + kLabelBuckets, nullptr);
        for (Disjunct* d = disjuncts_[w]; d != nullptr; d = d->next) {
          const Connector* c = side == 0 ? d->left : d->right;
          if (c != nullptr) table[label_bucket(c)] = match_node(d, table[label_bucket(c)]);
        }
        tables_[2 * w + side] = table;
      }
  }
  void close_matcher() {
    if constexpr (!Policy::kClearsSentence) {
      for (int t = 2 * n_; t-- > 0;) {
        for (std::size_t b = 0; b < kLabelBuckets; ++b) put_match_list(tables_[t][b]);
        policy_.release(tables_[t]);
      }
      policy_.release(tables_);
      while (spare_nodes_ != nullptr) {
        MatchNode* next = spare_nodes_->next;
        policy_.release(spare_nodes_);
        spare_nodes_ = next;
      }
    }
    tables_ = nullptr;
    spare_nodes_ = nullptr;
  }

  MatchNode* match_list(int w, const Connector* le, const Connector* re) {
    ++generation_;
    MatchNode* list = nullptr;
    if (le != nullptr)
      for (MatchNode* m = tables_[2 * w][label_bucket(le)]; m != nullptr; m = m->next)
        if (match(le, m->disjunct->left)) {
          m->disjunct->mark = generation_;
          list = match_node(m->disjunct, list);
        }
    if (re != nullptr)
      for (MatchNode* m = tables_[2 * w + 1][label_bucket(re)]; m != nullptr; m = m->next)
        if (m->disjunct->mark != generation_ && match(m->disjunct->right, re)) list = match_node(m->disjunct, list);
    return list;
  }

  // ---- the first linkage: follow the recursion to its first nonzero choice ----

  struct Link {
    Link* next;
    std::int16_t lw, rw;
    char label, subscript;
  };

  void extract_first(Checksum& sum) {
    Link* links = nullptr;
    for (Disjunct* d = disjuncts_[0]; d != nullptr; d = d->next)
      if (d->left == nullptr && count(0, n_, d->right, nullptr) != 0) {
        follow(0, n_, d->right, nullptr, links);
        break;
      }
    // Hash the links (in the order found), then free them, newest first.
    std::uint64_t n = 0;
    for (const Link* l = links; l != nullptr; l = l->next, ++n) {
      sum.add(static_cast<std::uint64_t>(l->lw) << 32 | static_cast<std::uint64_t>(l->rw));
      sum.add(static_cast<std::uint64_t>(static_cast<unsigned char>(l->label)) << 8 | static_cast<unsigned char>(l->subscript));
    }
    sum.add(n);
    while (links != nullptr) {
      Link* next = links->next;
      policy_.release(links);
      links = next;
    }
  }
  void link(int lw, int rw, const Connector* a, Link*& links) {
    Link* l = allocate<Link>(sizeof(Link));
    *l = Link{links, static_cast<std::int16_t>(lw), static_cast<std::int16_t>(rw), a->label, a->subscript};
    links = l;
  }
  // Chooses, in count()'s order, the first alternative with linkages, and
  // records its links.
  void follow(int lw, int rw, const Connector* le, const Connector* re, Link*& links) {
    if (lw + 1 == rw) return;
    for (int w = lw + 1; w < rw; ++w) {
      for (const Disjunct* d = disjuncts_[w]; d != nullptr; d = d->next) {
        const bool left_match = le != nullptr && d->left != nullptr && match(le, d->left);
        const bool right_match = re != nullptr && d->right != nullptr && match(d->right, re);
        const std::uint64_t left_count = left_match ? count(lw, w, le->next, d->left->next) : 0;
        const std::uint64_t right_count = right_match ? count(w, rw, d->right->next, re->next) : 0;
        if (left_count != 0 && right_count != 0) {
          link(lw, w, le, links);
          link(w, rw, re, links);
          follow(lw, w, le->next, d->left->next, links);
          follow(w, rw, d->right->next, re->next, links);
          return;
        }
        if (left_count != 0 && count(w, rw, d->right, re) != 0) {
          link(lw, w, le, links);
          follow(lw, w, le->next, d->left->next, links);
          follow(w, rw, d->right, re, links);
          return;
        }
        if (right_count != 0 && le == nullptr && count(lw, w, le, d->left) != 0) {
          link(w, rw, re, links);
          follow(w, rw, d->right->next, re->next, links);
          follow(lw, w, le, d->left, links);
          return;
        }
      }
    }
  }

  Policy& policy_;
  const Dictionary<Policy>& dictionary_;
  int n_ = 0;
  SentenceWord* words_ = nullptr;
  std::uint32_t next_id_ = 0;
  Disjunct** disjuncts_ = nullptr;
  std::vector<std::uint32_t> left_of_, right_of_;  // pruning's label sets (reused, not per sentence)
  Entry** table_ = nullptr;
  std::size_t buckets_ = 0;
  MatchNode*** tables_ = nullptr;  // [2w]: by first left connector, [2w+1]: by first right one
  MatchNode* spare_nodes_ = nullptr;
  std::uint32_t generation_ = 0;
  std::uint64_t entries_ = 0;
};

template <class Policy>
std::uint64_t run(const Options& options) {
  Rng rng(options.seed);
  Checksum sum;
  Policy policy;
  std::uint64_t sentences = 0, words = 0, parsed = 0, linkages = 0, built = 0, kept = 0, entries = 0, dictionary_words = 0;
  {
    const Dictionary<Policy> dictionary(policy);
    SentenceMaker<Policy> maker(rng, dictionary);
    SentenceParser<Policy> parser(policy, dictionary);
    std::string line;
    dictionary_words = dictionary.size();
    for (std::uint64_t s = 0; s < options.scale * kSentencesPerScale; ++s) {
      maker.make(line);
      const auto result = parser.parse(line, sum);
      sum.add(result.words);
      sum.add(result.linkages);
      sum.add(result.disjuncts_built);
      sum.add(result.disjuncts_kept);
      ++sentences;
      words += result.words;
      parsed += result.linkages != 0;
      linkages += result.linkages;
      built += result.disjuncts_built;
      kept += result.disjuncts_kept;
      entries += result.memo_entries;
    }
  }
  std::printf("parser: %llu dictionary words, %llu sentences, %llu words, %llu with a linkage, %llu disjuncts built, %llu kept, "
              "%llu memo entries\n",
              static_cast<unsigned long long>(dictionary_words), static_cast<unsigned long long>(sentences), static_cast<unsigned long long>(words),
              static_cast<unsigned long long>(parsed), static_cast<unsigned long long>(built),
              static_cast<unsigned long long>(kept), static_cast<unsigned long long>(entries));
  (void)linkages;
  if (policy.high_water != 0)
    std::printf("parser: the xalloc arena held at most %zu of its %zu bytes\n", policy.high_water, kArenaBytes);
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<XallocPolicy, MallocPolicy, ReapPolicy>(
      argc, argv, "parser", []<class Policy>(const Options& o) { return run<Policy>(o); });
}
