"""The two ways a lab command fails."""


class LabError(Exception):
    """Bad input or setup: reported as `strata-lab: error: ...`, exit status 2.
    Raised before the program is started whenever possible."""


class ProgramFailed(Exception):
    """The measured program crashed or exited non-zero: exit status 1."""
