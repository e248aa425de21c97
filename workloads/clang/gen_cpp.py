"""A C++ translation unit for clang: scale x 5 class templates with
members, virtual functions, lambdas and std-free containers of our own, each
instantiated on a few types; the seed varies the constants. Written
without #include so that only the compiler, not the system headers, counts."""
import random


def generate(scale: int, seed: int, out) -> None:
    rng = random.Random(seed)
    out.write("typedef unsigned long size_t;\n"
              "template <class T> struct Vec { T* data = nullptr; size_t n = 0, cap = 0;\n"
              "  void push(const T& v) { if (n == cap) grow(); data[n++] = v; }\n"
              "  void grow() { size_t c = cap ? cap * 2 : 4; T* d = new T[c];\n"
              "    for (size_t i = 0; i < n; ++i) d[i] = data[i]; delete[] data; data = d; cap = c; }\n"
              "  ~Vec() { delete[] data; } };\n"
              "struct Base { virtual ~Base() {} virtual long run(long) = 0; };\n")
    for i in range(scale * 5):
        k = rng.randrange(1, 1000)
        out.write(f"template <class T, int N> struct Node{i} : Base {{\n"
                  f"  Vec<T> items; T acc{{}};\n"
                  f"  long run(long x) override {{ for (int j = 0; j < N; ++j) {{ items.push(T(x * {k} + j));\n"
                  f"      acc = acc + items.data[j % (items.n ? items.n : 1)]; }}\n"
                  f"    auto f = [this](long y) {{ return y ^ (long)acc ^ {k}; }}; return f(x) + (long)items.n; }}\n"
                  f"  template <class U> U convert(U u) const {{ return u + U({k}) * U(N); }}\n"
                  f"}};\n"
                  f"long use{i}(long x) {{ Node{i}<long, {k % 7 + 2}> a; Node{i}<double, {k % 5 + 3}> b;\n"
                  f"  Node{i}<int, {k % 3 + 1}> c; Base* p[3] = {{&a, &b, &c}}; long s = 0;\n"
                  f"  for (Base* q : p) s += q->run(x + {k});\n"
                  f"  return s + a.convert<long>(x) + (long)b.convert<double>(x) + c.convert<int>((int)x); }}\n")
    out.write("long total(long x) { long s = 0;\n")
    for i in range(scale * 5):
        out.write(f"  s += use{i}(x + {i});\n")
    out.write("  return s; }\n")
