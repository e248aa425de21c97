// A C++ test program for the lab: known new/delete patterns, so the tests can
// check that C++ allocation is observed on every allocator (jemalloc, tcmalloc
// and mimalloc define their own operator new). Usage: lab_cxx_patterns new|nothing
#include <cstdint>
#include <cstring>
#include <new>

namespace {

struct alignas(64) CacheLine {
  char bytes[64];
};

int news() {
  std::int64_t* numbers[100];
  char* buffers[10];
  CacheLine* lines[5];
  for (auto*& n : numbers) n = new std::int64_t(1);
  for (auto*& b : buffers) b = new char[1000];
  for (auto*& l : lines) l = new CacheLine;  // aligned new: alignment 64 > the default 16
  for (auto* l : lines)
    if (reinterpret_cast<std::uintptr_t>(l) % 64 != 0) return 1;
  void* maybe = ::operator new(24, std::nothrow);
  if (maybe == nullptr) return 1;
  ::operator delete(maybe, std::nothrow);
  for (auto* n : numbers) delete n;
  for (auto* b : buffers) delete[] b;
  for (auto* l : lines) delete l;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "new") == 0) return news();
  if (argc == 2 && std::strcmp(argv[1], "nothing") == 0) return 0;
  return 2;
}
