// static_instance<T, Tag>() — one T per (T, Tag), built on first use
// (thread-safe, C++ magic statics) and never destroyed. Heaps behind operator
// new/delete or shared by every user of a type must outlive all objects they
// hand out, including objects freed by other static destructors; letting the
// heap die at exit would turn those frees into use-after-destruction. Its
// memory is returned by process exit (and stays reachable for LeakSanitizer).
#pragma once
#include <new>

namespace strata::layers::detail {

template <class T, class Tag>
T& static_instance() noexcept {
  alignas(T) static unsigned char storage[sizeof(T)];
  static T* const instance = ::new (static_cast<void*>(storage)) T();
  return *instance;
}

}  // namespace strata::layers::detail
