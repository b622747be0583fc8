"""The import paths that moved when each format family became one package keep working for
one release, and warn (:mod:`anycdc.formats.moved`); nothing of the project uses them."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import warnings
from pathlib import Path

import pytest

import anycdc.formats
from anycdc.formats.moved import MOVED_MODULES, MOVED_NAMES

ROOT = Path(__file__).resolve().parents[2]
FORMATS = "anycdc.formats"

# what may name an old path: this test, the table of moved paths, and the shims themselves
ALLOWED: frozenset[Path] = frozenset(
    {
        Path(__file__).resolve(),
        ROOT / "src/anycdc/formats/moved.py",
        *(ROOT / "src" / (old.replace(".", "/") + ".py") for old in MOVED_MODULES),
    }
)


def _fresh_import(old: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """Import ``old`` as a first import would (a shim warns once per process, when imported);
    monkeypatch puts the module the process had back afterwards."""
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delattr(anycdc.formats, old.rpartition(".")[2], raising=False)
    return importlib.import_module(old)


# --------------------------------------------------------------------------- they still work
@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_a_moved_module_imports_and_warns(old: str, monkeypatch: pytest.MonkeyPatch) -> None:
    new = MOVED_MODULES[old][0]
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)} is deprecated: .*{new}$"):
        module = _fresh_import(old, monkeypatch)
    fresh = importlib.import_module(new)
    for name, value in vars(fresh).items():  # every name of the new module, read from the old
        if not name.startswith("__"):
            assert getattr(module, name) is value, name
    with pytest.raises(AttributeError):
        _ = module.no_such_name  # type: ignore[attr-defined]


def test_the_old_drs_module_gives_the_names_it_had(monkeypatch: pytest.MonkeyPatch) -> None:
    from anycdc.formats.canal.detect import DRS_LIKE, read_drs_evidence
    from anycdc.formats.canal.drs import DrsJson
    from anycdc.formats.canal.wire import F_COLUMN_TYPE

    with pytest.warns(DeprecationWarning, match="anycdc.formats.canal.drs"):
        module = _fresh_import("anycdc.formats.drs", monkeypatch)
    assert module.DrsJson is DrsJson  # type: ignore[attr-defined]
    assert module.read_drs_evidence is read_drs_evidence  # type: ignore[attr-defined]
    assert module.DRS_LIKE == DRS_LIKE  # type: ignore[attr-defined]
    assert module.F_COLUMN_TYPE == F_COLUMN_TYPE  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("package", "name", "home"),
    [
        (package, name, home)
        for package, homes in sorted(MOVED_NAMES.items())
        for home, names in homes.items()
        for name in names
    ],
)
def test_a_name_a_family_package_gave_still_comes_and_warns(
    package: str, name: str, home: str
) -> None:
    face = importlib.import_module(package)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(package)}\.{name} is deprecated: "):
        value = getattr(face, name)
    assert value is getattr(importlib.import_module(home), name)
    if isinstance(value, type) or inspect.isfunction(value):  # it says where it lives
        assert value.__module__ == home or not value.__module__.startswith(FORMATS), name


def test_a_from_import_of_an_old_name_warns_once_at_the_importer() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        from anycdc.formats.canal import CanalJson  # noqa: F401
    assert [str(w.message) for w in caught] == [
        "anycdc.formats.canal.CanalJson is deprecated: import it from anycdc.formats.canal.format"
    ]
    assert caught[0].filename == __file__


def test_the_new_paths_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from anycdc.formats import canal, format_class
        from anycdc.formats.canal import detect  # a submodule through the package: no name

        for format_id in anycdc.formats.format_ids():
            format_class(format_id)
        assert detect.drs_evidence is canal.detect.drs_evidence
    with pytest.raises(AttributeError):
        _ = canal.no_such_name  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- nothing uses them
OLD_MODULE = re.compile(
    r"\b(?:anycdc[./]formats[./])(" + "|".join(o.rpartition(".")[2] for o in MOVED_MODULES) + r")\b"
)
OLD_NAME = re.compile(
    r"\b("
    + "|".join(re.escape(p) for p in MOVED_NAMES)
    + r")[.:]("
    + "|".join(sorted({n for homes in MOVED_NAMES.values() for ns in homes.values() for n in ns}))
    + r")\b"
)
OLD_NAMES = {
    package: frozenset(n for names in homes.values() for n in names)
    for package, homes in MOVED_NAMES.items()
}


def old_paths(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Where ``source`` (of module ``module``) names a moved module or a name a family
    package no longer defines: in its text (docstrings, ``"module:Class"`` strings, dotted
    names) and in its imports, relative ones included, and ``package.name`` uses."""
    found = [m.group(0) for m in OLD_MODULE.finditer(source)]
    found += [m.group(0) for m in OLD_NAME.finditer(source) if m.group(2) in OLD_NAMES[m.group(1)]]
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> the family package it is
    here = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MOVED_MODULES:
                    found.append(f"from {base} import {alias.name}")
                elif full in MOVED_NAMES:
                    bound[alias.asname or alias.name] = full
                elif alias.name in OLD_NAMES.get(base, ()):
                    found.append(f"from {base} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MOVED_MODULES:
                    found.append(f"import {alias.name}")
                elif alias.name in MOVED_NAMES and alias.asname:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and node.attr in OLD_NAMES[bound[node.value.id]]
        ):
            found.append(f"{bound[node.value.id]}.{node.attr}")
    return found


def _module_of(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT / "src" if "src" in path.parts else ROOT).parts)
    parts[-1] = parts[-1].removesuffix(".py")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def test_nothing_in_src_or_tests_uses_an_old_path() -> None:
    used = []
    for top in ("src", "tests"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.resolve() in ALLOWED:
                continue
            module, is_package = _module_of(path)
            source = path.read_text(encoding="utf-8")
            used += [
                f"{path.relative_to(ROOT)}: {found}"
                for found in old_paths(source, module, is_package=is_package)
            ]
    assert used == [], "use the new path:\n" + "\n".join(used)


def test_the_docs_name_no_old_path() -> None:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    used = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in files
        for m in [*OLD_MODULE.finditer(path.read_text(encoding="utf-8"))]
    ]
    assert used == [], "\n".join(used)


@pytest.mark.parametrize(
    ("source", "module", "caught"),
    [
        ("from anycdc.formats.drs import DrsJson", "anycdc.x", True),
        ("from anycdc.formats import drs", "anycdc.x", True),
        ("import anycdc.formats.debezium_avro", "anycdc.x", True),
        ('REGISTRY = {"x": "anycdc.formats.dts_canal:DtsCanalJson"}', "anycdc.x", True),
        ("from anycdc.formats.canal import CanalJson", "anycdc.x", True),
        ("from . import CanalFamily", "anycdc.formats.canal.dts", True),
        ("from anycdc.formats import canal\ncanal.CanalJson()", "anycdc.x", True),
        ('"""see :class:`anycdc.formats.debezium.DebeziumJson`"""', "anycdc.x", True),
        ("from anycdc.formats.dataworks import format, v2", "anycdc.x", False),  # submodules
        ("from anycdc.formats.canal.format import CanalJson", "anycdc.x", False),
        ("from anycdc.formats import drs_mongo, drs_avro", "anycdc.x", False),
        ('"anycdc.formats.canal.drs:DrsJson"', "anycdc.x", False),
    ],
)
def test_an_old_path_is_caught(source: str, module: str, caught: bool) -> None:
    assert bool(old_paths(source, module)) is caught
