"""Errors raised by anycdc.

Every decoding problem is a :class:`DecodeError` that names the format, the JSON
path (or Avro field path) inside the message and the reason, in the style of
msgspec: ``canal-json: $.old[0]: expected object, got string``. The errors are
plain data and pickle cleanly, so Spark executors can ship them to the driver
and the pipeline can store them in the dead-letter table.

>>> err = DecodeError("canal-json", "$.old[0]", "expected object, got string")
>>> str(err)
'canal-json: $.old[0]: expected object, got string'
"""

from __future__ import annotations

from typing import Any


class AnyCdcError(Exception):
    """Base class of every error anycdc raises on purpose."""


class DecodeError(AnyCdcError, ValueError):
    """A message could not be decoded.

    Parameters
    ----------
    format_id:
        The format that was tried (``"unknown"`` when detection failed).
    path:
        Where in the message the problem is, ``$`` being the whole message.
    reason:
        What was expected and what was found.
    """

    def __init__(self, format_id: str, path: str, reason: str) -> None:
        self.format_id = format_id
        self.path = path
        self.reason = reason
        super().__init__(f"{format_id}: {path}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.format_id, self.path, self.reason))


class EncodeError(AnyCdcError, ValueError):
    """A canonical event cannot be expressed in the requested format."""

    def __init__(self, format_id: str, reason: str) -> None:
        self.format_id = format_id
        self.reason = reason
        super().__init__(f"{format_id}: cannot encode: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.format_id, self.reason))


class OptionError(AnyCdcError, ValueError):
    """A format or pipeline option is unknown or has an invalid value."""


class ConfigError(OptionError):
    """A configuration file cannot be read or parsed, or one of its keys is wrong; the
    message starts with the file (and ``:LINE:COLUMN`` for a syntax error)."""


class SchemaSourceError(AnyCdcError):
    """A schema registry (or schema folder) cannot answer: unreachable, refusing the
    credentials, misconfigured. Not the message's fault: the pipeline fails the batch (to
    be retried) instead of dead-lettering every message while a registry is down."""


class UnknownFormatError(AnyCdcError, KeyError):
    """A format id that is not registered."""

    def __init__(self, format_id: str, known: list[str]) -> None:
        self.format_id = format_id
        self.known = known
        super().__init__(format_id)

    def __str__(self) -> str:
        return f"unknown format {self.format_id!r}; known formats: {', '.join(self.known)}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.format_id, self.known))


def type_name(value: object) -> str:
    """JSON-ish name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    return (
        "number"
        if isinstance(value, float) or type(value).__name__ == "Decimal"
        else type(value).__name__
    )


class RunFailed(AnyCdcError):
    """A failure that concerns the whole run (the target, the checkpoint, the source): the
    run stops with this one line, never a traceback."""


class ReadError(AnyCdcError):
    """A fresh or consistent read that cannot be served as asked (no such table in the
    target, a cut no longer readable): one line naming the table or cut and why."""


REASON_LIMIT = 400
"""The longest failure reason kept (dead letters, log lines): Spark's messages can run to
pages of plan text."""
_WRAPPERS = ("An error occurred while calling", "Traceback (most recent call last)")


def one_line(exc: BaseException, limit: int = REASON_LIMIT) -> str:
    """A failure in one line: its first meaningful line (Spark's error class and message,
    not py4j's "An error occurred while calling o42.sql" nor a stack), with the type name
    where the message does not say what failed.

    >>> one_line(ValueError("bad value\\n  at line 2"))
    'ValueError: bad value'
    >>> one_line(RuntimeError("An error occurred while calling o1.sql.\\n: java.io.IOException: no"))
    'java.io.IOException: no'
    >>> one_line(KeyError())
    'KeyError'
    """
    text = ""
    for line in str(exc).splitlines():
        line = line.strip().lstrip(":").strip()
        if line and not line.startswith(_WRAPPERS):
            text = line
            break
    name = type(exc).__name__
    named = text.split(":")[0].rstrip()  # "java.io.IOException: ..." names its type
    if not text:
        text = name
    elif not (text.startswith("[") or named.endswith(("Exception", "Error"))):
        text = f"{name}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
