// TraceHeap — writes one text line per call to a FILE* or a file descriptor
// given at construction (default: file descriptor 2, stderr):
//   malloc <size> <result>
//   free <pointer>
//   realloc <pointer> <size> <result>     (only when Super has realloc)
//   calloc <count> <size> <result>        (only when Super has calloc)
//   memalign <alignment> <size> <result>  (only when Super has memalign)
// Pointers are printed as 0x<hex>, a null result as 0x0; sizes in decimal.
// Each line is formatted into a stack buffer and written with one fwrite or
// write(2) call, so tracing never allocates (safe inside a malloc
// replacement) and lines from several threads do not interleave on an fd.
// Limits: write errors are ignored (tracing must not change the program's
// behaviour); the FILE* or fd must outlive the heap; a FILE* is buffered,
// fflush it before reading the trace.
#pragma once
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <unistd.h>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/detail/capabilities.hpp"

namespace strata::layers {

template <Heap Super>
class TraceHeap : public Super {
 public:
  TraceHeap() noexcept = default;
  explicit TraceHeap(std::FILE* out) noexcept : file_(out) {}
  explicit TraceHeap(int fd) noexcept : fd_(fd) {}

  void* malloc(std::size_t size) noexcept {
    void* result = Super::malloc(size);
    emit("malloc %zu 0x%" PRIxPTR "\n", size, address(result));
    return result;
  }

  void free(void* ptr) noexcept {
    emit("free 0x%" PRIxPTR "\n", address(ptr));
    Super::free(ptr);
  }

  void* realloc(void* ptr, std::size_t size) noexcept
    requires ReallocatingHeap<Super>
  {
    void* result = Super::realloc(ptr, size);
    emit("realloc 0x%" PRIxPTR " %zu 0x%" PRIxPTR "\n", address(ptr), size, address(result));
    return result;
  }

  void* calloc(std::size_t count, std::size_t size) noexcept
    requires CallocatingHeap<Super>
  {
    void* result = Super::calloc(count, size);
    emit("calloc %zu %zu 0x%" PRIxPTR "\n", count, size, address(result));
    return result;
  }

  void* memalign(std::size_t alignment, std::size_t size) noexcept
    requires AligningHeap<Super>
  {
    void* result = Super::memalign(alignment, size);
    emit("memalign %zu %zu 0x%" PRIxPTR "\n", alignment, size, address(result));
    return result;
  }

  // aligned_alloc and posix_memalign of the parent are not traced: hidden.
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  static std::uintptr_t address(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }

  // Member function: argument 1 is `this`, so the format is argument 2.
  __attribute__((format(printf, 2, 3))) void emit(const char* format, ...) noexcept {
    const int saved_errno = errno;  // the traced call's errno is the caller's
    char line[128];
    std::va_list args;
    va_start(args, format);
    const int length = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (length > 0) {
      const std::size_t n = static_cast<std::size_t>(length) < sizeof line ? static_cast<std::size_t>(length) : sizeof line - 1;
      if (file_) {
        std::fwrite(line, 1, n, file_);
      } else {
        ssize_t ignored = ::write(fd_, line, n);
        (void)ignored;
      }
    }
    errno = saved_errno;
  }

  std::FILE* file_ = nullptr;
  int fd_ = 2;
};

}  // namespace strata::layers
