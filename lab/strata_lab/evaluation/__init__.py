"""`strata-lab evaluate`: plan (plan.py), run (run.py: profiles, rounds,
memory runs, benchmarks, valgrind, adaptive rounds), one cell's runs
(cell_runs.py), the results folder (folder.py), progress (progress.py),
machine metadata (machine.py). The report is strata_lab.report."""
from .command import DEFAULT_CONFIG, command, report_command
from .folder import BENCH_FIELDS, MEMORY_FIELDS, PROFILE_FIELDS, RUN_FIELDS, VALGRIND_FIELDS, results_folder
from .plan import Cell, Plan, plan
from .run import evaluate

__all__ = ["BENCH_FIELDS", "Cell", "DEFAULT_CONFIG", "MEMORY_FIELDS", "PROFILE_FIELDS", "Plan", "RUN_FIELDS",
           "VALGRIND_FIELDS", "command", "evaluate", "plan", "report_command", "results_folder"]
