"""Format options, declared once with their type and default, parsed once.

Each option a format accepts is one :class:`OptionSpec`: its name, its help, the default
as a user would write it, the type shown to people (``kind``) and the parser from the
``--option K=V`` text to the typed value. :func:`build_options` checks every given name,
parses every value (the default too) and raises an :class:`~anycdc.errors.OptionError`
naming the format, the option and the reason; a format then reads typed values with
:meth:`anycdc.formats.base.Format.option` and never parses the text itself.

>>> LEGACY = flag("legacy", "rows swapped")
>>> build_options("x", (LEGACY,), {"legacy": "yes"}).value(LEGACY)
True
>>> build_options("x", (LEGACY,), {"legacy": "maybe"})
Traceback (most recent call last):
...
anycdc.errors.OptionError: x: option legacy: expected boolean, got 'maybe'
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar, cast

from anycdc.errors import OptionError
from anycdc.values import parse_bool, zone_info

T = TypeVar("T")

# the type names ``anycdc formats --options`` shows
KIND_BOOL: Final = "bool"
KIND_INT: Final = "int"
KIND_TEXT: Final = "text"
KIND_NAMES: Final = "names"  # comma-separated
KIND_SECONDS: Final = "seconds"
KIND_ZONE: Final = "zone"


@dataclass(frozen=True, slots=True)
class OptionSpec(Generic[T]):
    """One ``--option K=V`` a format accepts: its documentation, its type and its default.

    ``parse`` turns the text into the typed value (a ``ValueError`` says why it cannot);
    ``missing`` is the value of an option that is neither given nor defaulted. Build one
    with :func:`flag`, :func:`choice`, :func:`text`, :func:`optional_text` or
    :func:`names`; a format with a value of its own shape passes its
    parser to :func:`typed`.
    """

    name: str
    help: str
    default: str | None
    kind: str
    parse: Callable[[str], T]
    missing: T

    def value(self, raw: str | None) -> T:
        """The typed value of ``raw`` (None: the default, else :attr:`missing`)."""
        if raw is None:
            raw = self.default
        return self.missing if raw is None else self.parse(raw)


def typed(
    name: str,
    help: str,
    parse: Callable[[str], T],
    *,
    kind: str,
    default: str,
) -> OptionSpec[T]:
    """An option of a format's own type, parsed by ``parse`` (always defaulted)."""
    return OptionSpec(name, help, default, kind, parse, cast(T, None))


def flag(name: str, help: str, default: bool = False) -> OptionSpec[bool]:
    """A boolean option: true/false, yes/no, 1/0 (:func:`anycdc.values.parse_bool`)."""
    return OptionSpec(name, help, "true" if default else "false", KIND_BOOL, parse_bool, default)


def choice(name: str, help: str, choices: Sequence[str], default: str) -> OptionSpec[str]:
    """One string among ``choices``."""
    allowed = tuple(choices)

    def parse(raw: str) -> str:
        raw = raw or default  # an empty value is the default, as before typed options
        if raw not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, got {raw!r}")
        return raw

    return OptionSpec(name, help, default, "|".join(allowed), parse, default)


def text(name: str, help: str, default: str) -> OptionSpec[str]:
    """Free text with a default (an empty value gives the default: a name is never empty)."""

    def parse(raw: str) -> str:
        return raw or default

    return OptionSpec(name, help, default, KIND_TEXT, parse, default)


def optional_text(name: str, help: str, kind: str = KIND_TEXT) -> OptionSpec[str | None]:
    """Free text without a default: None when not given (or given empty)."""

    def parse(raw: str) -> str | None:
        return raw or None

    return OptionSpec(name, help, None, kind, parse, None)


def parse_names(raw: str) -> tuple[str, ...]:
    """Comma-separated names, trimmed, empties dropped; a text that names none is an
    error (``primary_key=`` is a slip, not "no key").

    >>> parse_names(" id, tenant ,")
    ('id', 'tenant')
    >>> parse_names(" , ")
    Traceback (most recent call last):
    ...
    ValueError: ' , ' names no column: give NAME[,NAME]
    """
    found = tuple(p.strip() for p in raw.split(",") if p.strip())
    if not found:
        raise ValueError(f"{raw!r} names no column: give NAME[,NAME]")
    return found


def names(name: str, help: str) -> OptionSpec[tuple[str, ...] | None]:
    """Comma-separated names (e.g. key columns), None when not given."""
    return OptionSpec(name, help, None, KIND_NAMES, parse_names, None)


def parse_zone(raw: str) -> dt.tzinfo | None:
    """A zone id (``Asia/Shanghai``, ``UTC``, ``+08:00``); empty: None."""
    return zone_info(raw) if raw else None


PRIMARY_KEY: Final = names(
    "primary_key",
    "primary-key column names, comma-separated; used where the message names none "
    "(or to override it)",
)
TIMEZONE: Final[OptionSpec[dt.tzinfo | None]] = OptionSpec(
    "timezone",
    "zone id (e.g. Asia/Shanghai) for datetimes the source sends without a zone; "
    "default: keep them zone-less",
    None,
    KIND_ZONE,
    parse_zone,
    None,
)
COMMON_OPTIONS: Final[tuple[OptionSpec[Any], ...]] = (PRIMARY_KEY, TIMEZONE)


@dataclass(frozen=True, slots=True)
class FormatOptions:
    """Validated options of one format instance: ``values`` as given (a clone is built
    from them), ``typed`` parsed by each option's spec."""

    primary_key: tuple[str, ...] | None = None
    timezone: dt.tzinfo | None = None
    values: Mapping[str, str] = field(default_factory=dict)
    typed: Mapping[str, Any] = field(default_factory=dict)

    def value(self, spec: OptionSpec[T]) -> T:
        """The typed value of ``spec``; its default where the format does not declare it
        (a family member without its parent's option, e.g. drs-json's ``binary``)."""
        try:
            return cast(T, self.typed[spec.name])
        except KeyError:
            return spec.value(None)

    def get(self, name: str, default: str | None = None) -> str | None:
        """The text of an option as given (or defaulted): for messages and clones."""
        return self.values.get(name, default)


def build_options(
    format_id: str, specs: Sequence[OptionSpec[Any]], raw: Mapping[str, str] | None
) -> FormatOptions:
    """Check raw ``K=V`` options against ``specs`` and parse each once: unknown names and
    values a spec refuses are an :class:`OptionError` (``<format>: option <name>: why``)."""
    given = {k: str(v) for k, v in (raw or {}).items()}
    known = {spec.name: spec for spec in specs}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise OptionError(
            f"{format_id}: unknown option(s) {', '.join(unknown)}; "
            f"valid options: {', '.join(sorted(known))}"
        )
    values = {spec.name: spec.default for spec in specs if spec.default is not None}
    values.update(given)
    typed_values: dict[str, Any] = {}
    for spec in specs:
        try:
            typed_values[spec.name] = spec.value(values.get(spec.name))
        except ValueError as exc:
            raise OptionError(f"{format_id}: option {spec.name}: {exc}") from None
    return FormatOptions(
        typed_values.get(PRIMARY_KEY.name),
        typed_values.get(TIMEZONE.name),
        values,
        typed_values,
    )


__all__: Sequence[str] = [
    "COMMON_OPTIONS",
    "PRIMARY_KEY",
    "TIMEZONE",
    "FormatOptions",
    "OptionSpec",
    "build_options",
    "choice",
    "flag",
    "names",
    "optional_text",
    "parse_names",
    "parse_zone",
    "text",
    "typed",
]
