// text — string-heavy text processing in the manner of 253.perlbmk (a Perl
// script splitting and rewriting mail: the Vam paper's and the reaps paper's
// general-purpose benchmark with many small strings of varied sizes).
//
// Each unit of scale generates a batch of mail-like messages (headers, body
// lines of Zipf-distributed words, numbers, addresses) and, like a Perl
// script, works on it with strings that are heap objects of their own:
//   - splits every line into tokens (a string each), counts words in a hash
//     (chained entries, each with its own key string);
//   - rewrites every line with regex-like substitutions (numbers -> <num>,
//     addresses masked, words of a pattern upper-cased, runs of spaces
//     squeezed), appending to a string that grows with realloc as Perl's
//     SvGROW does;
//   - joins the tokens with commas, splits the joined line back, and checks
//     it matches;
//   - sorts the distinct words by count and formats a report line for each.
// A summary hash of the most frequent words lives across batches. The
// checksum digests the rewritten text and the reports.
//
// Mode: only naive is meaningful (a general-purpose program).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Mode;
using strata::workload::Options;
using strata::workload::Rng;

void* xmalloc(std::size_t n) {
  void* p = std::malloc(n);
  return p != nullptr ? p : throw std::bad_alloc();
}
void* xrealloc(void* old, std::size_t n) {
  void* p = std::realloc(old, n);
  return p != nullptr ? p : throw std::bad_alloc();
}

// A string with a buffer of its own that grows by realloc (capacity +50%).
class Str {
 public:
  Str() = default;
  explicit Str(std::string_view s) { append(s); }
  Str(const Str& o) : Str(o.view()) {}
  Str(Str&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), len_(std::exchange(o.len_, 0)), cap_(std::exchange(o.cap_, 0)) {}
  Str& operator=(Str o) noexcept {
    std::swap(data_, o.data_);
    std::swap(len_, o.len_);
    std::swap(cap_, o.cap_);
    return *this;
  }
  ~Str() { std::free(data_); }

  void append(std::string_view s) {
    reserve(len_ + s.size());
    std::memcpy(data_ + len_, s.data(), s.size());
    len_ += s.size();
  }
  void push(char c) { append(std::string_view(&c, 1)); }
  std::string_view view() const { return {data_ == nullptr ? "" : data_, len_}; }
  std::size_t size() const { return len_; }

 private:
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    const std::size_t grown = std::max(n, cap_ + cap_ / 2 + 8);
    data_ = static_cast<char*>(xrealloc(data_, grown));
    cap_ = grown;
  }
  char* data_ = nullptr;
  std::size_t len_ = 0, cap_ = 0;
};

// A growable array (Perl's AV): one malloc'd block, realloc to grow.
template <class T>
class Array {
 public:
  Array() = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() { clear(); std::free(items_); }
  void push(T value) {
    if (size_ == cap_) {
      const std::size_t grown = cap_ == 0 ? 4 : cap_ * 2;
      T* bigger = static_cast<T*>(xmalloc(grown * sizeof(T)));
      for (std::size_t i = 0; i < size_; ++i) {
        new (&bigger[i]) T(std::move(items_[i]));
        items_[i].~T();
      }
      std::free(items_);
      items_ = bigger;
      cap_ = grown;
    }
    new (&items_[size_++]) T(std::move(value));
  }
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) items_[i].~T();
    size_ = 0;
  }
  T& operator[](std::size_t i) { return items_[i]; }
  const T& operator[](std::size_t i) const { return items_[i]; }
  std::size_t size() const { return size_; }
  T* begin() { return items_; }
  T* end() { return items_ + size_; }

 private:
  T* items_ = nullptr;
  std::size_t size_ = 0, cap_ = 0;
};

std::uint32_t hash_of(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// Word -> count (Perl's HV): chained entries, each with its own key string.
class Hash {
  struct Entry {
    Entry* next;
    std::uint32_t hash;
    std::uint64_t count;
    Str key;
  };

 public:
  Hash() : buckets_(static_cast<Entry**>(xmalloc(8 * sizeof(Entry*)))), mask_(7) {
    std::fill(buckets_, buckets_ + 8, nullptr);
  }
  Hash(const Hash&) = delete;
  Hash& operator=(const Hash&) = delete;
  ~Hash() {
    for (std::size_t b = 0; b <= mask_; ++b) {
      for (Entry* e = buckets_[b]; e != nullptr;) {
        Entry* next = e->next;
        e->~Entry();
        std::free(e);
        e = next;
      }
    }
    std::free(buckets_);
  }

  void add(std::string_view key, std::uint64_t n) {
    const std::uint32_t h = hash_of(key);
    for (Entry* e = buckets_[h & mask_]; e != nullptr; e = e->next) {
      if (e->hash == h && e->key.view() == key) {
        e->count += n;
        return;
      }
    }
    auto* e = new (xmalloc(sizeof(Entry))) Entry{buckets_[h & mask_], h, n, Str(key)};
    buckets_[h & mask_] = e;
    if (++size_ > mask_) grow();
  }

  // Removes entries whose count is below `min` (delete $h{$k}).
  void prune(std::uint64_t min) {
    for (std::size_t b = 0; b <= mask_; ++b) {
      Entry** link = &buckets_[b];
      while (Entry* e = *link) {
        if (e->count < min) {
          *link = e->next;
          e->~Entry();
          std::free(e);
          --size_;
        } else {
          link = &e->next;
        }
      }
    }
  }

  template <class F>
  void each(F&& f) const {
    for (std::size_t b = 0; b <= mask_; ++b)
      for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) f(e->key.view(), e->count);
  }
  std::size_t size() const { return size_; }

 private:
  void grow() {
    const std::size_t n = (mask_ + 1) * 2;
    auto** bigger = static_cast<Entry**>(xmalloc(n * sizeof(Entry*)));
    std::fill(bigger, bigger + n, nullptr);
    for (std::size_t b = 0; b <= mask_; ++b) {
      for (Entry* e = buckets_[b]; e != nullptr;) {
        Entry* next = e->next;
        e->next = bigger[e->hash & (n - 1)];
        bigger[e->hash & (n - 1)] = e;
        e = next;
      }
    }
    std::free(buckets_);
    buckets_ = bigger;
    mask_ = n - 1;
  }

  Entry** buckets_;
  std::size_t mask_;
  std::size_t size_ = 0;
};

// ------------------------------------------------------ the generated mail --

class Vocabulary {
 public:
  explicit Vocabulary(Rng& rng) {
    static const char* const kSyllables[] = {"an", "ber", "co", "da", "el", "fi", "gor", "ha", "in", "jo",
                                             "ka", "lu", "me", "no", "ori", "pa", "qu", "ra", "st", "th",
                                             "un", "ve", "wi", "xe", "yo", "ze", "ing", "er", "the", "ck"};
    for (int i = 0; i < kWords; ++i) {
      Str w;
      const std::uint64_t syllables = 1 + rng.below(3) + (rng.chance(0.1) ? rng.below(4) : 0);
      for (std::uint64_t s = 0; s < syllables; ++s) w.append(kSyllables[rng.below(30)]);
      words_.push(std::move(w));
    }
  }
  // Zipf-like: low indices far more often.
  std::string_view pick(Rng& rng) const {
    const double u = rng.unit();
    const auto i = static_cast<std::size_t>(static_cast<double>(kWords) * u * u * u);
    return words_[std::min<std::size_t>(i, kWords - 1)].view();
  }

 private:
  static constexpr int kWords = 3000;
  Array<Str> words_;
};

// One message: header lines, then body lines.
void generate_message(const Vocabulary& vocab, Rng& rng, Array<Str>& lines) {
  char buffer[128];
  const std::string_view first = vocab.pick(rng), last = vocab.pick(rng);
  std::snprintf(buffer, sizeof buffer, "From: %.*s.%.*s@example%u.org", static_cast<int>(first.size()), first.data(),
                static_cast<int>(last.size()), last.data(), static_cast<unsigned>(rng.below(90)));
  lines.push(Str(buffer));
  Str subject("Subject: ");
  for (std::uint64_t i = rng.between(2, 8); i > 0; --i) {
    subject.append(vocab.pick(rng));
    subject.push(' ');
  }
  lines.push(std::move(subject));
  for (std::uint64_t l = rng.between(5, 40); l > 0; --l) {
    Str line;
    for (std::uint64_t w = rng.between(1, 16); w > 0; --w) {
      const double kind = rng.unit();
      if (kind < 0.08) {
        std::snprintf(buffer, sizeof buffer, "%llu", static_cast<unsigned long long>(rng.below(1000000)));
        line.append(buffer);
      } else if (kind < 0.1) {
        line.append(vocab.pick(rng));
        line.push('@');
        line.append(vocab.pick(rng));
        line.append(".com");
      } else {
        line.append(vocab.pick(rng));
      }
      line.append(rng.chance(0.1) ? "  " : rng.chance(0.1) ? ", " : " ");
    }
    lines.push(std::move(line));
  }
}

// ---------------------------------------------------------- the processing --

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '@' || c == '.'; }

// split /[^\w@.]+/
void split_words(std::string_view line, Array<Str>& out) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && !is_word_char(line[i])) ++i;
    std::size_t j = i;
    while (j < line.size() && is_word_char(line[j])) ++j;
    if (j > i) out.push(Str(line.substr(i, j - i)));
    i = j;
  }
}

// s/\d+/<num>/g; s/\S+@\S+/<addr>/g; s/\b(\w*th\w*)\b/\U$1/g; s/ +/ /g
Str rewrite(std::string_view line) {
  Str out;
  Array<Str> words;
  split_words(line, words);
  for (std::size_t k = 0; k < words.size(); ++k) {
    std::string_view w = words[k].view();
    if (k > 0) out.push(' ');
    if (std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      out.append("<num>");
    } else if (w.find('@') != std::string_view::npos) {
      out.append("<addr:");
      out.append(w.substr(w.find('@') + 1));
      out.push('>');
    } else if (w.find("th") != std::string_view::npos) {
      Str upper(w);
      std::string_view v = upper.view();
      for (char c : v) out.push(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    } else {
      out.append(w);
    }
  }
  return out;
}

// join(",", @words) then split(/,/) back: must give the same words.
bool join_split_roundtrip(const Array<Str>& words, Checksum& sum) {
  Str joined;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) joined.push(',');
    joined.append(words[i].view());
  }
  Array<Str> parts;
  std::string_view rest = joined.view();
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    parts.push(Str(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  sum.add(joined.size());
  if (parts.size() != words.size()) return false;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (parts[i].view() != words[i].view()) return false;
  return true;
}

// The batch's distinct words by count (descending), then alphabetically,
// as formatted report lines.
void report(const Hash& counts, Array<Str>& lines) {
  struct Row {
    Str word;
    std::uint64_t count;
  };
  Array<Row> rows;
  counts.each([&](std::string_view w, std::uint64_t c) { rows.push(Row{Str(w), c}); });
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.count != b.count ? a.count > b.count : a.word.view() < b.word.view();
  });
  char buffer[160];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string_view w = rows[i].word.view();
    const int width = static_cast<int>(std::min<std::size_t>(w.size(), 100));
    std::snprintf(buffer, sizeof buffer, "%5zu %-24.*s %8llu", i + 1, width, w.data(),
                  static_cast<unsigned long long>(rows[i].count));
    lines.push(Str(buffer));
  }
}

constexpr int kMessagesPerBatch = 60;

std::uint64_t run(const Options& o) {
  Rng rng(o.seed);
  Checksum sum;
  const Vocabulary vocab(rng);
  Hash summary;  // lives across batches
  std::uint64_t lines_total = 0, words_total = 0;
  for (std::uint64_t batch = 0; batch < o.scale; ++batch) {
    Array<Str> lines;
    for (int m = 0; m < kMessagesPerBatch; ++m) generate_message(vocab, rng, lines);
    lines_total += lines.size();

    Hash counts;
    Array<Str> rewritten;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      Array<Str> words;
      split_words(lines[i].view(), words);
      words_total += words.size();
      for (std::size_t k = 0; k < words.size(); ++k) counts.add(words[k].view(), 1);
      if (!join_split_roundtrip(words, sum)) {
        std::fprintf(stderr, "strata-wl-text: join/split mismatch in batch %llu\n",
                     static_cast<unsigned long long>(batch));
        std::exit(1);
      }
      rewritten.push(rewrite(lines[i].view()));
      if (i % 3 == 0) lines[i] = Str();  // some input lines die early
    }
    for (std::size_t i = 0; i < rewritten.size(); ++i) sum.add(rewritten[i].view());

    Array<Str> report_lines;
    report(counts, report_lines);
    for (std::size_t i = 0; i < report_lines.size(); ++i) sum.add(report_lines[i].view());
    counts.each([&](std::string_view w, std::uint64_t c) {
      if (c >= 3) summary.add(w, c);
    });
    summary.prune(batch + 1);  // forget the words that are not frequent across batches
  }
  // The summary, in a deterministic order.
  Array<Str> final_report;
  report(summary, final_report);
  for (std::size_t i = 0; i < final_report.size(); ++i) sum.add(final_report[i].view());
  std::printf("text: %llu batches, %llu lines, %llu words, %zu words in the summary\n",
              static_cast<unsigned long long>(o.scale), static_cast<unsigned long long>(lines_total),
              static_cast<unsigned long long>(words_total), summary.size());
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) { return strata::workload::main(argc, argv, "text", {Mode::naive}, run); }
