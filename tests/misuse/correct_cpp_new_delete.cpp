// correct: new/delete, new[]/delete[], sized and aligned delete with the right size
#include <new>

#include "misuse.h"

struct alignas(64) Line {
  char bytes[64];
};

int main() {
  for (int i = 0; i < 100; i++) {
    long *one = static_cast<long *>(hide(new long(i)));
    char *many = static_cast<char *>(hide(new char[static_cast<size_t>(i) * 37 + 1]));
    fill(many, static_cast<size_t>(i) * 37 + 1, 9);
    Line *line = static_cast<Line *>(hide(new Line()));
    expect(reinterpret_cast<size_t>(line) % 64 == 0, "new of an over-aligned type is misaligned");
    void *raw = hide(::operator new(static_cast<size_t>(i) * 50 + 8));
    ::operator delete(raw, static_cast<size_t>(i) * 50 + 8);   // sized delete, the right size
    delete line;
    delete[] many;
    delete one;
  }
  return 0;
}
