"""strata-lab bench layers runs the 2001 paper's §5 pairs too: XallocHeap and
ObstackHeap against the originals, each pair on one sequence."""
import re

from conftest import lab_ok


def test_layers_benchmark_compares_the_special_purpose_layers_with_the_originals():
    out = lab_ok("bench", "layers", "--rounds", "5", "--ops", "20000", "--callgrind-ops", "5000").stdout
    assert "## Special-purpose layers against the originals (§5): 5 interleaved rounds, 20000 operations each" in out
    for pair in ("xalloc-layers / xalloc-hand", "obstack-layers / obstack-gnu"):
        ratio = re.search(rf"\| {re.escape(pair)} \| ([0-9.]+) \|", out)
        assert ratio and 0.2 < float(ratio.group(1)) < 5, out
    counts = dict(re.findall(r"\| (xalloc-\w+|obstack-\w+) \| ([0-9,]+) \|", out))
    assert set(counts) == {"xalloc-layers", "xalloc-hand", "obstack-layers", "obstack-gnu"}
    assert all(int(v.replace(",", "")) > 5000 for v in counts.values())
