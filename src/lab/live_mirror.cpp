#include "live_mirror.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <strata/platform.hpp>

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
  void* p = nullptr;
  if (::ftruncate(fd, config::kPageBytes) == 0) p = platform::map_file(fd, config::kPageBytes, platform::FileAccess::shared);
  ::close(fd);
  if (p == nullptr) {
    complain("STRATA_LAB_LIVE_OUT", "cannot map ", path);
    return nullptr;
  }
  auto* page = static_cast<LiveMirrorPage*>(p);
  page->pid = static_cast<std::uint64_t>(::getpid());
  page->magic = kLiveMirrorMagic;
  return page;
}

}  // namespace strata::lab
