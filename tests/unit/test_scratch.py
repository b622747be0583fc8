"""A command empties only a scratch folder it made: never a folder of the user's, whatever
flag names it (``anycdc bench --work-dir``, the demo's ``--out``, ``jars fetch DIR``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anycdc.cli import main
from anycdc.errors import OptionError
from anycdc.scratch import MARKER, fresh_scratch


def _users_folder(root: Path) -> Path:
    """A folder of the user's: a file, and a folder with a file in it."""
    folder = root / "mine"
    (folder / "notes").mkdir(parents=True)
    (folder / "thesis.tex").write_text("years of work")
    (folder / "notes" / "todo.txt").write_text("back up")
    return folder


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_missing_folder_is_made_and_marked(tmp_path: Path) -> None:
    work = fresh_scratch(tmp_path / "a" / "b", "--work-dir")
    assert _files(work) == [MARKER]


def test_a_folder_it_made_is_emptied(tmp_path: Path) -> None:
    work = fresh_scratch(tmp_path / "work", "--work-dir")
    (work / "lake" / "t").mkdir(parents=True)
    (work / "results.json").write_text("{}")
    assert _files(fresh_scratch(work, "--work-dir")) == [MARKER]


def test_a_users_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    folder = _users_folder(tmp_path)
    before = _files(folder)
    with pytest.raises(
        OptionError, match=r"^--work-dir .*mine: holds files anycdc did not make \('notes'\)"
    ):
        fresh_scratch(folder, "--work-dir", outputs=("kafka", "results.json"))
    assert _files(folder) == before
    assert (folder / "thesis.tex").read_text() == "years of work"


def test_an_older_runs_folder_is_known_by_its_names(tmp_path: Path) -> None:
    old = tmp_path / "bench"
    (old / "anycdc-deferred" / "_anycdc").mkdir(parents=True)
    (old / "results.json").write_text("{}")
    assert _files(fresh_scratch(old, "--work-dir", ("anycdc-*", "results.json"))) == [MARKER]
    (old / "theirs.csv").write_text("1")  # now marked: the next run may empty it all
    assert _files(fresh_scratch(old, "--work-dir")) == [MARKER]


def test_a_link_in_a_scratch_folder_is_removed_not_followed(tmp_path: Path) -> None:
    mine = _users_folder(tmp_path)
    work = fresh_scratch(tmp_path / "work", "--work-dir")
    (work / "shortcut").symlink_to(mine, target_is_directory=True)
    assert _files(fresh_scratch(work, "--work-dir")) == [MARKER]
    assert (mine / "notes" / "todo.txt").read_text() == "back up"


def test_a_file_is_not_a_folder(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("1,2")
    with pytest.raises(OptionError, match=r"data\.csv: a file, not a folder"):
        fresh_scratch(path, "--out")
    assert path.read_text() == "1,2"


def test_the_bench_refuses_a_users_work_dir_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _users_folder(tmp_path)
    before = _files(folder)
    code = main(["bench", "--events", "100", "--tables", "2", "--work-dir", str(folder)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip() == (
        f"anycdc: --work-dir {folder}: holds files anycdc did not make ('notes'): "
        "give a new or empty folder"
    )
    assert _files(folder) == before


def test_the_demo_refuses_a_users_out_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anycdc import demo

    folder = _users_folder(tmp_path)
    with pytest.raises(SystemExit) as exited:
        demo.main(["--out", str(folder)])
    assert exited.value.code == 2
    assert "anycdc demo: --out" in capsys.readouterr().err
    assert (folder / "thesis.tex").read_text() == "years of work"


def test_jars_fetch_refuses_a_users_folder_before_resolving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anycdc.spark import jars

    folder = _users_folder(tmp_path)
    (folder / "my-driver.jar").write_text("not ours")
    assert jars.main(["fetch", str(folder)]) == 2
    err = capsys.readouterr()
    assert "jars fetch" in err.err and "resolving" not in err.out
    assert (folder / "my-driver.jar").read_text() == "not ours"


def test_simulate_replaces_an_earlier_runs_messages_and_refuses_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sim"
    base = ["simulate", "-f", "canal-json", "--events", "20", "--quiet", "--out", str(out)]
    assert main([*base, "--partitions", "3"]) == 0
    assert main([*base, "--partitions", "1"]) == 0  # p001, p002 of the first run: gone
    assert _files(out / "messages") == ["p000.jsonl"]  # no marker: its names are known
    mine = tmp_path / "mine"
    (mine / "messages").mkdir(parents=True)
    (mine / "messages" / "orders.jsonl").write_text('{"mine": 1}\n')
    capsys.readouterr()
    assert main([*base[:-1], str(mine)]) == 2
    assert "holds files anycdc did not make ('orders.jsonl')" in capsys.readouterr().err
    assert (mine / "messages" / "orders.jsonl").read_text() == '{"mine": 1}\n'


def test_a_fresh_broker_wipes_only_a_kafka_log_folder(tmp_path: Path) -> None:
    from anycdc.devtools.kafka import KafkaBroker, KafkaError, free_port

    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data" / "photos.zip").write_text("mine")
    broker = KafkaBroker(home=home, port=free_port(), controller_port=free_port())
    with pytest.raises(KafkaError, match="is not a Kafka log folder"):
        broker.start(timeout=5, fresh=True, quiet=True)
    assert (home / "data" / "photos.zip").read_text() == "mine"
