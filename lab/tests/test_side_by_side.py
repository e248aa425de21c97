"""The evaluation's deterministic phase: its steps run side by side, their rows are logged by one thread, and
after a Ctrl-C the steps not started are cancelled and a failed row is dropped."""
import io
import threading
import time

from strata_lab.evaluation import bench_steps
from strata_lab.evaluation.progress import Interrupt, Progress
from strata_lab.evaluation.run import side_by_side


class ListLog:
    def __init__(self):
        self.rows, self.threads = [], set()

    def write(self, row):
        self.rows.append(row)
        self.threads.add(threading.get_ident())


def test_two_steps_run_at_once_and_one_thread_logs_them():
    meeting = threading.Barrier(2, timeout=20)  # one step at a time would wait here and break the barrier

    def step(name):
        meeting.wait()
        return {"status": "ok", "name": name}
    log = ListLog()
    jobs = [(name, lambda name=name: step(name), log, ("bench", name)) for name in ("a", "b")]
    logged = side_by_side(jobs, Progress(2, io.StringIO()), Interrupt(), workers=2)
    assert sorted(logged) == [("bench", "a"), ("bench", "b")]
    assert sorted(r["name"] for r in log.rows) == ["a", "b"]
    assert log.threads == {threading.get_ident()}


def test_after_ctrl_c_a_failed_row_is_dropped_and_the_rest_cancelled():
    interrupt = Interrupt()
    ran = []

    def failing():
        interrupt.requested = True  # the Ctrl-C that killed this step's child
        ran.append("failing")
        return {"status": "crashed"}

    def later():
        time.sleep(0.1)  # 2 s in all: the cancel comes long before
        ran.append("later")
        return {"status": "ok"}
    log = ListLog()
    jobs = [("failing", failing, log, ("bench", "x"))] + [(f"later{i}", later, log, ("bench", i)) for i in range(20)]
    logged = side_by_side(jobs, Progress(21, io.StringIO()), interrupt, workers=1)
    assert ran[0] == "failing" and "crashed" not in [r["status"] for r in log.rows]
    assert len(ran) < len(jobs) and len(logged) == len(ran) - 1  # the steps not started never ran


def test_only_counted_benchmarks_are_deterministic():
    assert bench_steps.deterministic(("object-drag", 1, "compiler", "naive"))
    assert bench_steps.deterministic(("pages", 1, "cfrac", "glibc"))
    assert bench_steps.deterministic(("zero-cost-callgrind", 0, "bump", ""))
    assert not bench_steps.deterministic(("zero-cost", 1, "bump", ""))  # timed
    assert not bench_steps.deterministic(("drag", 1, "reap", ""))      # its peak RSS is measured
