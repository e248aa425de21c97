#include "lab_memory.hpp"

#include <sys/mman.h>  // memfd_create
#include <unistd.h>

#include <strata/platform.hpp>

#include "lab_config.hpp"

namespace strata::lab {

namespace {
std::size_t round_to_pages(std::size_t bytes) noexcept {
  return (bytes + config::kPageBytes - 1) & ~(config::kPageBytes - 1);
}
}  // namespace

void* map_lab_memory(std::size_t bytes) noexcept {
  const std::size_t length = round_to_pages(bytes);
  int fd = ::memfd_create("strata-lab", MFD_CLOEXEC);
  void* p = nullptr;
  if (fd >= 0) {
    if (::ftruncate(fd, static_cast<off_t>(length)) == 0)
      p = platform::map_file(fd, length, platform::FileAccess::private_copy);
    ::close(fd);
  }
  if (p == nullptr)  // no memfd (old kernel, seccomp): plain anonymous memory
    p = platform::map_pages(length);
  return p;
}

void unmap_lab_memory(void* p, std::size_t bytes) noexcept {
  if (p != nullptr) platform::unmap_pages(p, round_to_pages(bytes));
}

}  // namespace strata::lab
