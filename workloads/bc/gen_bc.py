"""The 2002 slides' "1000th prime" for bc: trial division up to the
(1000 x scale + seed mod 10)-th prime, each number a bc_num that bc
allocates and frees."""


def generate(scale: int, seed: int, out) -> None:
    out.write("define p(n) {\n  auto c, i, j, f\n  c = 0\n  for (i = 2; c < n; i++) {\n    f = 1\n"
              "    for (j = 2; j * j <= i; j++) {\n      if (i % j == 0) { f = 0; break; }\n    }\n"
              "    if (f) c = c + 1\n  }\n  return (i - 1)\n}\n")
    out.write(f"p({1000 * scale + seed % 10})\nquit\n")
