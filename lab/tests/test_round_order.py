"""A round's order: every cell once, shuffled, with each program's cells back to back (evaluation/run.py)."""
import random

from strata_lab.evaluation.plan import Cell
from strata_lab.evaluation.run import round_order


def _cells():
    return [Cell(w, m, s, a, "Adv0") for w, s in (("compiler", 20), ("mempool", 4), ("router", 6), ("mempool", 8))
            for m in ("custom", "reap", "naive") for a in ("glibc", "mimalloc")]


def test_every_cell_runs_once():
    cells = _cells()
    assert sorted(round_order(list(cells), random.Random(3)), key=str) == sorted(cells, key=str)


def test_a_programs_cells_are_back_to_back():
    order = round_order(_cells(), random.Random(5))
    programs = [(c.workload, c.scale) for c in order]
    runs = [p for i, p in enumerate(programs) if i == 0 or programs[i - 1] != p]
    assert len(runs) == len(set(programs)) == 4   # one stretch per (workload, scale)


def test_rounds_differ_in_program_order_and_within_a_program():
    orders = [round_order(_cells(), random.Random(seed)) for seed in range(8)]
    assert len({tuple((c.workload, c.scale) for c in o[::6]) for o in orders}) > 1
    assert len({tuple(c for c in o if c.workload == "compiler") for o in orders}) > 1


def test_the_same_seed_gives_the_same_order():
    assert round_order(_cells(), random.Random(7)) == round_order(_cells(), random.Random(7))


def _matrix():
    """A program's cells as the default config has them: modes x allocators x presets."""
    return [Cell(w, m, 20, a, p) for w in ("compiler", "interp") for m in ("custom", "reap", "naive")
            for a in ("glibc", "jemalloc", "mimalloc") for p in ("Adv0", "Adv3")]


def _stretches(values: list) -> int:
    return sum(1 for i, v in enumerate(values) if i == 0 or values[i - 1] != v)


def test_an_allocators_cells_and_a_presets_modes_are_neighbours():
    for seed in range(10):
        order = round_order(_matrix(), random.Random(seed))
        allocators = [(c.workload, c.allocator) for c in order]
        presets = [(c.workload, c.allocator, c.preset) for c in order]
        assert _stretches(allocators) == len(set(allocators)) == 6
        assert _stretches(presets) == len(set(presets)) == 12
        for i, c in enumerate(order):   # reap and custom of one allocator and preset: at most one run between
            if c.mode == "reap":
                custom = next(j for j, d in enumerate(order)
                              if d.mode == "custom" and (d.workload, d.allocator, d.preset)
                              == (c.workload, c.allocator, c.preset))
                assert abs(i - custom) <= 2


def test_every_level_is_shuffled():
    orders = [round_order(_matrix(), random.Random(seed)) for seed in range(12)]
    assert len({tuple(dict.fromkeys(c.allocator for c in o if c.workload == "compiler")) for o in orders}) > 1
    assert len({tuple(dict.fromkeys(c.preset for c in o if c.workload == "compiler" and c.allocator == "glibc"))
                for o in orders}) > 1
    assert len({tuple(c.mode for c in o if c.workload == "compiler" and c.allocator == "glibc"
                      and c.preset == "Adv0") for o in orders}) > 1
