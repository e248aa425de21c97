// Producer-consumer in C++ (issue 33): producers build messages of a
// std::string and a std::vector and move them through bounded queues
// (std::mutex, std::condition_variable, std::deque) to consumers, which check
// and destroy them. So nearly every free is another thread's, and the
// allocator sees what a C++ server sees: strings of varied length (short ones
// in the string's own buffer, longer ones on the heap), vectors grown by
// push_back (a realloc-like ladder of sizes), the queues' deque blocks.
//
// Each producer sends to the consumers in turn; a queue holds at most
// --capacity messages, and a producer waits while its next queue is full.
// The messages depend only on the seed, so the checksum (over every byte
// consumed) is the same under every allocator. Prints the line of the C
// programs (bench_common.h's bench_print) and exits 1 on a wrong message.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::uint64_t messages = 4000000;
  std::uint64_t producers = 4;
  std::uint64_t consumers = 4;
  std::uint64_t capacity = 256;
  std::uint64_t seed = 1;
  bool verify = false;  // accepted for the smoke tests' sake: every message is checked anyway
  const char* expect_malloc_from = nullptr;
};

[[noreturn]] void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--messages N] [--producers N] [--consumers N] [--capacity N] [--seed N] [--verify] "
               "[--expect-malloc-from SUBSTRING]\n",
               prog);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  struct {
    const char* name;
    std::uint64_t* value;
  } numbers[] = {{"--messages", &o.messages},
                 {"--producers", &o.producers},
                 {"--consumers", &o.consumers},
                 {"--capacity", &o.capacity},
                 {"--seed", &o.seed}};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--verify") == 0) {
      o.verify = true;
      continue;
    }
    if (std::strcmp(argv[i], "--expect-malloc-from") == 0 && i + 1 < argc) {
      o.expect_malloc_from = argv[++i];
      continue;
    }
    bool known = false;
    for (auto& n : numbers) {
      if (std::strcmp(argv[i], n.name) != 0) continue;
      char* end = nullptr;
      if (i + 1 >= argc || (*n.value = std::strtoull(argv[++i], &end, 10), *end != '\0') || *n.value == 0) {
        std::fprintf(stderr, "%s: %s wants a positive integer\n", argv[0], n.name);
        std::exit(2);
      }
      known = true;
    }
    if (!known) {
      std::fprintf(stderr, "%s: unknown option '%s'\n", argv[0], argv[i]);
      usage(argv[0]);
    }
  }
  return o;
}

const char* malloc_origin() {
  Dl_info info;
  void* (*volatile fn)(std::size_t) = std::malloc;
  if (dladdr(reinterpret_cast<void*>(fn), &info) == 0 || info.dli_fname == nullptr) return "unknown";
  return info.dli_fname;
}

std::uint64_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) break;
  std::fclose(f);
  return kib * 1024;
}

std::uint64_t next_random(std::uint64_t& state) {  // splitmix64
  std::uint64_t z = (state += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

struct Message {
  std::uint64_t seq = 0;
  std::string text;
  std::vector<std::uint32_t> values;
};

// Message `seq`'s shape, from the seed alone: a string of 4-300 characters
// and the number (skewed short, as names and keys are), a vector of 0-96
// values.
struct Shape {
  std::size_t length, count;
};
Shape shape_of(std::uint64_t seed, std::uint64_t seq) {
  std::uint64_t r = seed ^ (seq * 0xd1342543de82ef95);
  std::uint64_t a = next_random(r), b = next_random(r);
  return {4 + (a % 4 == 0 ? a % 297 : a % 40), static_cast<std::size_t>(b % 97)};
}
char letter_of(std::uint64_t seq) { return static_cast<char>('a' + seq % 26); }

Message make_message(std::uint64_t seed, std::uint64_t seq) {
  Shape s = shape_of(seed, seq);
  Message m;
  m.seq = seq;
  m.text.assign(s.length, letter_of(seq));
  m.text += std::to_string(seq);  // grows the string: a second allocation for some
  for (std::size_t i = 0; i < s.count; ++i) m.values.push_back(static_cast<std::uint32_t>(seq + i));
  return m;
}

// What a consumer adds up (without allocating); false when the message is
// not what make_message made.
bool consume(const Message& m, std::uint64_t seed, std::uint64_t& checksum) {
  Shape s = shape_of(seed, m.seq);
  char digits[24];
  int n = std::snprintf(digits, sizeof digits, "%llu", static_cast<unsigned long long>(m.seq));
  if (m.text.size() != s.length + static_cast<std::size_t>(n) || m.values.size() != s.count) return false;
  for (std::size_t i = 0; i < s.length; ++i)
    if (m.text[i] != letter_of(m.seq)) return false;
  if (std::memcmp(m.text.data() + s.length, digits, static_cast<std::size_t>(n)) != 0) return false;
  for (std::size_t i = 0; i < s.count; ++i)
    if (m.values[i] != static_cast<std::uint32_t>(m.seq + i)) return false;
  checksum += m.seq + m.text.size() * 31 + m.values.size() * 17;
  return true;
}

class Queue {
 public:
  explicit Queue(std::size_t capacity) : capacity_(capacity) {}
  void push(Message&& m) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [this] { return items_.size() < capacity_; });
    items_.push_back(std::move(m));
    lock.unlock();
    not_empty_.notify_one();
  }
  // false once the queue is closed and empty.
  bool pop(Message& m) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [this] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    m = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return true;
  }
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    not_empty_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Message> items_;
  std::size_t capacity_;
  bool closed_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.expect_malloc_from && !std::strstr(malloc_origin(), o.expect_malloc_from)) {
    std::fprintf(stderr, "bench: FAILED: malloc comes from '%s', expected '%s'\n", malloc_origin(),
                 o.expect_malloc_from);
    return 1;
  }
  std::vector<std::unique_ptr<Queue>> queues;
  for (std::uint64_t i = 0; i < o.consumers; ++i) queues.push_back(std::make_unique<Queue>(o.capacity));
  std::atomic<std::uint64_t> checksum{0}, consumed{0};
  std::atomic<bool> wrong{false};

  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> consumers, producers;
  for (std::uint64_t c = 0; c < o.consumers; ++c)
    consumers.emplace_back([&, c] {
      std::uint64_t sum = 0, count = 0;
      Message m;
      while (queues[c]->pop(m)) {
        if (!consume(m, o.seed, sum)) wrong = true;
        m = Message{};  // destroyed here, by the consumer
        ++count;
      }
      checksum += sum;
      consumed += count;
    });
  for (std::uint64_t p = 0; p < o.producers; ++p)
    producers.emplace_back([&, p] {
      // Producer p sends messages p, p + producers, ... each to the next queue.
      std::uint64_t turn = p;
      for (std::uint64_t seq = p; seq < o.messages; seq += o.producers)
        queues[turn++ % o.consumers]->push(make_message(o.seed, seq));
    });
  for (auto& t : producers) t.join();
  for (auto& q : queues) q->close();
  for (auto& t : consumers) t.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (wrong || consumed != o.messages) {
    std::fprintf(stderr, "prodcons_cpp: FAILED: %s\n", wrong ? "a message arrived changed" : "messages lost");
    return 1;
  }
  std::printf(
      "workload=prodcons_cpp ops=%llu elapsed_s=%.6f peak_live_bytes=0 rss_start_bytes=0 rss_peak_bytes=%llu "
      "checksum=%016llx malloc_from=%s\n",
      static_cast<unsigned long long>(o.messages), elapsed, static_cast<unsigned long long>(peak_rss_bytes()),
      static_cast<unsigned long long>(checksum.load()), malloc_origin());
  return 0;
}
