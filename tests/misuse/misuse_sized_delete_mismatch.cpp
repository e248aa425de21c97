// sized-delete mismatch: operator delete(p, size) with the wrong size (64-byte object, deleted as 1024)
#include <new>

#include "misuse.h"

int main() {
  char *p = static_cast<char *>(hide(::operator new(64)));
  fill(p, 64, 0);
  ::operator delete(hide(p), 1024);
  churn(64, 2);
  return unnoticed("sized delete with the wrong size");
}
