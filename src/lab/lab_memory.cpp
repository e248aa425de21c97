#include "lab_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

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
  void* p = MAP_FAILED;
  if (fd >= 0) {
    if (::ftruncate(fd, static_cast<off_t>(length)) == 0)
      p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ::close(fd);
  }
  if (p == MAP_FAILED)  // no memfd (old kernel, seccomp): plain anonymous memory
    p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_lab_memory(void* p, std::size_t bytes) noexcept {
  if (p != nullptr) ::munmap(p, round_to_pages(bytes));
}

}  // namespace strata::lab
