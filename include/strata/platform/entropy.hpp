// Entropy: the kernel's random bytes (getrandom), never blocking.
#pragma once
#include <sys/random.h>

#include <cstddef>

namespace strata::platform {

// Fills `bytes` bytes at `out` from the kernel's pool: false when it cannot
// now (early boot, an old kernel); the caller chooses a fallback.
inline bool random_bytes(void* out, std::size_t bytes) noexcept {
  return ::getrandom(out, bytes, GRND_NONBLOCK) == static_cast<ssize_t>(bytes);
}

}  // namespace strata::platform
