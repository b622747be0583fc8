"""The package layout holds (issue #28): no vendor format module is another's library, and no
private name crosses a module boundary. Read from the source with ``ast``: nothing is imported.

Shared codecs live in :mod:`anycdc.formats.codecs`; a vendor module may import ``base`` (and
``options``, ``parsing``, ``fastpath``, which base is made of), ``flow``, ``codecs``,
``schema_source``, the modules outside ``formats`` and its own package, plus the one family
parent declared in :data:`FAMILIES`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from anycdc.formats import REGISTRY

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "anycdc"
CODECS = "anycdc.formats.codecs"

# A format that is a dialect of another subclasses that format's decoder class, so it
# imports its parent's module (and a family's members ask one another's detection rule);
# these are the only vendor-to-vendor imports allowed.
FAMILIES: frozenset[tuple[str, str]] = frozenset(
    {
        # Canal family: CanalFamily (canal/family.py) owns the flat-message flow; DTS and DRS fill hooks
        ("anycdc.formats.dts_canal", "anycdc.formats.canal"),
        ("anycdc.formats.drs", "anycdc.formats.canal"),
        # ... and its detection: the Canal-shaped formats step aside for a message that DRS's
        # evidence claims; the rule is DRS's and lives in drs.py, its siblings ask it
        ("anycdc.formats.canal", "anycdc.formats.drs"),
        ("anycdc.formats.dts_canal", "anycdc.formats.drs"),
        # DataWorks family: DataWorks2Json subclasses DataWorksFamily and reuses its wire names
        ("anycdc.formats.dataworks2", "anycdc.formats.dataworks"),
        # Debezium's envelope read from Avro: DebeziumAvro subclasses DebeziumJson
        ("anycdc.formats.debezium_avro", "anycdc.formats.debezium"),
    }
)


def vendor_modules() -> frozenset[str]:
    """The module (or package) of every registered format, e.g. ``anycdc.formats.canal``."""
    return frozenset(target.split(":")[0] for target in REGISTRY.values())


def module_name(path: Path) -> str:
    """``src/anycdc/formats/debezium/__init__.py`` -> ``anycdc.formats.debezium``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(source: str, module: str, *, is_package: bool = False) -> Iterator[tuple[str, str]]:
    """(imported module, imported name) for every import of ``source``, wherever it sits
    (function bodies and ``TYPE_CHECKING`` blocks included); ``import x`` gives ``(x, "")``."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the importing package
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name


def owner(module: str, vendors: frozenset[str]) -> str | None:
    """The vendor module or package that ``module`` belongs to, if any."""
    for vendor in vendors:
        if module == vendor or module.startswith(vendor + "."):
            return vendor
    return None


def vendor_crossings(
    module: str, found: list[tuple[str, str]], vendors: frozenset[str]
) -> list[str]:
    """The imports by which ``module`` (a vendor's, or a codec) reaches another vendor's module."""
    mine = owner(module, vendors)
    is_codec = module == CODECS or module.startswith(CODECS + ".")
    if mine is None and not is_codec:
        return []
    bad = []
    for target, name in found:
        theirs = owner(target, vendors)
        if theirs is None and target.startswith(PACKAGE + ".") and name:
            theirs = owner(f"{target}.{name}", vendors)  # from anycdc.formats import canal
        if theirs is None or theirs == mine:
            continue
        if mine is not None and (mine, theirs) in FAMILIES:
            continue
        bad.append(f"{module} imports {target}{'.' + name if name else ''}")
    return bad


def private_crossings(module: str, found: list[tuple[str, str]]) -> list[str]:
    """The underscore names ``module`` imports from another anycdc module."""
    return [
        f"{module} imports {name} from {target}"
        for target, name in found
        if (target == PACKAGE or target.startswith(PACKAGE + "."))
        and target != module
        and name.startswith("_")
        and not name.startswith("__")
    ]


def scan() -> dict[str, list[tuple[str, str]]]:
    """Every module of the package and what it imports."""
    return {
        module_name(path): list(
            imports(
                path.read_text(encoding="utf-8"),
                module_name(path),
                is_package=path.name == "__init__.py",
            )
        )
        for path in sorted((SRC / PACKAGE).rglob("*.py"))
    }


MODULES = scan()


def test_the_scan_sees_the_package() -> None:
    assert "anycdc.formats.canal" in MODULES and "anycdc.formats.codecs.avro" in MODULES
    assert len(MODULES) > 50  # a wrong SRC would find nothing and pass every check


def test_the_families_name_registered_formats() -> None:
    vendors = vendor_modules()
    assert {m for pair in FAMILIES for m in pair} <= vendors


def test_no_vendor_module_imports_another_vendor_module() -> None:
    vendors = vendor_modules()
    crossings = [
        line
        for module, found in MODULES.items()
        for line in vendor_crossings(module, found, vendors)
    ]
    assert crossings == [], "shared code belongs in anycdc.formats.codecs:\n" + "\n".join(crossings)


def test_no_private_name_crosses_a_module() -> None:
    crossings = [
        line for module, found in MODULES.items() for line in private_crossings(module, found)
    ]
    assert crossings == [], "make the name public (documented) or move it:\n" + "\n".join(crossings)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("anycdc.formats.maxwell", "from anycdc.formats.oms import render_value", 1),
        ("anycdc.formats.maxwell", "def f():\n    from anycdc.formats import oms", 1),
        ("anycdc.formats.debezium.encode", "from anycdc.formats.drs_mongo import x", 1),
        ("anycdc.formats.codecs.text", "from anycdc.formats.oms import OmsJson", 1),
        ("anycdc.formats.drs", "from anycdc.formats.canal import CanalFamily", 0),  # a family
        ("anycdc.formats.canal", "from anycdc.formats.maxwell import MaxwellJson", 1),  # no family
        ("anycdc.formats.debezium.decode", "from .wire import AFTER", 0),  # its own package
        ("anycdc.formats.maxwell", "from anycdc.formats.codecs.text import bounded_int", 0),
    ],
)
def test_a_vendor_crossing_is_caught(module: str, source: str, expected: int) -> None:
    found = list(imports(source, module))
    assert len(vendor_crossings(module, found, vendor_modules())) == expected


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "anycdc.formats.canal",
            "from anycdc.formats.base import (\n    _JSON,\n    Format,\n)",
            1,
        ),
        ("anycdc.formats.debezium.decode", "from .wire import _OPS", 1),
        (
            "anycdc.formats.debezium.mongo",
            "if T:\n    from anycdc.formats.debezium.decode import _M",
            1,
        ),
        ("anycdc.formats.canal", "from anycdc.formats.base import __all__, Format", 0),
        ("anycdc.formats.canal", "from collections import _private", 0),  # not ours
    ],
)
def test_a_private_crossing_is_caught(module: str, source: str, expected: int) -> None:
    assert len(private_crossings(module, list(imports(source, module)))) == expected
