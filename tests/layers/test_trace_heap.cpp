#include <gtest/gtest.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::ANSIWrapper;
using strata::layers::MallocHeap;
using strata::layers::TraceHeap;
using strata::test::FailingHeap;

namespace {

struct Call {
  std::string op;
  std::uintptr_t pointer = 0;  // malloc: result; free: argument; realloc: argument
  std::size_t size = 0;
  std::uintptr_t result = 0;  // realloc, calloc, memalign
  std::size_t count = 0;      // calloc: count; memalign: alignment
};

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Parses the whole trace; fails the test on any line it does not understand.
std::vector<Call> parse(std::FILE* file) {
  std::vector<Call> calls;
  std::rewind(file);
  char line[256];
  while (std::fgets(line, sizeof line, file)) {
    Call c;
    char op[16];
    if (std::sscanf(line, "%15s", op) != 1) {
      ADD_FAILURE() << "empty trace line";
      continue;
    }
    c.op = op;
    int fields = 0;
    if (c.op == "malloc") {
      fields = std::sscanf(line, "malloc %zu 0x%" SCNxPTR, &c.size, &c.pointer);
      EXPECT_EQ(fields, 2) << line;
    } else if (c.op == "free") {
      fields = std::sscanf(line, "free 0x%" SCNxPTR, &c.pointer);
      EXPECT_EQ(fields, 1) << line;
    } else if (c.op == "realloc") {
      fields = std::sscanf(line, "realloc 0x%" SCNxPTR " %zu 0x%" SCNxPTR, &c.pointer, &c.size, &c.result);
      EXPECT_EQ(fields, 3) << line;
    } else if (c.op == "calloc") {
      fields = std::sscanf(line, "calloc %zu %zu 0x%" SCNxPTR, &c.count, &c.size, &c.result);
      EXPECT_EQ(fields, 3) << line;
    } else if (c.op == "memalign") {
      fields = std::sscanf(line, "memalign %zu %zu 0x%" SCNxPTR, &c.count, &c.size, &c.result);
      EXPECT_EQ(fields, 3) << line;
    } else {
      ADD_FAILURE() << "unknown trace line: " << line;
    }
    calls.push_back(c);
  }
  return calls;
}

TEST(TraceHeap, WritesOneLinePerCallToAFile) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    TraceHeap<ANSIWrapper<MallocHeap>> heap(out);
    void* a = heap.malloc(24);
    void* b = heap.malloc(1000);
    heap.free(a);
    void* c = heap.realloc(b, 5000);
    heap.free(c);
    heap.free(nullptr);
    std::fflush(out);
    const auto calls = parse(out);
    ASSERT_EQ(calls.size(), 6u);
    EXPECT_EQ(calls[0].op, "malloc");
    EXPECT_EQ(calls[0].size, 24u);
    EXPECT_EQ(calls[0].pointer, address(a));
    EXPECT_EQ(calls[1].op, "malloc");
    EXPECT_EQ(calls[1].size, 1000u);
    EXPECT_EQ(calls[1].pointer, address(b));
    EXPECT_EQ(calls[2].op, "free");
    EXPECT_EQ(calls[2].pointer, address(a));
    EXPECT_EQ(calls[3].op, "realloc");
    EXPECT_EQ(calls[3].pointer, address(b));
    EXPECT_EQ(calls[3].size, 5000u);
    EXPECT_EQ(calls[3].result, address(c));
    EXPECT_EQ(calls[4].op, "free");
    EXPECT_EQ(calls[4].pointer, address(c));
    EXPECT_EQ(calls[5].op, "free");
    EXPECT_EQ(calls[5].pointer, 0u);
  }
  std::fclose(out);
}

TEST(TraceHeap, TracesCallocAndMemalignWhenTheParentHasThem) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TraceHeap<ANSIWrapper<MallocHeap>> heap(out);
  void* a = heap.calloc(3, 40);
  void* b = heap.memalign(256, 100);
  heap.free(a);
  heap.free(b);
  std::fflush(out);
  const auto calls = parse(out);
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].op, "calloc");
  EXPECT_EQ(calls[0].count, 3u);
  EXPECT_EQ(calls[0].size, 40u);
  EXPECT_EQ(calls[0].result, address(a));
  EXPECT_EQ(calls[1].op, "memalign");
  EXPECT_EQ(calls[1].count, 256u);
  EXPECT_EQ(calls[1].size, 100u);
  EXPECT_EQ(calls[1].result, address(b));
  EXPECT_EQ(calls[2].pointer, address(a));
  EXPECT_EQ(calls[3].pointer, address(b));
  std::fclose(out);
}

static_assert(!strata::layers::CallocatingHeap<TraceHeap<MallocHeap>>);

TEST(TraceHeap, WritesToAFileDescriptor) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  TraceHeap<MallocHeap> heap(::fileno(file));
  void* a = heap.malloc(7);
  heap.free(a);
  // Written with write(2): visible through the FILE* after a rewind.
  const auto calls = parse(file);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].op, "malloc");
  EXPECT_EQ(calls[0].size, 7u);
  EXPECT_EQ(calls[0].pointer, address(a));
  EXPECT_EQ(calls[1].op, "free");
  EXPECT_EQ(calls[1].pointer, address(a));
  std::fclose(file);
}

TEST(TraceHeap, TracesAFailedMallocAsNullAndKeepsErrno) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TraceHeap<ANSIWrapper<FailingHeap>> heap(out);
  heap.fail_after(0);
  errno = 0;
  EXPECT_EQ(heap.malloc(99), nullptr);
  EXPECT_EQ(errno, ENOMEM);  // tracing did not clobber the layer's errno
  std::fflush(out);
  const auto calls = parse(out);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].op, "malloc");
  EXPECT_EQ(calls[0].size, 99u);
  EXPECT_EQ(calls[0].pointer, 0u);
  std::fclose(out);
}

TEST(TraceHeap, ATraceOfTheModelTestBalances) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TraceHeap<MallocHeap> heap(out);
  strata::test::run_heap_model(heap, {.seed = 51, .operations = 5000});
  std::fflush(out);
  std::size_t mallocs = 0, frees = 0;
  for (const auto& c : parse(out)) (c.op == "malloc" ? mallocs : frees)++;
  EXPECT_GT(mallocs, 0u);
  EXPECT_EQ(mallocs, frees);  // the model frees every object it made
  std::fclose(out);
}

}  // namespace
