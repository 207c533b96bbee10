"""Errors: every failing libmax_c status becomes a MaxError keeping the code and message."""
from ._lib import lib

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class MaxError(Exception):
    """An error from libmax_c: .code (int), .code_name ("INVALID_ARGUMENT") and the message."""

    def __init__(self, message, code=UNKNOWN, code_name=None):
        super().__init__(message)
        self.message = message
        self.code = int(code)
        self.code_name = code_name or lib.max_status_code_name(self.code).decode()

    def __str__(self):
        return f"{self.code_name}: {self.message}"


class MaxValueError(MaxError, ValueError):
    """INVALID_ARGUMENT."""


class MaxTypeError(MaxError, TypeError):
    """INVALID_ARGUMENT about a dtype (MAX raises TypeError there): a dtype name libmax_c does
    not know, a value that is not a dtype, or a model input of the wrong dtype."""


class MaxNotFoundError(MaxError, LookupError):
    """NOT_FOUND."""


class MaxIndexError(MaxError, IndexError):
    """OUT_OF_RANGE."""


class MaxRuntimeError(MaxError, RuntimeError):
    """Every other code (FAILED_PRECONDITION, DATA_LOSS, ...), and use of a closed handle."""


class MaxDeadlineExceededError(MaxRuntimeError):
    """DEADLINE_EXCEEDED: a call ran past its RunOptions timeout."""


class MaxCancelledError(MaxRuntimeError):
    """CANCELLED: a call stopped because its RunOptions were terminated."""


def error_class(code, dtype=False):
    """The exception class for a status code; dtype=True says the failing call was about a
    dtype, so INVALID_ARGUMENT becomes MaxTypeError rather than MaxValueError."""
    if code == INVALID_ARGUMENT:
        return MaxTypeError if dtype else MaxValueError
    if code == NOT_FOUND:
        return MaxNotFoundError
    if code == OUT_OF_RANGE:
        return MaxIndexError
    if code == DEADLINE_EXCEEDED:
        return MaxDeadlineExceededError
    if code == CANCELLED:
        return MaxCancelledError
    return MaxRuntimeError


def make_error(code, message, dtype=False):
    return error_class(code, dtype)(message, code)


def dtype_mismatch(what, got, expected):
    """The TypeError MAX raises when a value's dtype is not the one asked for."""
    return MaxTypeError(f"{what}: dtype is {got.name} but the model expects {expected.name}",
                        INVALID_ARGUMENT)


def status_error(status, dtype=False, prefix=""):
    """Converts a non-NULL status to an exception and releases it."""
    try:
        code = lib.max_status_code(status)
        msg = (lib.max_status_message(status) or b"").decode("utf-8", "replace")
    finally:
        lib.max_status_release(status)
    return make_error(code, prefix + msg, dtype)


def check(status, dtype=False, prefix=""):
    """Raises the MaxError for a failing status (always releasing it); None passes."""
    if status:
        raise status_error(status, dtype, prefix)


def closed_error(what):
    return MaxRuntimeError(f"{what} is closed", FAILED_PRECONDITION)
