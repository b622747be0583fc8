"""Column changes read from DDL statements (``ALTER TABLE ... ADD/DROP/RENAME/MODIFY``).

Only what the pipeline needs to keep a table's schema in step: added columns
(with their type), type changes, drops and renames. Anything else is
recorded by the changelog and otherwise ignored. Names are data: they are
unquoted here and quoted again wherever they reach SQL.

>>> [(c.action, c.column, c.type) for c in column_changes(
...     "ALTER TABLE `shop`.`orders` ADD COLUMN `note` varchar(20) NULL, ADD discount decimal(5,2)")]
[('add', 'note', 'varchar(20)'), ('add', 'discount', 'decimal(5,2)')]
>>> [(c.action, c.column, c.new_name) for c in column_changes("alter table t rename column a to b")]
[('rename', 'a', 'b')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_ALTER: Final = re.compile(
    r"^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(\S+)\s+(.*)$", re.I | re.S
)
_IDENT: Final = r'(?:`[^`]+`|"[^"]+"|\[[^\]]+\]|[\w$]+)'
_TYPE: Final = r"([a-zA-Z][\w ]*?(?:\([^)]*\))?(?:\s+unsigned)?)"
_ADD: Final = re.compile(
    rf"^ADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?({_IDENT})\s+{_TYPE}(?:\s|$)", re.I
)
_DROP: Final = re.compile(rf"^DROP\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?({_IDENT})\s*$", re.I)
_RENAME: Final = re.compile(rf"^RENAME\s+COLUMN\s+({_IDENT})\s+TO\s+({_IDENT})\s*$", re.I)
_MODIFY: Final = re.compile(
    rf"^(?:MODIFY\s+(?:COLUMN\s+)?({_IDENT})|ALTER\s+COLUMN\s+({_IDENT})\s+(?:SET\s+DATA\s+)?TYPE)\s+{_TYPE}(?:\s|$)",
    re.I,
)
_CHANGE: Final = re.compile(
    rf"^CHANGE\s+(?:COLUMN\s+)?({_IDENT})\s+({_IDENT})\s+{_TYPE}(?:\s|$)", re.I
)
_CONSTRAINT_WORDS: Final = (
    "PRIMARY",
    "INDEX",
    "KEY",
    "UNIQUE",
    "CONSTRAINT",
    "FOREIGN",
    "PARTITION",
)


@dataclass(frozen=True)
class ColumnChange:
    """One column change of an ALTER TABLE."""

    action: str  # add | drop | rename | retype
    column: str
    type: str | None = None
    new_name: str | None = None


def unquote(name: str) -> str:
    if len(name) >= 2 and name[0] + name[-1] in ("``", '""', "[]"):
        return name[1:-1]
    return name


def _clauses(body: str) -> list[str]:
    """Split on top-level commas (not inside parentheses or quotes)."""
    out: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for ch in body:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "`\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    out.append("".join(current).strip().rstrip(";"))
    return [c for c in out if c]


def column_changes(statement: str | None) -> list[ColumnChange]:
    """The column changes of one ALTER TABLE statement (empty for anything else)."""
    match = _ALTER.match(statement or "")
    if not match:
        return []
    changes = []
    for clause in _clauses(match.group(2)):
        words = clause.split(None, 2)
        if (
            len(words) > 1
            and words[0].upper() in ("ADD", "DROP")
            and words[1].upper() in _CONSTRAINT_WORDS
        ):
            continue
        if m := _ADD.match(clause):
            changes.append(ColumnChange("add", unquote(m.group(1)), m.group(2).strip()))
        elif m := _DROP.match(clause):
            changes.append(ColumnChange("drop", unquote(m.group(1))))
        elif m := _RENAME.match(clause):
            changes.append(
                ColumnChange("rename", unquote(m.group(1)), new_name=unquote(m.group(2)))
            )
        elif m := _CHANGE.match(clause):
            old, new = unquote(m.group(1)), unquote(m.group(2))
            if old != new:
                changes.append(ColumnChange("rename", old, new_name=new))
            changes.append(ColumnChange("retype", new, m.group(3).strip()))
        elif m := _MODIFY.match(clause):
            changes.append(
                ColumnChange("retype", unquote(m.group(1) or m.group(2)), m.group(3).strip())
            )
    return changes
