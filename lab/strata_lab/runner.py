"""Running the measured program: environment, preload order, exit status,
peak RSS, and an optional sampler called while it runs."""
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from .errors import LabError, ProgramFailed


@dataclass
class RunResult:
    command: list
    pid: int
    returncode: int            # as subprocess: negative = killed by that signal
    wall_ns: int
    peak_rss_bytes: int        # ru_maxrss of the program (and any children it waited for)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def status(self) -> str:
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = f"signal {-self.returncode}"
            return f"killed by {name}"
        return f"exited with status {self.returncode}"

    def status_json(self) -> dict:
        if self.returncode < 0:
            return {"signal": -self.returncode}
        return {"exit_code": self.returncode}

    def fail_if_not_ok(self, what_is_missing: str = "") -> None:
        if not self.ok:
            message = f"the program {' '.join(self.command)!s} {self.status()}"
            if what_is_missing:
                message += f"; {what_is_missing}"
            raise ProgramFailed(message)


def environment(preload: Sequence[str], variables: dict) -> dict:
    """The program's environment: our shims first in LD_PRELOAD (order matters:
    a shim interposes over whatever comes after it), then any the user had."""
    env = dict(os.environ)
    env.update({k: str(v) for k, v in variables.items()})
    existing = os.environ.get("LD_PRELOAD", "")
    chain = list(preload) + ([existing] if existing else [])
    if chain:
        env["LD_PRELOAD"] = ":".join(chain)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def _sample_until_exit(pid: int, sampler: Callable[[int], None], interval_s: float) -> None:
    """Calls sampler(pid) now and every interval_s until the process exits,
    returning as soon as it does (a pidfd becomes readable at exit), so a long
    interval does not keep a short program's caller waiting."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            sampler(pid)
            if select.select([pidfd], [], [], interval_s)[0]:
                return
    finally:
        os.close(pidfd)


def run(command: Sequence[str], preload: Sequence[str], variables: dict,
        sampler: Optional[Callable[[int], None]] = None, interval_s: float = 0.01,
        quiet: bool = False) -> RunResult:
    """Runs command to completion. sampler(pid), if given, is called right after
    the start and then every interval_s while the program runs."""
    if not command:
        raise LabError("no command given (put it after --)")
    env = environment(preload, variables)
    start = time.monotonic_ns()
    try:
        process = subprocess.Popen(list(command), env=env,
                                   stdout=subprocess.DEVNULL if quiet else None)
    except OSError as error:
        raise LabError(f"cannot start {command[0]}: {error.strerror}") from None
    if sampler is not None:
        _sample_until_exit(process.pid, sampler, interval_s)
    pid, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic_ns() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen quiet
    return RunResult(list(command), process.pid, process.returncode, wall, usage.ru_maxrss * 1024)
