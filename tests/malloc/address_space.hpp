// The process's mapped address space (/proc/self/statm's first field), for
// tests that set RLIMIT_AS a little above it.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdio>

inline std::size_t current_address_space() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f) {
    if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}
