// double delete[] of a C++ array (operator new[] / delete[])
#include "misuse.h"

int main() {
  long *a = static_cast<long *>(hide(new long[8]()));
  delete[] static_cast<long *>(hide(a));
  delete[] static_cast<long *>(hide(a));
  churn(64, 2);
  return unnoticed("double delete[]");
}
