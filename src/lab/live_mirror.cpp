#include "live_mirror.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "env.hpp"
#include "lab_config.hpp"

namespace strata::lab {

LiveMirrorPage* open_live_mirror(bool in_child) noexcept {
  const char* pattern = ::getenv("STRATA_LAB_LIVE_OUT");
  if (pattern == nullptr || *pattern == '\0') return nullptr;
  if (in_child && std::strstr(pattern, "%p") == nullptr) return nullptr;
  char path[4096];
  if (!expand_path(pattern, path, sizeof path)) {
    complain("STRATA_LAB_LIVE_OUT", "path too long: ", pattern);
    return nullptr;
  }
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
