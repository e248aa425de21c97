// The platform layer: the only place strata talks to the kernel about pages,
// threads, sleeping and entropy (mmap, munmap, mremap, mprotect, madvise,
// futex, getrandom, sysconf). Everything above it is portable C++. One file
// per concern in platform/:
//   pages.hpp    map, protect, advise; the page size
//   futex.hpp    sleep on a word, wake its sleepers
//   entropy.hpp  the kernel's random bytes
//   thread.hpp   the thread's id, a spin lock
// tools/lint/kernel_calls.sh (make lint, and a CTest test) fails on such a
// call anywhere else in src/ or include/ (the Valgrind tools in src/drag aside).
#pragma once
#include "strata/platform/entropy.hpp"
#include "strata/platform/futex.hpp"
#include "strata/platform/pages.hpp"
#include "strata/platform/thread.hpp"
