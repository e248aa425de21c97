"""Running the measured program: environment, preload order, exit status,
peak RSS, and an optional sampler called while it runs."""
import os
import select
import signal
import subprocess
import tempfile
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
    stdout: Optional[str] = None       # with capture=True: everything it printed
    stderr_tail: Optional[str] = None  # with capture=True: the last STDERR_TAIL_BYTES of its stderr
    timed_out: bool = False            # killed (with its process group) after timeout_s
    cpu_seconds: Optional[float] = None  # user + system time of the program (and the children it waited for)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def status(self) -> str:
        if self.timed_out:
            return "timed out (killed)"
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


STDERR_TAIL_BYTES = 4096


def _wait_for_exit(pid: int, sampler: Optional[Callable[[int], None]], interval_s: float,
                   deadline: Optional[float]) -> bool:
    """Calls sampler(pid), if any, now and every interval_s until the process
    exits, returning as soon as it does (a pidfd becomes readable at exit), so
    a long interval does not keep a short program's caller waiting. Returns
    True if the deadline (time.monotonic()) came first."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            if sampler is not None:
                sampler(pid)
            wait = interval_s if sampler is not None else None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                wait = remaining if wait is None else min(wait, remaining)
            if select.select([pidfd], [], [], wait)[0]:
                return False
    finally:
        os.close(pidfd)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(command: Sequence[str], preload: Sequence[str], variables: dict,
        sampler: Optional[Callable[[int], None]] = None, interval_s: float = 0.01,
        quiet: bool = False, capture: bool = False, timeout_s: Optional[float] = None,
        cwd: Optional[str] = None) -> RunResult:
    """Runs command to completion. sampler(pid), if given, is called right after
    the start and then every interval_s while the program runs.

    capture: keep its stdout and the tail of its stderr (through files, so a
    chatty program never blocks on a full pipe). timeout_s: after that long the
    program and everything it started are killed (it runs in a process group
    of its own for that, and is killed too if we are interrupted)."""
    if not command:
        raise LabError("no command given (put it after --)")
    if timeout_s is not None and timeout_s <= 0:
        raise LabError(f"timeout {timeout_s}: must be > 0 seconds")
    env = environment(preload, variables)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        streams = {"stdout": out, "stderr": err} if capture else {
            "stdout": subprocess.DEVNULL if quiet else None}
        start = time.monotonic_ns()
        try:
            process = subprocess.Popen(list(command), env=env, cwd=cwd, start_new_session=timeout_s is not None,
                                       **streams)
        except OSError as error:
            raise LabError(f"cannot start {command[0]}: {error.strerror}") from None
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        try:
            timed_out = False
            if sampler is not None or deadline is not None:
                timed_out = _wait_for_exit(process.pid, sampler, interval_s, deadline)
            if timed_out:
                _kill_group(process.pid)
            pid, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # Ctrl-C or an error in the sampler: leave nothing running
            if timeout_s is not None:
                _kill_group(process.pid)
            else:
                process.kill()
            process.wait()
            raise
        wall = time.monotonic_ns() - start
        process.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen quiet
        if timed_out:
            _kill_group(process.pid)  # whatever it started that outlived it
        stdout = stderr_tail = None
        if capture:
            out.seek(0)
            stdout = out.read().decode(errors="replace")
            err.seek(max(0, err.seek(0, os.SEEK_END) - STDERR_TAIL_BYTES))
            stderr_tail = err.read().decode(errors="replace")
    return RunResult(list(command), process.pid, process.returncode, wall, usage.ru_maxrss * 1024,
                     stdout, stderr_tail, timed_out, usage.ru_utime + usage.ru_stime)


def program_peak_rss(result: RunResult, precondition_report: Optional[dict]) -> Optional[int]:
    """The program's own peak RSS: the preconditioner's VmHWM at exit when it
    recorded one. ru_maxrss (the fallback) also counts the pre-exec copy of
    the process that started the program: a floor of the lab's own ~25 MiB."""
    own = precondition_report.get("peak_resident_bytes") if precondition_report else None
    return own if own else result.peak_rss_bytes
