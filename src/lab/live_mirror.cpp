#include "live_mirror.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

#include "env.hpp"
#include "lab_config.hpp"

namespace strata::lab {

LiveMirrorPage* open_live_mirror() noexcept {
  const char* path = ::getenv("STRATA_LAB_LIVE_OUT");
  if (path == nullptr || *path == '\0') return nullptr;
  const int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    complain("STRATA_LAB_LIVE_OUT", "cannot create ", path);
    return nullptr;
  }
  void* p = MAP_FAILED;
  if (::ftruncate(fd, config::kPageBytes) == 0)
    p = ::mmap(nullptr, config::kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    complain("STRATA_LAB_LIVE_OUT", "cannot map ", path);
    return nullptr;
  }
  auto* page = static_cast<LiveMirrorPage*>(p);
  page->pid = static_cast<std::uint64_t>(::getpid());
  page->magic = kLiveMirrorMagic;
  return page;
}

}  // namespace strata::lab
