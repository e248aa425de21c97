// C++ aligned delete of a large object with the wrong alignment (100 000 bytes, align 64, deleted as align 1 MiB)
#include <new>

#include "misuse.h"

int main() {
  char* p = static_cast<char*>(hide(::operator new(100000, std::align_val_t{64})));
  fill(p, 100000, 0);
  if (reinterpret_cast<unsigned long>(p) % (1ul << 20) == 0) return MISUSE_NOT_APPLICABLE;  // aligned by chance
  ::operator delete(hide(p), 100000, std::align_val_t{1ul << 20});
  churn(100000, 1);
  return unnoticed("aligned delete with the wrong alignment (large)");
}
