// _exit and _Exit of a shim: write the shim's results, then leave through the
// next definition (the C library's, or another shim's that does the same).
#include "process_exit.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STRATA_LAB_EXPORT extern "C" __attribute__((visibility("default")))

namespace strata::lab {
namespace {

using ExitFn = void (*)(int);

[[noreturn]] void leave(const char* name, int status) noexcept {
  on_process_exit();
  if (auto next = reinterpret_cast<ExitFn>(::dlsym(RTLD_NEXT, name))) next(status);
  for (;;) ::syscall(SYS_exit_group, status);  // no next definition: do what _exit does
}

}  // namespace
}  // namespace strata::lab

STRATA_LAB_EXPORT void _exit(int status) { strata::lab::leave("_exit", status); }
STRATA_LAB_EXPORT void _Exit(int status) { strata::lab::leave("_Exit", status); }
