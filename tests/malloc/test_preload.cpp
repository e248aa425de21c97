// libstrata.so as a drop-in: real commands under LD_PRELOAD (with statistics
// at exit, so we know strata really served them). Labelled no-asan no-tsan: a
// sanitizer runtime cannot share the process with another malloc.
#include <gtest/gtest.h>

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
