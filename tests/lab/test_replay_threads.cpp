// strata-replay on the recorded threads (STRATA_LAB_REPLAY_THREADS=1): a synthetic
// trace in which four threads allocate and free each other's objects must
// replay to exactly its peaks. Under TSan this also checks the replayer's
// turn-taking for data races.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "trace_format.hpp"

namespace strata::lab {
namespace {

class TraceBuilder {
 public:
  void record(std::uint8_t op, std::uint64_t thread, std::uint64_t id, std::uint64_t size = 0) {
    std::uint8_t buffer[trace::kMaxRecordBytes];
    std::uint8_t* end = buffer;
    *end++ = op;
    end = trace::put_varint(end, 1);  // time delta
    end = trace::put_varint(end, thread);
    end = trace::put_varint(end, id);
    if (trace::creates_object(op) || op == trace::kResize) end = trace::put_varint(end, size);
    if (trace::has_alignment(op)) end = trace::put_varint(end, 64);
    bytes_.insert(bytes_.end(), buffer, end);
    ++records_;
  }
  void write(const std::string& path, const trace::Trailer& trailer) const {
    std::ofstream out(path, std::ios::binary);
    out.write(trace::kHeaderMagic, 8);
    const std::uint32_t version = trace::kVersion, zero = 0;
    out.write(reinterpret_cast<const char*>(&version), 4).write(reinterpret_cast<const char*>(&zero), 4);
    out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
    out.write(trace::kTrailerMagic, 8).write(reinterpret_cast<const char*>(&trailer), sizeof trailer);
  }
  std::uint64_t records() const { return records_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint64_t records_ = 0;
};

std::uint64_t field(const std::string& json, const std::string& name) {
  const auto at = json.find("\"" + name + "\": ");
  if (at == std::string::npos) return ~0ull;
  return std::stoull(json.substr(at + name.size() + 4));
}

TEST(ReplayThreads, ObjectsFreedByOtherThreadsReplayToTheRecordedPeaks) {
  constexpr std::uint64_t kThreads = 4, kRounds = 300;
  TraceBuilder trace;
  std::uint64_t id = 0, live = 0, peak = 0, live_objects = 0, peak_objects = 0;
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    const std::uint64_t first = id + 1;
    for (std::uint64_t t = 1; t <= kThreads; ++t) {  // each thread allocates one object
      const std::uint64_t size = 16 * t + round % 7;
      trace.record(t % 2 ? trace::kMalloc : trace::kPosixMemalign, t, ++id, size);
      live += size, ++live_objects;
      peak = std::max(peak, live), peak_objects = std::max(peak_objects, live_objects);
    }
    trace.record(trace::kResize, 1, first, 100);  // thread 1 grows thread 1's object
    live = live - 16 - round % 7 + 100;
    peak = std::max(peak, live);
    for (std::uint64_t t = 1; t <= kThreads; ++t) {  // thread t frees thread t+1's object
      const std::uint64_t victim = first + t % kThreads;
      const std::uint64_t size = victim == first ? 100 : 16 * (t % kThreads + 1) + round % 7;
      trace.record(trace::kFree, t, victim);
      live -= size, --live_objects;
    }
  }
  ASSERT_EQ(live, 0u);
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "threads-" + std::to_string(::getpid()) + ".trace";
  const std::string report = path + ".json";
  trace.write(path, trace::Trailer{trace.records(), id, peak, peak_objects, kThreads, 0, 0, 0});
  const std::string command = "STRATA_LAB_REPLAY_THREADS=1 STRATA_LAB_REPLAY_REPORT=" + report + " " + STRATA_LAB_REPLAY_PATH +
                              " " + path;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::stringstream json;
  json << std::ifstream(report).rdbuf();
  EXPECT_EQ(field(json.str(), "records"), trace.records());
  EXPECT_EQ(field(json.str(), "peak_live_bytes"), peak);
  EXPECT_EQ(field(json.str(), "peak_live_objects"), peak_objects);
  EXPECT_EQ(field(json.str(), "live_bytes_at_end"), 0u);
  EXPECT_NE(json.str().find("\"replayed_on_recorded_threads\": true"), std::string::npos);
  std::remove(path.c_str());
  std::remove(report.c_str());
}

}  // namespace
}  // namespace strata::lab
