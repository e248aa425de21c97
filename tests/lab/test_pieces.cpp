// Unit tests of the lab shims' C++ pieces: the live-object table, the trace
// varints, environment parsing, the profile reader and size sampler, and the
// malloc-free file writer, the heap meter's readings.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <unistd.h>

#include "env.hpp"
#include "strata/platform.hpp"
#include "file_writer.hpp"
#include "heap_meter.hpp"
#include "live_table.hpp"
#include "profile_reader.hpp"
#include "trace_format.hpp"

namespace strata::lab {
namespace {

TEST(LiveTable, AgreesWithAModelUnderRandomInsertAndTake) {
  static LiveTable<std::uint64_t> table;  // large: keep it off the stack
  std::map<std::uintptr_t, std::uint64_t> model;
  std::mt19937_64 random(7);
  for (int step = 0; step < 200000; ++step) {
    // Keys shaped like 16-byte aligned heap addresses, clustered so probe runs collide.
    const std::uintptr_t key = 0x10000 + 16 * (random() % 5000);
    const void* p = reinterpret_cast<const void*>(key);
    std::uint64_t got = 0;
    if (model.count(key) == 0) {
      ASSERT_FALSE(table.take(p, &got));
      ASSERT_EQ(table.insert(p, step, &got), LiveTable<std::uint64_t>::Insert::kAdded);
      model[key] = static_cast<std::uint64_t>(step);
    } else {
      ASSERT_TRUE(table.take(p, &got));
      ASSERT_EQ(got, model[key]);
      model.erase(key);
    }
  }
  EXPECT_EQ(table.size(), model.size());
  for (const auto& [key, value] : model) {
    std::uint64_t got = 0;
    ASSERT_TRUE(table.take(reinterpret_cast<const void*>(key), &got));
    EXPECT_EQ(got, value);
  }
  EXPECT_EQ(table.size(), 0u);
}

TEST(LiveTable, ReportsAnAddressInsertedTwice) {
  static LiveTable<std::uint64_t> table;
  const void* p = reinterpret_cast<const void*>(0x1000);
  std::uint64_t previous = 0;
  ASSERT_EQ(table.insert(p, 7, &previous), LiveTable<std::uint64_t>::Insert::kAdded);
  ASSERT_EQ(table.insert(p, 9, &previous), LiveTable<std::uint64_t>::Insert::kReplaced);
  EXPECT_EQ(previous, 7u);
  EXPECT_EQ(table.size(), 1u);
  ASSERT_TRUE(table.take(p, &previous));
  EXPECT_EQ(previous, 9u);
}

TEST(TraceVarint, RoundTripsAndRejectsTruncation) {
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 300ull, 1ull << 35, ~0ull}) {
    std::uint8_t buffer[10];
    std::uint8_t* end = trace::put_varint(buffer, v);
    const std::uint8_t* in = buffer;
    std::uint64_t back = 0;
    ASSERT_TRUE(trace::get_varint(&in, end, &back));
    EXPECT_EQ(back, v);
    EXPECT_EQ(in, end);
    in = buffer;
    if (end - buffer > 1) {
      EXPECT_FALSE(trace::get_varint(&in, end - 1, &back));
    }
  }
}

TEST(Env, ParsesNumbersStrictly) {
  std::uint64_t u = 0;
  EXPECT_TRUE(parse_u64("4096", &u));
  EXPECT_EQ(u, 4096u);
  EXPECT_FALSE(parse_u64("", &u));
  EXPECT_FALSE(parse_u64("12x", &u));
  EXPECT_FALSE(parse_u64("-1", &u));
  EXPECT_FALSE(parse_u64("99999999999999999999999", &u));
  double d = 0;
  EXPECT_TRUE(parse_fraction("0.66", &d));
  EXPECT_DOUBLE_EQ(d, 0.66);
  EXPECT_TRUE(parse_fraction("10", &d));
  EXPECT_DOUBLE_EQ(d, 10);
  EXPECT_FALSE(parse_fraction(".", &d));
  EXPECT_FALSE(parse_fraction("1e3", &d));
  EXPECT_FALSE(parse_fraction("-0.5", &d));
}

TEST(Env, ExpandsThePidPattern) {
  char out[64];
  ASSERT_TRUE(expand_path("a.%p.json", out, sizeof out));
  EXPECT_EQ(std::string(out), "a." + std::to_string(::getpid()) + ".json");
  EXPECT_FALSE(expand_path("a-very-long-name-%p", out, 8));
}

std::string temp_path(const char* name) { return ::testing::TempDir() + name + std::to_string(::getpid()); }

TEST(ProfileReader, ReadsPeakAndHistogramAndSamplesInProportion) {
  const std::string path = temp_path("profile");
  std::ofstream(path) << R"({"format": "strata-profile", "peak_live_objects": 42,
    "size_histogram": {"8": 1, "16": 0, "32": 3}})";
  SizeDistribution d;
  ASSERT_EQ(read_size_distribution(path.c_str(), &d), nullptr);
  EXPECT_EQ(d.peak_live_objects, 42u);
  ASSERT_EQ(d.sizes, 2u);  // the zero count is dropped
  EXPECT_EQ(d.total(), 4u);
  std::map<std::uint64_t, int> drawn;
  std::mt19937_64 random(1);
  for (int i = 0; i < 40000; ++i) ++drawn[sample_size(d, random())];
  EXPECT_EQ(drawn.size(), 2u);
  EXPECT_NEAR(drawn[32] / 40000.0, 0.75, 0.02);
  std::remove(path.c_str());
}

TEST(ProfileReader, NamesWhatIsWrong) {
  SizeDistribution d;
  EXPECT_STREQ(read_size_distribution("/nonexistent/profile.json", &d), "cannot open the profile");
  const std::string path = temp_path("bad");
  std::ofstream(path) << R"({"peak_live_objects": 3, "size_histogram": {"8": x}})";
  EXPECT_STREQ(read_size_distribution(path.c_str(), &d),
               "malformed \"size_histogram\" (expected \"size\": count pairs)");
  std::ofstream(path) << R"({"size_histogram": {}})";
  EXPECT_STREQ(read_size_distribution(path.c_str(), &d), "no integer \"peak_live_objects\"");
  std::remove(path.c_str());
}

// A private anonymous mapping is heap memory: its pages count once touched,
// and no longer once given back with MADV_FREE (smaps: LazyFree), though Rss
// keeps them. Anonymous resident memory (statm) rises with them too.
TEST(HeapMeter, CountsTouchedPagesAndNotLazilyFreedOnes) {
  constexpr std::size_t kBytes = 32 << 20;
  void* mapping = platform::map_pages(kBytes);
  ASSERT_NE(mapping, nullptr);
  auto* bytes = static_cast<volatile unsigned char*>(mapping);
  const std::uint64_t heap_before = heap_resident_bytes(), anonymous_before = anonymous_resident_bytes();
  for (std::size_t i = 0; i < kBytes; i += 4096) bytes[i] = 1;
  const std::uint64_t heap_touched = heap_resident_bytes(), anonymous_touched = anonymous_resident_bytes();
  EXPECT_GE(heap_touched, heap_before + kBytes);
  EXPECT_LT(heap_touched, heap_before + kBytes + (4 << 20));
  EXPECT_GE(anonymous_touched, anonymous_before + kBytes);
  ASSERT_EQ(::madvise(mapping, kBytes, MADV_FREE), 0);
  const std::uint64_t heap_freed = heap_resident_bytes();
  EXPECT_LT(heap_freed, heap_touched - kBytes + (4 << 20));
  // Written again, a lazily freed page is in use again (the kernel no longer
  // counts it LazyFree): the meter must see it, or live data could exceed it.
  // (The kernel may leave a few pages of a range it was asked to free lazily
  // as they were: those were counted already; 1 MiB of slack.)
  for (std::size_t i = 0; i < kBytes / 2; i += 4096) bytes[i] = 2;
  EXPECT_GE(heap_resident_bytes(), heap_freed + kBytes / 2 - (1 << 20));
  platform::unmap_pages(mapping, kBytes);
}

TEST(FileWriter, WritesNumbersAndRenamesOnCommit) {
  const std::string path = temp_path("writer");
  {
    FileWriter out(path.c_str());
    ASSERT_TRUE(out.ok());
    out.number(std::uint64_t{0}).text(" ").number(std::int64_t{-12}).text(" ").fixed(2.5, 3).text(" ").fixed(0.0004, 3);
    EXPECT_NE(::access(path.c_str(), F_OK), 0);  // not visible before commit
    ASSERT_TRUE(out.commit());
  }
  std::string text;
  std::getline(std::ifstream(path), text);
  EXPECT_EQ(text, "0 -12 2.500 0.000");
  std::remove(path.c_str());
}

// A path that is not a regular file (a device such as /dev/null, here a FIFO)
// is never replaced by the renamed output; a FIFO that nobody reads is a
// failure, not a hang (lab/tests/test_errors.py writes through one that is read).
TEST(FileWriter, LeavesAPathThatIsNotARegularFile) {
  const std::string path = temp_path("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  {
    FileWriter out(path.c_str());
    out.text("x");
    EXPECT_FALSE(out.commit());
  }
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_NE(::access((path + ".tmp").c_str(), F_OK), 0);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace strata::lab
