// Start-up behaviour through the environment: STRATA_SHOW_STATS, STRATA_VERBOSE,
// STRATA_CHECK, and unknown or malformed STRATA_* variables (reported, not ignored).
// The probe program links strata_core; STRATA_PROBE is its path.
#include <gtest/gtest.h>

#include <csignal>
#include <regex>

#include "spawn.hpp"

namespace {

using strata::test::run_program;

TEST(StrataEnvironment, ShowStatsPrintsPerClassTableAtExit) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_SHOW_STATS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("probe: done"), std::string::npos);
  EXPECT_NE(r.err.find("strata: statistics"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("class    size  blocks    full  os-pages    live-bytes  remote-bytes"), std::string::npos)
      << r.err;
  // the one live 48-byte object is in the table: class 2, size 48, 1 block
  // (not full), 1 OS page, 48 live bytes, nothing freed by other threads
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\n +2 +48 +1 +0 +1 +48 +0\n)"))) << r.err;
  EXPECT_NE(r.err.find("peak RSS"), std::string::npos);
  EXPECT_NE(r.err.find("pages discarded"), std::string::npos);
}

TEST(StrataEnvironment, NoStatisticsUnlessAsked) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_SHOW_STATS=0"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
}

TEST(StrataEnvironment, StatsPrintOnDemand) {
  auto r = run_program({STRATA_PROBE, "stats-call"}, {});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("strata: statistics"), std::string::npos);
}

TEST(StrataEnvironment, VerbosePrintsTheConfiguration) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_VERBOSE=1"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("strata: libstrata configuration"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("small classes: 67"), std::string::npos) << r.err;
}

TEST(StrataEnvironment, UnknownVariableIsReportedByName) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_SHOW_STAT=1"});  // a typo
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("strata: unknown environment variable STRATA_SHOW_STAT "), std::string::npos) << r.err;
}

TEST(StrataEnvironment, MalformedValueIsReportedWithTheField) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_CHECK=yes"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("strata: STRATA_CHECK=yes: expected 0 or 1"), std::string::npos) << r.err;
}

// A purge delay that is not a number of milliseconds stops the program
// before it runs, naming the variable: a delay silently left at its default
// would change the program's memory unnoticed.
TEST(StrataEnvironment, BadPurgeDelayStopsTheProgram) {
  for (const char* bad : {"STRATA_PURGE_DELAY_MS=fast", "STRATA_PURGE_DELAY_MS=-1",
                          "STRATA_PURGE_DELAY_MS=", "STRATA_PURGE_DELAY_MS=99999999999"}) {
    auto r = run_program({STRATA_PROBE, "work"}, {bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.out.find("probe: done"), std::string::npos) << bad << ": the program ran";
    EXPECT_NE(r.err.find(std::string("strata: ") + bad + ": STRATA_PURGE_DELAY_MS expects milliseconds"),
              std::string::npos)
        << r.err;
  }
}

TEST(StrataEnvironment, PurgeDelayIsReadAndShown) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_PURGE_DELAY_MS=250", "STRATA_VERBOSE=1"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("purge delay 250 ms"), std::string::npos) << r.err;
}

TEST(StrataEnvironment, OtherPartsVariablesAreNotReported) {
  auto r = run_program({STRATA_PROBE, "work"}, {"STRATA_TEST_LONG=1", "STRATA_LAB_PROFILE_OUT=/dev/null",
                                                  "STRATA_BENCH_ROUNDS=3"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
}

// STRATA_CHECK=1: the same misuse that the checked build catches, caught at run time.
void expect_abort_naming_address(const char* what, const char* message) {
  auto r = run_program({STRATA_PROBE, what}, {"STRATA_CHECK=1"});
  EXPECT_EQ(r.signal, SIGABRT) << what << ": " << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("probe: (0x[0-9a-f]+)"))) << r.out;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(m[1].str()), std::string::npos) << "the report names the address " << m[1] << ": " << r.err;
}

TEST(StrataEnvironment, CheckReportsDoubleFreeOfSmallObject) {
  expect_abort_naming_address("double-free-small", "strata: double free of");
}
TEST(StrataEnvironment, CheckReportsDoubleFreeOfLargeObject) {
  expect_abort_naming_address("double-free-large", "strata: ");
}
TEST(StrataEnvironment, CheckReportsForeignPointer) {
  expect_abort_naming_address("foreign", "was not allocated by strata");
}

}  // namespace
