"""The package layout holds (issue #28): no vendor format module is another's library, and no
private name crosses a module boundary. Read from the source with ``ast``: nothing is imported.

Shared codecs live in :mod:`anycdc.formats.codecs`; a vendor module may import ``base`` (and
``options``, ``parsing``, ``fastpath``, which base is made of), ``events``, ``flow``,
``codecs``, ``schema_source``, the modules outside ``formats`` and its own family: a format
family (the formats one flow serves, e.g. canal-json, dts-canal-json and DRS' under
``canal/``) is one package, whose members import one another's modules.
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
FORMATS = "anycdc.formats"


def vendor_modules() -> frozenset[str]:
    """The module or family package of every registered format, e.g. ``anycdc.formats.canal``
    for ``anycdc.formats.canal.drs:DrsJson`` and ``anycdc.formats.maxwell`` for Maxwell's."""
    found = set()
    for target in REGISTRY.values():
        module = target.split(":")[0]
        assert module.startswith(FORMATS + "."), module
        found.add(".".join(module.split(".")[:3]))
    return frozenset(found)


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


def test_a_family_is_one_package() -> None:
    vendors = vendor_modules()
    assert {
        "anycdc.formats.canal",
        "anycdc.formats.debezium",
        "anycdc.formats.dataworks",
    } <= vendors
    family = {fid: owner(target.split(":")[0], vendors) for fid, target in REGISTRY.items()}
    assert family["drs-json"] == family["dts-canal-json"] == family["canal-json"]
    assert family["debezium-avro"] == family["debezium-json"]
    assert family["dataworks2-json"] == family["dataworks-json"]
    assert family["drs-mongo-json"] == "anycdc.formats.drs_mongo"  # one vendor: a flat module


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
        ("anycdc.formats.canal.drs", "from anycdc.formats.canal.family import CanalFamily", 0),
        ("anycdc.formats.canal.format", "from anycdc.formats.canal.detect import drs_evidence", 0),
        ("anycdc.formats.canal", "from anycdc.formats.maxwell import MaxwellJson", 1),  # no family
        ("anycdc.formats.drs_mongo", "from anycdc.formats.canal.drs import DrsJson", 1),
        ("anycdc.formats.canal.dts", "from anycdc.formats.debezium.avro import avro_name", 1),
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


# --------------------------------------------------------------------------- layers and cycles
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ()),  # events, values, formats, sources, configuration: everything not below
    ("spark", ("anycdc.spark", "anycdc.verify")),  # verify compares tables by their Spark types
    ("tools", ("anycdc.devtools", "anycdc.bench")),  # the broker, the fault runner, benchmarks
    ("commands", ("anycdc.cli", "anycdc.demo")),  # the demo is a command (``anycdc dev demo``)
    ("entry points", ("anycdc.__main__", "anycdc.spark.submit")),  # files a launcher runs
)
"""The package's layers, lowest first: a module imports its own layer's and lower ones'
modules only. A module's layer is that of the longest prefix naming it."""

KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
"""Cycles through imports inside functions that are still there: the test fails on a new
one, and on one of these once it is gone (then strike it here)."""


def layer(module: str) -> int:
    """The index in :data:`LAYERS` of ``module``'s layer."""
    found, longest = 0, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > longest:
                found, longest = index, len(prefix)
    return found


def resolved(target: str, name: str) -> str | None:
    """The anycdc module an import reaches: ``from a.b import c`` is ``a.b.c`` when that
    is a module, else ``a.b``; None outside the package."""
    if target != PACKAGE and not target.startswith(PACKAGE + "."):
        return None
    full = f"{target}.{name}" if name else target
    return full if full in MODULES else target if target in MODULES else None


def module_level(source: str, module: str, *, is_package: bool) -> list[tuple[str, str]]:
    """The imports ``source`` runs when it is imported: its body's, not those inside
    functions or under ``if TYPE_CHECKING``."""
    tree = ast.parse(source)
    kept = ast.Module(body=[], type_ignores=[])

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                guard = node.test
                checking = (isinstance(guard, ast.Name) and guard.id == "TYPE_CHECKING") or (
                    isinstance(guard, ast.Attribute) and guard.attr == "TYPE_CHECKING"
                )
                if not checking:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                kept.body.append(node)

    visit(tree.body)
    return list(imports(ast.unparse(kept), module, is_package=is_package))


def graph(found_by_module: dict[str, list[tuple[str, str]]]) -> dict[str, set[str]]:
    """Module -> the anycdc modules it imports."""
    return {
        module: {m for target, name in found if (m := resolved(target, name)) and m != module}
        for module, found in found_by_module.items()
    }


def cycles(edges: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: set[frozenset[str]] = set()

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                strong(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                out.add(frozenset(group))

    for node in sorted(edges):
        if node not in index:
            strong(node)
    return out


def module_level_scan() -> dict[str, list[tuple[str, str]]]:
    return {
        module_name(path): module_level(
            path.read_text(encoding="utf-8"),
            module_name(path),
            is_package=path.name == "__init__.py",
        )
        for path in sorted((SRC / PACKAGE).rglob("*.py"))
    }


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{module} ({LAYERS[layer(module)][0]}) imports {target} ({LAYERS[layer(target)][0]})"
        for module, targets in graph(MODULES).items()
        for target in sorted(targets)
        if layer(target) > layer(module)
    ]
    assert upward == [], "move the shared code down a layer:\n" + "\n".join(upward)


def test_the_pipeline_never_imports_the_fault_tooling() -> None:
    # the crash points it needs are anycdc.faults, inert unless a test arms one
    assert layer("anycdc.devtools.chaos") > layer("anycdc.spark.commit") > layer("anycdc.faults")


def test_no_import_cycle_at_module_level() -> None:
    assert cycles(graph(module_level_scan())) == set()


def test_no_new_import_cycle() -> None:
    found = cycles(graph(MODULES))
    assert found - KNOWN_CYCLES == set(), "a new cycle"
    assert KNOWN_CYCLES - found == set(), "a known cycle is gone: strike it from KNOWN_CYCLES"


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, {frozenset({"a", "b"})}),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, set()),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, {frozenset({"a", "b", "c"})}),
    ],
)
def test_a_cycle_is_caught(edges: dict[str, set[str]], expected: set[frozenset[str]]) -> None:
    assert cycles(edges) == expected


def test_an_import_under_type_checking_or_in_a_function_is_not_module_level() -> None:
    source = (
        "from typing import TYPE_CHECKING\nfrom anycdc import event\n"
        "if TYPE_CHECKING:\n    from anycdc.spark import plan\n"
        "def f():\n    from anycdc import cli\n"
    )
    found = module_level(source, "anycdc.x", is_package=False)
    assert ("anycdc", "event") in found and len(found) == 2  # typing, event
    assert layer("anycdc.spark.submit") == len(LAYERS) - 1 and layer("anycdc.event") == 0
