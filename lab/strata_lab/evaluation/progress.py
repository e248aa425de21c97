"""Progress on stderr (the running step, done/total, the time left) and
Ctrl-C handling: the run in progress finishes, then a partial report."""
import signal
import sys
import time
from typing import Optional


class Progress:
    def __init__(self, total: int, stream=sys.stderr):
        self.total = total
        self.done = 0
        self.stream = stream
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.durations = {}   # key -> list of seconds
        self.remaining = {}   # key -> steps still to do
        self.last_line = 0.0

    def expect(self, key, steps: int) -> None:
        self.remaining[key] = self.remaining.get(key, 0) + steps

    def eta(self) -> Optional[float]:
        all_durations = [d for ds in self.durations.values() for d in ds]
        if not all_durations:
            return None
        overall = sum(all_durations) / len(all_durations)
        left = 0.0
        for key, steps in self.remaining.items():
            mine = self.durations.get(key)
            left += steps * (sum(mine) / len(mine) if mine else overall)
        return left

    def show(self, what: str) -> None:
        eta = self.eta()
        eta_text = "ETA --:--" if eta is None else f"ETA {int(eta // 60):d}:{int(eta % 60):02d}"
        width = 24
        filled = int(width * self.done / max(1, self.total))
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {eta_text}  {what}"
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + line[:150].ljust(150))
            self.stream.flush()
        elif now - self.last_line > 10 or self.done == 0 or self.done == self.total:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last_line = now

    def finished(self, key, seconds: float) -> None:
        self.done += 1
        self.durations.setdefault(key, []).append(seconds)
        if key in self.remaining:
            self.remaining[key] = max(0, self.remaining[key] - 1)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


class Interrupt:
    """SIGINT sets a flag: the run in progress is finished (or dropped, if the
    child died of the same Ctrl-C) and the evaluation stops with a partial report."""

    def __init__(self):
        self.requested = False
        self.previous = None

    def __enter__(self):
        self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        self.requested = True
        sys.stderr.write("\nstrata-lab evaluate: interrupted; finishing the current run, then writing a "
                         "partial report (Ctrl-C again to stop at once)\n")

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous)
