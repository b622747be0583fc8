"""``anycdc convert`` as a new user runs it: it never loses a file, refuses what it cannot
do in one line, and says what the target format loses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anycdc.cli import main

CASES = Path(__file__).resolve().parents[1] / "cases"
CANAL = CASES / "canal-json" / "constructed_values.jsonl"
ROW = {
    "database": "shop",
    "table": "orders",
    "isDdl": False,
    "pkNames": ["id"],
    "mysqlType": {"id": "int", "dt": "datetime(6)", "d": "date", "u": "bigint unsigned"},
    "sqlType": {"id": 4, "dt": 93, "d": 91, "u": -5},
    "old": None,
    "es": 1624614713000,
    "ts": 1624614713100,
    "sql": "",
}


def _canal(path: Path, *rows: tuple[str, str]) -> Path:
    """A canal-json file of one message per (type, id)."""
    lines = []
    for number, (op, row_id) in enumerate(rows, start=1):
        data = {"id": row_id, "dt": "2021-06-25 17:51:53.123456", "d": "2021-06-25"}
        data["u"] = "18446744073709551610"
        lines.append(json.dumps({**ROW, "type": op, "id": number, "data": [data]}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["convert", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _one_error(err: str) -> str:
    """The single ``anycdc:`` line of a refusal."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("anycdc: "), err
    return lines[0]


# ------------------------------------------------------------------ never lose a file
def test_in_equal_to_out_is_refused_and_the_file_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "v1.jsonl"
    source.write_bytes(CANAL.read_bytes())
    code, _, err = _run(capsys, "--to", "canal-json", str(source), str(source))
    assert code == 2
    assert "is IN" in _one_error(err)
    assert source.read_bytes() == CANAL.read_bytes()


def test_in_and_out_the_same_file_by_another_path_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "v1.jsonl"
    source.write_bytes(CANAL.read_bytes())
    (tmp_path / "link.jsonl").symlink_to(source)
    code, _, err = _run(
        capsys, "--force", "--to", "canal-json", str(source), str(tmp_path / "link.jsonl")
    )
    assert code == 2 and "is IN" in _one_error(err)
    assert source.read_bytes() == CANAL.read_bytes()


def test_missing_in_is_said_before_out_is_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    important = tmp_path / "important.jsonl"
    important.write_bytes(b"keep me\n")
    code, _, err = _run(
        capsys, "--to", "canal-json", str(tmp_path / "missing.jsonl"), str(important)
    )
    assert code == 2
    line = _one_error(err)
    assert "missing.jsonl" in line and "no such file" in line
    assert important.read_bytes() == b"keep me\n"


def test_an_in_folder_without_message_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.md").write_text("x")
    code, _, err = _run(
        capsys, "--to", "canal-json", str(tmp_path / "in"), str(tmp_path / "o.jsonl")
    )
    assert code == 2 and "no message files" in _one_error(err)
    assert not (tmp_path / "o.jsonl").exists()


def test_out_inside_the_in_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(CANAL.read_bytes())
    code, _, err = _run(capsys, "--to", "canal-json", str(folder), str(folder / "out.jsonl"))
    assert code == 2 and "inside the IN folder" in _one_error(err)
    assert sorted(p.name for p in folder.iterdir()) == ["a.jsonl"]


def test_an_existing_out_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _canal(tmp_path / "in.jsonl", ("INSERT", "1"), ("INSERT", "2"))
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old\n")
    code, _, err = _run(capsys, "--to", "debezium-json", str(source), str(out))
    assert code == 2 and "--force" in _one_error(err)
    assert out.read_bytes() == b"old\n"
    code, _, err = _run(capsys, "--force", "--to", "debezium-json", str(source), str(out))
    assert code == 0, err
    assert out.read_bytes() != b"old\n" and len(out.read_bytes().splitlines()) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]  # none staged


def test_a_failure_mid_way_keeps_the_old_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _canal(folder / "a.jsonl", ("INSERT", "1"))
    # a file that lists as regular and fails when read (EIO), after a.jsonl was converted
    (folder / "b.json").symlink_to("/proc/self/mem")
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old\n")
    code, _, err = _run(capsys, "--force", "--to", "debezium-json", str(folder), str(out))
    assert code == 1
    line = _one_error(err)
    assert "cannot read" in line and "after" in line and "a.jsonl" in line
    assert out.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out.jsonl"]


def test_a_wrong_from_converts_nothing_keeps_out_and_names_the_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _canal(tmp_path / "in.jsonl", ("INSERT", "1"), ("DELETE", "1"))
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old\n")
    code, _, err = _run(
        capsys, "--force", "--from", "debezium-json", "--to", "ogg-json", str(source), str(out)
    )
    assert code == 1
    assert out.read_bytes() == b"old\n"  # an empty output does not replace it, --force or not
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]
    assert "anycdc: no message is debezium-json: they look like canal-json" in err
    assert "give --from canal-json" in err and "left as it was" in err
    # one message of the two converts: the output is written, the exit is the usual one
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(source.read_bytes() + b'{"op":"c","after":{"id":2},"source":{"table":"t"}}\n')
    code, _, err = _run(
        capsys, "--force", "--from", "debezium-json", "--to", "ogg-json", str(mixed), str(out)
    )
    assert code == 0 and out.read_bytes() != b"old\n" and "look like" not in err


def test_a_folder_out_for_a_json_target_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").mkdir()
    code, _, err = _run(capsys, "--to", "canal-json", str(CANAL), str(tmp_path / "out"))
    assert code == 2 and "is a folder" in _one_error(err)


# ------------------------------------------------------------------ Avro folders
def test_an_avro_folder_with_a_previous_output_needs_force_and_is_emptied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = _canal(tmp_path / "two.jsonl", ("INSERT", "1"), ("INSERT", "2"))
    one = _canal(tmp_path / "one.jsonl", ("INSERT", "3"))
    out = tmp_path / "avro"
    code, _, err = _run(capsys, "--to", "dts-avro", str(two), str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["000000001.avro", "000000002.avro"]
    first = (out / "000000001.avro").read_bytes()
    code, _, err = _run(capsys, "--to", "dts-avro", str(one), str(out))
    assert code == 2 and "--force" in _one_error(err)
    assert (out / "000000001.avro").read_bytes() == first
    code, _, err = _run(capsys, "--force", "--to", "dts-avro", str(one), str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["000000001.avro"]  # no stale 2
    assert (out / "000000001.avro").read_bytes() != first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["avro", "one.jsonl", "two.jsonl"]


def test_an_avro_folder_with_foreign_files_is_refused_even_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "avro"
    out.mkdir()
    (out / "thesis.txt").write_bytes(b"precious")
    code, _, err = _run(capsys, "--force", "--to", "dts-avro", str(CANAL), str(out))
    assert code == 2 and "thesis.txt" in _one_error(err)
    assert [p.name for p in out.iterdir()] == ["thesis.txt"]


def test_a_file_where_an_avro_folder_is_expected_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "avro"
    out.write_bytes(b"a file")
    code, _, err = _run(capsys, "--force", "--to", "dts-avro", str(CANAL), str(out))
    assert code == 2 and "is a file" in _one_error(err)
    assert out.read_bytes() == b"a file"


def test_stdout_is_no_avro_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "--to", "dts-avro", str(CANAL), "-")
    assert code == 2 and "not - (stdout)" in _one_error(err)
    assert list(tmp_path.iterdir()) == []


def test_in_inside_the_out_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "avro"
    code, _, err = _run(capsys, "--to", "dts-avro", str(CANAL), str(out))
    assert code == 0, err
    message = out / "000000001.avro"
    before = message.read_bytes()
    code, _, err = _run(capsys, "--force", "--to", "dts-avro", str(message), str(out))
    assert code == 2 and "inside the OUT folder" in _one_error(err)
    assert message.read_bytes() == before


# ------------------------------------------------------------------ --to and --help
def test_to_offers_only_formats_that_encode(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["convert", "--help"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    to_help = shown.split("\n  --to ID", 1)[1].split("\n  --from", 1)[0]
    assert "dts-avro" in to_help and "drs-avro" not in to_help
    assert "Examples:" in shown and "(default: refuse)" in shown and "(default: auto" in shown
    with pytest.raises(SystemExit) as exit_:
        main(["convert", "--to", "drs-avro", str(CANAL), "x"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'drs-avro'" in err and "Traceback" not in err


def test_the_summary_line_stays(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "transcode messages between vendor formats" in capsys.readouterr().out


# ------------------------------------------------------------------ what a target loses
def test_losses_are_reported_once_per_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _canal(tmp_path / "in.jsonl", ("INSERT", "1"), ("INIT", "2"), ("INSERT", "3"))
    out = tmp_path / "dw.jsonl"
    code, _, err = _run(capsys, "--to", "dataworks-json", str(source), str(out))
    assert code == 0
    assert err.count("shop.orders.dt written as a UTC instant") == 1
    assert "dataworks-json cannot carry a zone-less timestamp" in err
    assert "shop.orders.dt cut to milliseconds" in err
    assert "shop.orders.d written as its midnight UTC instant" in err
    assert "shop.orders.u comes back invalid" in err
    assert err.count("has no snapshot op: shop.orders rows written as insert") == 1
    code, _, err = _run(
        capsys, "--force", "--strict", "--to", "dataworks-json", str(source), str(out)
    )
    assert code == 1
    assert len(out.read_bytes().splitlines()) == 3  # written all the same


def test_a_lossless_target_reports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _canal(tmp_path / "in.jsonl", ("INSERT", "1"), ("INIT", "2"))
    code, _, err = _run(
        capsys, "--strict", "--to", "dataworks2-json", str(source), str(tmp_path / "o.jsonl")
    )
    assert code == 1 and "has no snapshot op" in err  # dataworks2 has no snapshot
    code, _, err = _run(
        capsys, "--strict", "--to", "canonical-json", str(source), str(tmp_path / "c.jsonl")
    )
    assert code == 0 and "anycdc:" not in err


def test_a_value_the_encoder_cannot_write_is_that_messages_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {**ROW, "type": "INSERT", "id": 1, "data": [{"id": "1", "n": "x"}]}
    row["mysqlType"] = {"id": "int", "n": "decimal(10,2)"}
    row["sqlType"] = {"id": 4, "n": 3}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(row) + "\n")
    code, _, err = _run(
        capsys, "--strict", "--to", "debezium-json", str(source), str(tmp_path / "o")
    )
    assert code == 1
    assert "in.jsonl:1: debezium-json: " in err and "shop.orders.n" in err
    assert "1 messages read, 0 written as debezium-json, 1 errors" in err


# ------------------------------------------------------------------ keys
def test_with_keys_writes_key_tab_value_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _canal(tmp_path / "in.jsonl", ("INSERT", "7"))
    out = tmp_path / "o.jsonl"
    code, _, err = _run(capsys, "--with-keys", "--to", "debezium-json", str(source), str(out))
    assert code == 0, err
    key, value = out.read_bytes().rstrip(b"\n").split(b"\t")
    assert json.loads(key)["payload"] == {"id": 7}  # the JSON converter's envelope
    assert json.loads(value)["payload"]["after"]["id"] == 7
    assert "Kafka key" not in err
    plain = tmp_path / "plain.jsonl"
    code, _, err = _run(capsys, "--to", "debezium-json", str(source), str(plain))
    assert code == 0
    assert b"\t" not in plain.read_bytes()  # the default is unchanged, and says what it loses
    assert "debezium-json carries the row key only in the Kafka key: shop.orders" in err
    assert "give --with-keys" in err


def test_with_keys_writes_key_files_beside_avro_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _canal(tmp_path / "in.jsonl", ("INSERT", "7"))
    out = tmp_path / "avro"
    code, _, err = _run(capsys, "--with-keys", "--to", "debezium-avro", str(source), str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        "000000001.avro",
        "000000001.key.avro",
        "schemas",
    ]
    assert (out / "000000001.key.avro").read_bytes()[:1] == b"\x00"  # a Confluent frame
