#include "next_malloc.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "env.hpp"
#include "lab_config.hpp"
#include "once.hpp"

namespace strata::lab {

namespace {

NextMalloc g_next{};
Once g_resolved;
// initial-exec: a preloaded library's TLS is static, and the dynamic TLS path
// (__tls_get_addr) may itself allocate.
__attribute__((tls_model("initial-exec"))) thread_local bool t_resolving = false;

// Arena blocks carry their requested size in the 16 bytes before the block.
constexpr std::size_t kHeader = 16;
alignas(64) unsigned char g_arena[config::kBootstrapArenaBytes];
std::atomic<std::size_t> g_arena_used{0};

template <class Fn>
void resolve(Fn& slot, const char* name) noexcept {
  slot = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

[[noreturn]] void die(const char* what) noexcept {
  const char prefix[] = "strata-lab: cannot find the next allocator's ";
  ssize_t ignored = ::write(2, prefix, sizeof prefix - 1);
  ignored = ::write(2, what, std::strlen(what));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
  exit_now(127);
}

void resolve_all() noexcept {
  resolve(g_next.malloc, "malloc");
  resolve(g_next.free, "free");
  resolve(g_next.calloc, "calloc");
  resolve(g_next.realloc, "realloc");
  resolve(g_next.posix_memalign, "posix_memalign");
  resolve(g_next.aligned_alloc, "aligned_alloc");
  resolve(g_next.memalign, "memalign");
  resolve(g_next.malloc_usable_size, "malloc_usable_size");
  if (!g_next.malloc) die("malloc");
  if (!g_next.free) die("free");
  if (!g_next.calloc) die("calloc");
  if (!g_next.realloc) die("realloc");
  if (!g_next.posix_memalign) die("posix_memalign");
  if (!g_next.aligned_alloc) die("aligned_alloc");
  if (!g_next.memalign) die("memalign");
}

}  // namespace

const NextMalloc* next_malloc() noexcept {
  if (g_resolved.done()) return &g_next;
  if (t_resolving) return nullptr;
  g_resolved.run([] {
    t_resolving = true;
    resolve_all();
    t_resolving = false;
  });
  return &g_next;
}

void* bootstrap_alloc(std::size_t size, std::size_t alignment) noexcept {
  if (alignment < kHeader) alignment = kHeader;
  if (size > config::kBootstrapArenaBytes || alignment > config::kBootstrapArenaBytes) return nullptr;
  // Room for the header plus worst-case alignment padding.
  const std::size_t need = (size + kHeader + alignment + kHeader - 1) & ~(kHeader - 1);
  const std::size_t start = g_arena_used.fetch_add(need, std::memory_order_relaxed);
  if (start + need > sizeof g_arena) return nullptr;
  auto base = reinterpret_cast<std::uintptr_t>(g_arena + start + kHeader);
  base = (base + alignment - 1) & ~(static_cast<std::uintptr_t>(alignment) - 1);
  auto* block = reinterpret_cast<unsigned char*>(base);
  std::memcpy(block - kHeader, &size, sizeof size);
  return block;  // the arena is static storage: already zero
}

bool is_bootstrap(const void* p) noexcept {
  auto* b = static_cast<const unsigned char*>(p);
  return b >= g_arena && b < g_arena + sizeof g_arena;
}

std::size_t bootstrap_size(const void* p) noexcept {
  std::size_t size;
  std::memcpy(&size, static_cast<const unsigned char*>(p) - kHeader, sizeof size);
  return size;
}

}  // namespace strata::lab
