"""A C translation unit for gcc's cc1: scale x 10 functions over structs,
with loops, switches and inline helpers; the seed varies the constants.
Written without #include (cc1 does not preprocess system headers here)."""
import random


def generate(scale: int, seed: int, out) -> None:
    rng = random.Random(seed)
    out.write("struct item { long key; double weight; struct item *next; char tag[8]; };\n"
              "static inline long mix(long a, long b) { return (a * 31) ^ (b >> 3); }\n")
    for i in range(scale * 10):
        k, m = rng.randrange(1, 1000), rng.randrange(2, 9)
        cases = "".join(f"      case {c}: s = mix(s, p->key * {c + k}); break;\n" for c in range(m))
        out.write(f"long f{i}(struct item *p, int n) {{\n  long s = {k};\n  double w = 0;\n"
                  f"  for (int j = 0; j < n && p; ++j, p = p->next) {{\n"
                  f"    switch ((int)(p->key % {m})) {{\n{cases}      default: s -= j; }}\n"
                  f"    w += p->weight * {k % 13 + 1}.5;\n    if (p->tag[j & 7] == {k % 128}) s += (long)w;\n  }}\n"
                  f"  return s + (long)w;\n}}\n")
