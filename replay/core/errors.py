"""The kinds of failure the engine tells apart.

`InputError` is the user's: bad input that the command line reports in one line with exit code 2.
`HarnessError` is ours or the machine's (a crashed environment, an API fault, a timeout of the
harness itself): it marks a cell `error` and is never turned into a label.
`Halt` is a fault no further work can get past (a model endpoint that cannot be reached, an API
key the server refuses): the command stops in one line with exit code 2 and records nothing from
the work it interrupted.
"""


class ReplayError(Exception):
    """Base class of the engine's own exceptions."""


class InputError(ReplayError):
    """Bad input: a malformed file, an unknown id, a patch that does not apply, a missing key."""


class HarnessError(ReplayError):
    """A fault of the harness or the machine; the work it interrupted is retried later."""


class Halt(ReplayError):
    """A fault that every further model call would meet again: the command stops (exit 2), and
    the work it interrupted is neither recorded nor labelled; work finished before stays."""


class EnvironmentFault(HarnessError):
    """An environment could not run a command (crashed, vanished, refused)."""


class SnapshotMismatch(HarnessError):
    """A restored tree does not have the fingerprint its snapshot recorded."""
