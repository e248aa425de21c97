"""Builds and drops large dicts, lists and sets; prints counts and a checksum.

Run by tests/programs/run_program.sh with and without a preloaded malloc: the
output must be identical. Deterministic (no hash() of str, no timing)."""
import hashlib


def build_dict(n, salt):
    d = {}
    for i in range(n):
        key = f"key-{salt}-{i * 7919 % n}"
        d[key] = [i, str(i) * (i % 9), (i, salt), {"n": i % 13}]
    return d


def main():
    digest = hashlib.sha256()
    total = 0
    for rnd in range(2):
        d = build_dict(100_000, rnd)
        sample = sorted(d.items())[::97]
        for key, value in sample:
            digest.update(key.encode())
            digest.update(repr(value).encode())
        nested = [[j] * (j % 64) for j in range(30_000)]
        total += sum(map(len, nested)) + len(d)
        for key in list(d)[::2]:  # drop half, then grow again: holes to reuse
            del d[key]
        d.update((f"again-{i}", bytes(i % 300)) for i in range(60_000))
        total += len(d) + sum(len(v) for v in d.values() if isinstance(v, bytes))
        words = {f"w{i % 50_000}-{rnd}" for i in range(200_000)}
        total += len(words)
        del d, nested, sample, words
    text = " ".join(str(i) for i in range(300_000))
    digest.update(text.encode())
    parts = text.split()
    total += len(parts) + len("".join(reversed(parts)))
    print(total, digest.hexdigest())


main()
