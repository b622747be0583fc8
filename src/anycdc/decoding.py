"""Decode messages in a named format or auto-detected per message.

:class:`MessageDecoder` is what the CLI and the pipeline use: it holds one
configured format instance per format id, detects the format of each message
when asked to (a topic may mix formats), and always reports failures as
:class:`~anycdc.errors.DecodeError` so the caller's policy (report, count,
dead-letter) lives in one place.

>>> dec = MessageDecoder("auto")
>>> fmt, events = dec.decode(b'{"database":"d","table":"t","type":"DELETE","isDdl":false,"data":[{"id":"1"}],"old":null,"pkNames":["id"],"mysqlType":{"id":"int"},"sqlType":{"id":4},"es":1,"ts":2,"id":3,"sql":""}')
>>> fmt, events[0].op.value, dict(events[0].before)
('canal-json', 'delete', {'id': 1})

A row change must name its table (the pipeline could route it to none):

>>> dec.decode(b'{"database":"d","table":"","type":"DELETE","isDdl":false,"data":[{"id":"1"}],"old":null,"pkNames":["id"],"es":1,"ts":2,"id":3,"sql":""}')
Traceback (most recent call last):
anycdc.errors.DecodeError: canal-json: $.table: missing or empty table name: a row change (delete) must name its table
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from anycdc.errors import DecodeError, OptionError
from anycdc.event import ChangeEvent
from anycdc.formats import (
    NOT_JSON,
    Detection,
    detect_parsed,
    format_class,
    format_ids,
    get_format,
)
from anycdc.formats.base import NAMED_OPS, Format, parse_json

AUTO: Final = "auto"
Found = tuple[Detection, Any]
"""What :func:`~anycdc.formats.detect_parsed` gives: the verdict and the parsed message."""


class MessageDecoder:
    """Decodes raw message values into canonical events.

    Parameters
    ----------
    format_id:
        A registered format id, or ``"auto"`` to detect the format of every message.
    options:
        ``K=V`` options. With ``auto`` each option goes to the formats that accept
        it; an option no format accepts is an error.
    canonical_text:
        The events' images may hold canonical text in place of typed values
        (:meth:`Format.keep_canonical_text`): for the changelog stage only, which renders
        every value as that text anyway.
    """

    def __init__(
        self,
        format_id: str = AUTO,
        options: Mapping[str, str] | None = None,
        *,
        canonical_text: bool = False,
    ) -> None:
        self.format_id = format_id
        self.options = dict(options or {})
        self.canonical_text = canonical_text
        self._formats: dict[str, Format] = {}
        if format_id == AUTO:
            self._check_auto_options()
        else:
            self._formats[format_id] = self._configured(get_format(format_id, self.options))

    def _configured(self, fmt: Format) -> Format:
        if self.canonical_text:
            fmt.keep_canonical_text()
        return fmt

    def _check_auto_options(self) -> None:
        known = {spec.name for fid in format_ids() for spec in format_class(fid).option_specs()}
        unknown = sorted(set(self.options) - known)
        if unknown:
            raise OptionError(
                f"unknown option(s) {', '.join(unknown)}; valid options: {', '.join(sorted(known))}"
            )

    def format_for(self, format_id: str) -> Format:
        """The configured instance of one format (created on first use)."""
        fmt = self._formats.get(format_id)
        if fmt is None:
            accepted = {spec.name for spec in format_class(format_id).option_specs()}
            fmt = get_format(format_id, {k: v for k, v in self.options.items() if k in accepted})
            self._formats[format_id] = self._configured(fmt)
        return fmt

    def detect_ahead(self, values: Sequence[bytes | None]) -> Sequence[Found | None]:
        """Auto mode: the detection of each of a run of messages, made before any of them is
        decoded, each for :meth:`decode`'s ``found``; None for a tombstone, and for every
        message of a named format (nothing to detect). A stream's caller that detects a run,
        then decodes it, does the work of one message at a time in less time
        (:data:`anycdc.spark.decode.MESSAGE_RUN`).

        >>> dec = MessageDecoder("auto")
        >>> ahead = dec.detect_ahead([b'{"op":"c","after":{"id":1},"source":{"table":"t"}}', None])
        >>> ahead[0][0].format, ahead[1]
        ('debezium-json', None)
        >>> dec.decode(b'{"op":"c","after":{"id":1},"source":{"table":"t"}}', None, ahead[0])[0]
        'debezium-json'
        >>> MessageDecoder("canal-json").detect_ahead([b"{}"])
        (None,)
        """
        if self.format_id != AUTO:
            return (None,) * len(values)
        found: list[Found | None] = []
        for value in values:
            try:
                found.append(None if value is None else detect_parsed(value))
            except Exception:  # a bug: decode detects again, and says it for this message
                found.append(None)
        return found

    def decode(
        self, value: bytes | None, key: bytes | None = None, found: Found | None = None
    ) -> tuple[str, list[ChangeEvent]]:
        """Decode one message value; returns ``(format_id, events)``. ``found``: the
        message's detection, made ahead (:meth:`detect_ahead`), in auto mode.

        Raises :class:`DecodeError` (format ``unknown`` when detection fails), also for a
        row change (:data:`~anycdc.formats.base.NAMED_OPS`) that names no table
        (:meth:`Format.unnamed_table`): a dead letter, never a changelog row no table
        takes. Formats decode what the message says (an absent name is None, never
        guessed); the rule is the pipeline's, for every format alike, and lives here.
        """
        format_id = self.format_id
        if format_id != AUTO:
            fmt = self._formats[format_id]
            events = fmt.decode(value, key)
        elif value is None:
            return AUTO, []  # a tombstone carries no shape to detect
        else:
            detection, parsed = detect_parsed(value) if found is None else found
            if not detection.known:
                not_json = value if parsed is NOT_JSON else None
                reason = _undetected_reason(detection.candidates, not_json)
                raise DecodeError("unknown", "$", reason)
            format_id = detection.format
            fmt = self.format_for(format_id)
            # parsed once: detection's value is what decode_slow would parse (the same
            # exact parser); decode(value) would parse the bytes again
            events = (
                fmt.decode(value, key)
                if parsed is NOT_JSON
                else fmt.decode_parsed(value, parsed, key)
            )
        for event in events:  # the one place of this rule (inline: once per message)
            if not event.table and event.op in NAMED_OPS:
                raise fmt.unnamed_table(event)
        return format_id, events


def _undetected_reason(candidates: tuple[tuple[str, float], ...], not_json: bytes | None) -> str:
    """Why detection named no format; for bytes that are no JSON, why, as a named JSON
    format would say (parsed again: only a message that fails pays for it).

    >>> _undetected_reason((), b'{"a": 1')
    'format not recognised: invalid JSON: Input data was truncated (and no binary format claims it)'
    """
    if not candidates and not_json is not None:
        try:
            parse_json("unknown", not_json)
        except DecodeError as exc:
            return f"format not recognised: {exc.reason} (and no binary format claims it)"
    if not candidates:
        return "format not recognised (not a message of any known format)"
    listed = ", ".join(f"{fid} {score:.2f}" for fid, score in candidates[:3])
    return f"format not recognised with confidence (candidates: {listed})"
