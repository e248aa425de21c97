// The two clocks of a bench/layers loop, and the line both programs print:
// "contender=… operations=… seconds=… cpu_seconds=… checksum=…". seconds is
// the steady clock; cpu_seconds is what the (single-threaded) process ran on
// a CPU, which the lab pairs: on a shared machine wall time also counts the
// time spent waiting for a CPU.
#pragma once
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace strata::bench {

struct LoopTimes {
  double seconds = 0, cpu_seconds = 0;
};

inline double process_cpu_seconds() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Runs loop() once; its result, with *times set to the loop's two times.
template <class Loop>
auto timed(Loop&& loop, LoopTimes* times) {
  const double cpu_start = process_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  auto result = loop();
  const auto stop = std::chrono::steady_clock::now();
  times->cpu_seconds = process_cpu_seconds() - cpu_start;
  times->seconds = std::chrono::duration<double>(stop - start).count();
  return result;
}

inline void print_loop(std::string_view contender, std::size_t ops, const LoopTimes& times,
                       std::uint64_t checksum) {
  std::printf("contender=%.*s operations=%zu seconds=%.6f cpu_seconds=%.6f checksum=%llu\n",
              static_cast<int>(contender.size()), contender.data(), ops, times.seconds, times.cpu_seconds,
              static_cast<unsigned long long>(checksum));
}

}  // namespace strata::bench
