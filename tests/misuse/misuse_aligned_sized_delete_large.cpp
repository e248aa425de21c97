// C++ aligned sized delete of a large object with the wrong size (100 000 bytes, align 64, deleted as 50)
#include <new>

#include "misuse.h"

int main() {
  char* p = static_cast<char*>(hide(::operator new(100000, std::align_val_t{64})));
  fill(p, 100000, 0);
  ::operator delete(hide(p), 50, std::align_val_t{64});
  churn(100000, 1);
  return unnoticed("aligned sized delete with the wrong size (large)");
}
