// libstrata.so as a drop-in: real commands under LD_PRELOAD (with statistics
// at exit, so we know strata really served them). Labelled no-asan no-tsan: a
// sanitizer runtime cannot share the process with another malloc.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "spawn.hpp"

namespace {

using strata::test::run_program;

const std::string kPreload = std::string("LD_PRELOAD=") + STRATA_LIBRARY;

TEST(StrataPreload, ShellAndCoreutilsRunAndReportStatistics) {
  auto r = run_program({"/bin/sh", "-c", "ls / > /dev/null && seq 1 20000 | sort -rn | head -n 1 && echo ok"},
                       {kPreload, "STRATA_SHOW_STATS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "20000\nok\n");
  // The processes that exit through exit() (ls, seq, sort, ...) print statistics.
  std::size_t reports = 0;
  for (std::size_t at = r.err.find("strata: statistics"); at != std::string::npos;
       at = r.err.find("strata: statistics", at + 1))
    ++reports;
  EXPECT_GE(reports, 3u) << r.err;
}

TEST(StrataPreload, ThreadedProgramUnderPreload) {
  // sort with several threads over enough input to use them
  auto r = run_program({"/bin/sh", "-c", "seq 1 300000 | sort --parallel=4 -S 8M -n | tail -n 1"}, {kPreload});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "300000\n");
  EXPECT_EQ(r.err, "");
}

TEST(StrataPreload, CheckedModeUnderPreloadRunsCleanPrograms) {
  auto r = run_program({"/bin/sh", "-c", "ls -la / | sort | wc -l > /dev/null && echo ok"}, {kPreload, "STRATA_CHECK=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(r.err, "");
}

// malloc, free, new and delete of libstrata.so inline the fast paths, each
// entry point its own copy: each copy makes the checks, and checked mode
// reaches each one (fast_paths.hpp, the free gate).
std::string misuse_program(const char* name) { return std::string(STRATA_MISUSE_DIR) + "/" + name; }

void expect_abort_saying(const char* program, const std::vector<std::string>& env, const char* message) {
  auto r = run_program({misuse_program(program)}, env);
  EXPECT_EQ(r.signal, SIGABRT) << program << ": " << r.err;
  EXPECT_EQ(r.err.rfind(std::string("strata: ") + message, 0), 0u) << program << ": " << r.err;
}

TEST(StrataPreload, FreeAndDeleteReportADoubleFree) {
  expect_abort_saying("misuse_double_free_small", {kPreload}, "double free of 0x");
  expect_abort_saying("misuse_double_delete", {kPreload}, "double free of 0x");
  expect_abort_saying("misuse_free_interior_small", {kPreload}, "invalid free of 0x");
}

// The would-be segment header of each of these pointers may be unmapped: the
// free gate (fast_paths.hpp) sends them to the area map before anything is read.
TEST(StrataPreload, FreeAndReallocOfMemoryStrataNeverMappedReportIt) {
  expect_abort_saying("misuse_free_global", {kPreload}, "invalid free of 0x");
  expect_abort_saying("misuse_free_stack", {kPreload}, "invalid free of 0x");
  expect_abort_saying("misuse_free_mmap", {kPreload}, "invalid free of 0x");
  expect_abort_saying("misuse_free_wild", {kPreload}, "invalid free of 0x5a5a5a5a5a50\n");
  expect_abort_saying("misuse_realloc_stack", {kPreload}, "invalid realloc of 0x");
}

// Under a small RLIMIT_AS set before start-up the segment range is an eighth
// of it, and programs run as before.
TEST(StrataPreload, ProgramsRunUnderASmallAddressSpaceLimit) {
  auto r = run_program({"/bin/sh", "-c", "ulimit -v 300000 && ls -la / | sort | wc -l > /dev/null && echo ok"},
                       {kPreload});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(r.err, "");
}

TEST(StrataPreload, CheckedModeReportsAForeignPointerBeforeReadingIt) {
  expect_abort_saying("misuse_free_global", {kPreload, "STRATA_CHECK=1"},
                      "free(): pointer was not allocated by strata: 0x");
  expect_abort_saying("misuse_double_delete", {kPreload, "STRATA_CHECK=1"}, "double free of 0x");
}

TEST(StrataPreload, SizedDeleteAndFreeSizedRunClean) {
  for (const char* program : {"correct_cpp_new_delete", "correct_free_sized", "correct_malloc_free"}) {
    auto r = run_program({misuse_program(program)}, {kPreload});
    EXPECT_EQ(r.exit_code, 0) << program << ": " << r.err;
    EXPECT_EQ(r.err, "") << program;
  }
}

}  // namespace

// libstrata-hardened.so: the same programs, and C++ ones (sized delete),
// run clean: none of its checks fires on correct programs.
namespace {

const std::string kHardened = std::string("LD_PRELOAD=") + STRATA_HARDENED_LIBRARY;

TEST(StrataPreloadHardened, ShellCoreutilsAndThreadsRunClean) {
  auto r = run_program({"/bin/sh", "-c",
                        "ls -la / | sort | wc -l > /dev/null && seq 1 300000 | sort --parallel=4 -S 8M -n | tail -n 1"},
                       {kHardened});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "300000\n");
  EXPECT_EQ(r.err, "");
}

TEST(StrataPreloadHardened, CxxProgramRunsClean) {
  // cmake is C++: new/delete, sized delete, std::string and containers.
  auto r = run_program({"/bin/sh", "-c", "cmake -E capabilities > /dev/null && cmake -E echo ok"}, {kHardened});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
