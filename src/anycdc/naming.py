"""Source names -> target names: folders and columns (pure: no Spark, no I/O).

A source database allows names that a file system or Delta does not take as they are.
Every rule that turns a source name into a target name lives here, so that the pipeline,
``status`` and the tests agree on it:

- **folders** (:func:`path_segment`): one folder per name part (database, schema, table).
  ``/``, ``\\`` and NUL become ``_``; a part that is ``.``/``..``, starts with a dot or
  with ``_anycdc`` gets a leading ``_`` (nothing climbs out of the target, hides, or
  lands among anycdc's own tables); a part longer than :data:`MAX_SEGMENT_BYTES` of UTF-8
  (a 128-character CJK name is ~384 bytes; file systems take 255) is cut at a character
  boundary and ends in ``~`` + 16 hex digits of the SHA-256 of the whole source name.
- **columns** (:func:`assign_columns`): a column keeps its source name exactly, even one
  Delta rejects without column mapping (:func:`needs_column_mapping`: the table then gets
  ``delta.columnMapping.mode = name``). Two names Delta cannot hold side by side get a
  target name of their own: a name equal, ignoring case, to a column already assigned (the
  first to come keeps its name: ``Name`` then ``name``), and every name in anycdc's
  namespace (starting with ``_cdc_``, any case: the metadata columns ``_cdc_op``,
  ``_cdc_position``, ...). Such a column is named ``<name>__<8 hex digits of the SHA-256 of
  the source name>`` (longer digits in the unlikely case that is taken too), and keeps its
  source name in its comment (:data:`SOURCE_COMMENT`).
- **portable columns** (``column_names: portable``, :func:`portable_name`): every name that
  is not plain ASCII (letters, digits, ``_``) or is in anycdc's namespace becomes one that
  is: its runs of other characters turned into ``_``, then ``__`` + 8 hex digits of the
  SHA-256 of the source name (``Order Date`` -> ``Order_Date__<hash>``); the collisions
  above are resolved as under ``exact``. No table then needs column mapping, and every
  Delta reader reads it; the comment keeps the source name.

>>> path_segment("../etc"), path_segment(".hidden"), path_segment("a/b")
('_.._etc', '_.hidden', 'a_b')
>>> assign_columns(["id", "Name", "name", "_cdc_op"], {})
{'id': 'id', 'Name': 'Name', 'name': 'name__82a3537f', '_cdc_op': '_cdc_op__0fbd44a4'}
>>> assign_columns(["id", "Order Date", "名前"], {}, "portable")
{'id': 'id', 'Order Date': 'Order_Date__eda3f545', '名前': 'col__7ec26292'}
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Final, Literal

MAX_SEGMENT_BYTES: Final = 255
"""The longest folder name most file systems take (ext4, XFS, APFS, NTFS: 255)."""
HASH_DIGITS: Final = 16
"""Hex digits of the SHA-256 that end a shortened folder name."""
COLUMN_HASH_DIGITS: Final = 8
"""Hex digits of the SHA-256 that end a renamed column."""
META_PREFIX: Final = "_cdc_"
"""anycdc's own columns start with this (any case): a source column that does is renamed."""
SYSTEM_FOLDER: Final = "_anycdc"
SOURCE_COMMENT: Final = "anycdc source name: "
"""The comment of a renamed column: this prefix, then the exact source name."""
DELTA_INVALID: Final = frozenset(" ,;{}()\n\t=")
"""Characters Delta refuses in a column name unless the table has column mapping."""
MAPPED_TOO: Final = frozenset(".")
"""Accepted by Delta without mapping, but a dot reads as a nested field in many readers and
in Delta's own statistics paths: mapped too."""
ColumnNames = Literal["exact", "portable"]
"""How source column names become target names (the ``column_names`` setting)."""
COLUMN_NAMES: Final[tuple[ColumnNames, ...]] = ("exact", "portable")
_PORTABLE: Final = re.compile(r"[A-Za-z0-9_]+")
_NOT_PORTABLE: Final = re.compile(r"[^A-Za-z0-9_]+")


def sha_hex(text: str, digits: int) -> str:
    """The first ``digits`` hex digits of the SHA-256 of ``text`` (UTF-8; lone surrogates
    kept as they are, so every Python string has one).

    >>> sha_hex("name", 8)
    '82a3537f'
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:digits]


def path_segment(name: str) -> str:
    """The folder name for one part of a source table's name (see the module docstring).

    >>> path_segment("orders"), path_segment(".."), path_segment("_anycdc")
    ('orders', '_..', '__anycdc')
    >>> long = path_segment("表" * 128)
    >>> len(long.encode()), long.endswith("~" + sha_hex("表" * 128, 16))
    (254, True)
    """
    cleaned = _cleaned(name)
    encoded = cleaned.encode("utf-8", "surrogatepass")
    if len(encoded) <= MAX_SEGMENT_BYTES:
        return cleaned
    suffix = "~" + sha_hex(name, HASH_DIGITS)
    head = encoded[: MAX_SEGMENT_BYTES - len(suffix)]
    # cut at a character boundary: drop the bytes of a character the cut split
    text = head.decode("utf-8", "ignore")
    return text + suffix


# Spark escapes these in a partition folder name (``%XX``: three bytes for one), as Hive does
_PARTITION_ESCAPED: Final = frozenset("\"#%'*/:=?\\\x7f{[]^")


def partition_value(value: str, column: str) -> str:
    """``value`` as the value of a partition column ``column``, short enough for its folder
    (``column=value``, escaped as Spark escapes it) to fit :data:`MAX_SEGMENT_BYTES`; a
    longer one is ``~`` + 32 hex digits of its SHA-256 (one value, one folder, always).

    >>> partition_value("shop/orders", "table")
    'shop/orders'
    >>> partition_value("shop/" + "表" * 100, "table") == "~" + sha_hex("shop/" + "表" * 100, 32)
    True
    """
    size = len(column) + 1
    for char in value:
        if char in _PARTITION_ESCAPED or ord(char) < 0x20:
            size += 3
        else:
            size += len(char.encode("utf-8", "surrogatepass"))
    return value if size <= MAX_SEGMENT_BYTES else "~" + sha_hex(value, 32)


def shortened(name: str) -> bool:
    """Whether :func:`path_segment` cut ``name`` (its full name is then worth recording).

    >>> shortened("orders"), shortened("x" * 300)
    (False, True)
    """
    return len(_cleaned(name).encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES


def _cleaned(name: str) -> str:
    """``name`` with what may not be in a folder name replaced, before any shortening."""
    cleaned = name.replace("/", "_").replace("\\", "_").replace("\0", "_")
    if cleaned.startswith(".") or cleaned.startswith(SYSTEM_FOLDER):
        cleaned = "_" + cleaned
    return cleaned


def needs_column_mapping(name: str) -> bool:
    """Whether a column named ``name`` needs a table with Delta column mapping.

    >>> needs_column_mapping("Order Date"), needs_column_mapping("a.b"), needs_column_mapping("名前")
    (True, True, False)
    """
    return any(c in DELTA_INVALID or c in MAPPED_TOO for c in name)


def is_reserved(name: str) -> bool:
    """Whether ``name`` is in anycdc's namespace of column names (``_cdc_*``, any case).

    >>> is_reserved("_cdc_op"), is_reserved("_CDC_Position"), is_reserved("cdc_op")
    (True, True, False)
    """
    return name.lower().startswith(META_PREFIX)


def renamed(name: str, taken: Iterable[str]) -> str:
    """``name`` + ``__`` + hex digits of its hash: the first that no name of ``taken``
    equals, ignoring case (8 digits, more in the unlikely case those are taken).

    >>> renamed("name", ["Name"])
    'name__82a3537f'
    """
    lowered = {t.lower() for t in taken}
    for digits in range(COLUMN_HASH_DIGITS, 65, 4):
        candidate = f"{name}__{sha_hex(name, digits)}"
        if candidate.lower() not in lowered:
            return candidate
    # 64 digits taken too: a counter on top (only a schema built to collide gets here)
    n = 2
    while f"{candidate}_{n}".lower() in lowered:
        n += 1
    return f"{candidate}_{n}"


def is_portable(name: str) -> bool:
    """Whether every Delta reader takes ``name`` as it is: ASCII letters, digits and ``_``
    only, and not in anycdc's namespace (what :func:`portable_name` gives).

    >>> is_portable("order_date"), is_portable("Order Date"), is_portable("名前"), is_portable("_cdc_op")
    (True, False, False, False)
    """
    return _PORTABLE.fullmatch(name) is not None and not is_reserved(name)


def portable_name(name: str) -> str:
    """``name`` as :func:`is_portable` takes it: kept when it is already, else its runs of
    other characters as ``_`` (leading and trailing ``_`` dropped, so it leaves anycdc's
    namespace; ``col`` when nothing is left), then ``__`` + 8 hex digits of the SHA-256 of
    ``name``: the same name always gets the same one, and two names the same only after
    the replacement differ in their digits.

    >>> portable_name("order_id"), portable_name("Order Date"), portable_name("a.b")
    ('order_id', 'Order_Date__eda3f545', 'a_b__2e7336dc')
    >>> portable_name("_cdc_op"), portable_name("名前")
    ('cdc_op__0fbd44a4', 'col__7ec26292')
    """
    if is_portable(name):
        return name
    base = _NOT_PORTABLE.sub("_", name).strip("_") or "col"
    return f"{base}__{sha_hex(name, COLUMN_HASH_DIGITS)}"


def assign_columns(
    sources: Iterable[str], existing: Mapping[str, str], scheme: ColumnNames = "exact"
) -> dict[str, str]:
    """Source column -> target column for ``existing`` (kept as they are) and then each of
    ``sources`` in order (see the module docstring); ``scheme``: the ``column_names``
    setting, for the columns new to the table (``portable``: :func:`portable_name` first).

    ``existing``: the table's assignments so far (source -> target; a column whose comment
    names no source is its own source). The one place a column's target name is chosen:
    the scheme is a value, so a per-table setting passes its table's.

    >>> assign_columns(["name", "id"], {"Name": "Name"})
    {'Name': 'Name', 'name': 'name__82a3537f', 'id': 'id'}
    >>> assign_columns(["_cdc_x"], {"_cdc_x": "_cdc_x"})  # kept: the table has it so
    {'_cdc_x': '_cdc_x'}
    >>> assign_columns(["a b", "a_b__c8687a08"], {}, "portable")  # a source named like a target
    {'a b': 'a_b__c8687a08', 'a_b__c8687a08': 'a_b__c8687a08__3600b4f0'}
    """
    if scheme not in COLUMN_NAMES:
        raise ValueError(f"column_names must be {' or '.join(COLUMN_NAMES)}, got {scheme!r}")
    out = dict(existing)
    taken = {target.lower() for target in out.values()}
    for source in sources:
        if source in out:
            continue
        target = source if scheme == "exact" else portable_name(source)
        if is_reserved(target) or target.lower() in taken:
            # the hash of what was to be its name: stays portable when that was
            target = renamed(target, taken)
        out[source] = target
        taken.add(target.lower())
    return out


def source_comment(source: str) -> str:
    """The comment a renamed column carries (:data:`SOURCE_COMMENT` + its source name)."""
    return SOURCE_COMMENT + source


def source_of(target: str, comment: str | None) -> str:
    """The source name of the column ``target`` whose comment is ``comment``.

    >>> source_of("name__82a3537f", "anycdc source name: name"), source_of("id", None)
    ('name', 'id')
    """
    if comment and comment.startswith(SOURCE_COMMENT):
        return comment[len(SOURCE_COMMENT) :]
    return target
