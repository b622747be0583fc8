"""``anycdc decode`` as a user runs it: every golden case through the CLI, message keys from
files and Kafka dumps, streaming ``--pretty``, ``--json-safe``, input that reads as nothing,
progress and ``--quiet``. In-process (``anycdc.cli.main``) unless a pipe is the point."""

from __future__ import annotations

import gzip
import io
import json
import os
import select
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main
from anycdc.cli.decode import Tally
from anycdc.decoding import MessageDecoder
from anycdc.event import event_from_dict
from anycdc.formats.base import NAMED_OPS
from tests.cases import Case, iter_cases

CASES = list(iter_cases())
SUMMARY_SUFFIX = " errors"
HINT_PREFIX = "hint: "
# a Debezium delete without a before image: decodable only with its Kafka key
KEYLESS_DELETE = (
    b'{"before":null,"after":null,"source":{"connector":"postgresql","name":"s","db":"shop",'
    b'"schema":"public","table":"orders","ts_ms":1,"lsn":5},"op":"d","ts_ms":2}'
)
KEY = b'{"id":7}'
NO_KEY_ERROR = "delete without a before image and no Kafka key"
INSERT = (
    b'{"before":null,"after":{"id":18446744073709551615,"flag":true,"raw":"AA==","note":"a b"},'
    b'"source":{"connector":"mysql","name":"s","db":"shop","table":"orders","ts_ms":1700000000123,'
    b'"file":"binlog.000001","pos":4,"row":0},"op":"c","ts_ms":1700000000123}'
)
WAIT_FOR_OUTPUT_S = 60  # a guard against a hang, not a speed requirement


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, list[str], list[str]]:
    code = main(["decode", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))


# ------------------------------------------------------------------ golden cases


def _cli_expected(case: Case) -> tuple[list[dict[str, Any]], list[str]]:
    """The expected file, as the CLI must print it: events on stdout, errors on stderr.

    The golden files hold what each format decodes (``Format.decode``); the CLI decodes
    through :class:`MessageDecoder`, which refuses a row change that names no table (the
    pipeline's rule, :meth:`Format.unnamed_table`). Each such expected event is that error.
    """
    decoder = MessageDecoder(case.format_id, case.options)
    fmt = decoder.format_for(case.format_id)
    events: list[dict[str, Any]] = []
    errors: list[str] = []
    for item in case.expected():
        if item.keys() == {"error"}:
            errors.append(item["error"])
        elif item["op"] in NAMED_OPS and not item["table"]:
            errors.append(str(fmt.unnamed_table(event_from_dict(item))))
        else:
            events.append(item)
    return events, errors


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_case_through_the_cli(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    options = [a for k, v in case.options.items() for a in ("-o", f"{k}={v}")]
    code, out, err = _run(
        capsys, "--no-pair", "--format", case.format_id, *options, case.input_path
    )
    assert code == 0
    events, errors = _cli_expected(case)
    assert [json.loads(line, parse_float=Decimal) for line in out] == events
    assert err[-1].endswith(SUMMARY_SUFFIX)
    reported = [line.split(": ", 1)[1] for line in err[:-1] if not line.startswith(HINT_PREFIX)]
    assert reported == errors


# ------------------------------------------------------------------ keys


def test_key_file_gives_each_message_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "v.jsonl").write_bytes(KEYLESS_DELETE + b"\n\n" + KEYLESS_DELETE + b"\n")
    (tmp_path / "k.txt").write_bytes(KEY + b"\nnull\n")
    code, out, err = _run(capsys, tmp_path / "v.jsonl", "--key-file", tmp_path / "k.txt")
    assert code == 0
    assert [json.loads(line)["before"] for line in out] == [{"id": 7}]
    assert err[0].startswith(f"{tmp_path / 'v.jsonl'}:3: ") and NO_KEY_ERROR in err[0]


@pytest.mark.parametrize(("keys", "said"), [(b"", "has 0 keys"), (KEY * 2, "more keys")])
def test_key_file_out_of_step_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: bytes, said: str
) -> None:
    (tmp_path / "v.jsonl").write_bytes(KEYLESS_DELETE + b"\n")
    (tmp_path / "k.txt").write_bytes(keys.replace(b"}{", b"}\n{"))
    code, _, err = _run(capsys, tmp_path / "v.jsonl", "--key-file", tmp_path / "k.txt")
    assert code == 2
    assert len(err) == 1 and err[0].startswith("anycdc: --key-file") and said in err[0]


def test_key_beside_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "orders.jsonl").write_bytes(KEYLESS_DELETE + b"\n")
    (tmp_path / "orders.key.json").write_bytes(KEY)
    code, out, err = _run(capsys, tmp_path)  # the folder: the key file is not a message
    assert code == 0
    assert [json.loads(line)["before"] for line in out] == [{"id": 7}]
    assert err == ["1 messages, 1 events, 0 errors"]


def _kcat(payload: object, key: object, offset: int) -> bytes:
    line = {"topic": "orders", "partition": 2, "offset": offset, "tstype": "create", "ts": 1}
    return json.dumps({**line, "key": key, "payload": payload}).encode()


def test_kcat_json_dump_is_detected(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        _kcat(KEYLESS_DELETE.decode(), KEY.decode(), 10),  # kcat -J: value and key as text
        _kcat(json.loads(KEYLESS_DELETE), json.loads(KEY), 11),  # kcat -s avro: as JSON
        _kcat(KEYLESS_DELETE.decode(), None, 12),
        _kcat(None, KEY.decode(), 13),  # a tombstone
    ]
    _stdin(monkeypatch, b"\n".join(lines) + b"\n")
    code, out, err = _run(capsys)
    assert code == 0
    assert [json.loads(line)["before"] for line in out] == [{"id": 7}, {"id": 7}]
    assert err[0].startswith("<stdin>:3 orders[2]@12: ") and NO_KEY_ERROR in err[0]
    assert err[1] == "4 messages, 2 events, 1 errors"


def test_key_tab_lines_of_the_console_consumer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        KEY + b"\t" + KEYLESS_DELETE,
        b"CreateTime:1\tPartition:4\tOffset:99\tnull\t" + KEYLESS_DELETE,
        KEY + b"\tnull",
    ]
    (tmp_path / "dump.txt").write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = _run(capsys, "--input-shape", "key-tab", tmp_path / "dump.txt")
    assert code == 0
    assert [json.loads(line)["before"] for line in out] == [{"id": 7}]
    assert err[0].startswith(f"{tmp_path / 'dump.txt'}:2 [4]@99: ") and NO_KEY_ERROR in err[0]
    # without the flag the same lines are not taken apart: never a silent guess
    code, out, err = _run(capsys, tmp_path / "dump.txt")
    assert out == [] and err[-1] == "3 messages, 0 events, 3 errors"


def test_key_tab_line_without_a_tab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dump.txt").write_bytes(KEYLESS_DELETE + b"\n")
    code, _, err = _run(capsys, "--input-shape", "key-tab", tmp_path / "dump.txt")
    assert code == 2 and len(err) == 1 and "no tab between key and value" in err[0]


# ------------------------------------------------------------------ output


def test_pretty_prints_values_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ddl = (
        b'{"data":null,"database":"shop","es":1700000000000,"id":1,"isDdl":true,'
        b'"mysqlType":null,"old":null,"pkNames":null,"sql":"ALTER TABLE t ADD c INT",'
        b'"sqlType":null,"table":"t","ts":1700000000000,"type":"ALTER"}'
    )
    (tmp_path / "m.jsonl").write_bytes(INSERT + b"\n" + ddl + b"\n")
    code, out, _ = _run(capsys, "--pretty", tmp_path / "m.jsonl")
    assert code == 0
    text = "\n".join(out)
    assert out[0].startswith("insert shop.orders ") and "at 2023-11-14 22:13:20.123 UTC" in out[0]
    assert "id=18446744073709551615" in out[1] and 'note="a b"' in out[1]
    assert "ALTER TABLE t ADD c INT" in text
    assert "True" not in text and "b'" not in text and "Decimal(" not in text


def test_pretty_streams_through_a_pipe(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "anycdc", "decode", "--pretty"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(INSERT + b"\n")
        proc.stdin.flush()  # stdin stays open: the event must show before the input ends
        ready, _, _ = select.select([proc.stdout], [], [], WAIT_FOR_OUTPUT_S)
        assert ready, "no output while the input is still open"
        assert proc.stdout.readline().startswith(b"insert shop.orders ")
    finally:
        proc.stdin.close()
        proc.wait()


def test_json_safe_writes_big_numbers_as_strings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.jsonl").write_bytes(INSERT + b"\n")
    _, out, _ = _run(capsys, tmp_path / "m.jsonl")
    assert json.loads(out[0])["after"]["id"] == 18446744073709551615
    assert b'"id":18446744073709551615' in out[0].encode()
    _, out, _ = _run(capsys, "--json-safe", tmp_path / "m.jsonl")
    event = json.loads(out[0])
    assert event["after"]["id"] == "18446744073709551615"
    assert event["ts_ms"] == 1700000000123  # small integers stay numbers


def test_json_safe_writes_untyped_decimals_as_strings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    maxwell = b'{"database":"d","table":"t","type":"insert","ts":1,"xid":2,"data":{"id":1,"p":0.1}}'
    (tmp_path / "m.jsonl").write_bytes(maxwell + b"\n")
    _, out, _ = _run(capsys, tmp_path / "m.jsonl")
    assert '"p":0.1' in out[0]
    _, out, _ = _run(capsys, "--json-safe", tmp_path / "m.jsonl")
    assert json.loads(out[0])["after"] == {"id": 1, "p": "0.1"}


def test_quiet_and_progress(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "m.jsonl").write_bytes(INSERT + b"\n")
    code, out, err = _run(capsys, "--quiet", tmp_path / "m.jsonl")
    assert code == 0 and len(out) == 1 and err == []
    tally = Tally(progress=True, every_s=0)
    for _ in range(256):
        tally.message()
    assert capsys.readouterr().err.startswith("decode: 256 messages, 0 events, 0 errors, ")


# ------------------------------------------------------------------ input that reads as nothing


def test_folder_without_message_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.csv").write_text("a,b\n")
    code, out, err = _run(capsys, tmp_path)
    assert code == 2 and out == []
    assert err == [
        f"anycdc: {tmp_path}: no message file (looked for .avro, .json, .jsonl, .ndjson, .txt, "
        "optionally .gz); found only: .csv"
    ]


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, tmp_path / "nope.jsonl")
    assert code == 2 and err == [f"anycdc: {tmp_path / 'nope.jsonl'}: no such file or folder"]


def test_empty_file_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.jsonl").write_text("\n")
    code, _, err = _run(capsys, tmp_path / "empty.jsonl")
    assert code == 0 and err[0] == f"anycdc: no messages read from {tmp_path / 'empty.jsonl'}"


def test_json_file_holding_json_lines_gets_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dump.json").write_bytes(INSERT + b"\n" + INSERT + b"\n")
    code, out, err = _run(capsys, tmp_path / "dump.json")
    assert code == 0 and out == []
    assert err[1] == (
        f"hint: {tmp_path / 'dump.json'} holds 2 lines of JSON; a .json file is ONE message: "
        "rename it to .jsonl, or pass --input-shape lines, to read one message per line"
    )


def test_a_named_input_shape_reads_a_json_file_s_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .json file is one message, unless the user names how its lines hold messages."""
    (tmp_path / "dump.json").write_bytes(INSERT + b"\n" + INSERT + b"\n")
    code, out, err = _run(capsys, "--input-shape", "lines", tmp_path / "dump.json")
    assert code == 0 and len(out) == 2 and err[-1].startswith("2 messages, 2 events, 0 errors")


def test_gzip_files_and_gzip_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(INSERT + b"\n" + INSERT + b"\n"))
    (tmp_path / "b.json.gz").write_bytes(gzip.compress(INSERT))
    code, out, _ = _run(capsys, tmp_path)
    assert code == 0 and len(out) == 3
    _stdin(monkeypatch, gzip.compress(INSERT + b"\n"))
    code, out, _ = _run(capsys)
    assert code == 0 and len(out) == 1


def test_a_gz_file_that_is_not_gzip_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("bad.jsonl.gz", "bad.json.gz"):
        bad = tmp_path / name
        bad.write_bytes(INSERT)
        code, _, err = _run(capsys, bad)
        assert code == 2 and len(err) == 1, err  # what decode says of input it cannot read
        assert err[0].startswith(f"anycdc: {bad}: not readable as gzip"), err


# ------------------------------------------------------------------ Kafka flags (no broker)


def test_kafka_flags_need_a_bootstrap(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--topic", "t", "--from-beginning")
    assert code == 2 and err == [
        "anycdc: --topic, --from-beginning need --kafka-bootstrap HOST:PORT"
    ]


def test_unreachable_broker_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("confluent_kafka")
    from anycdc.devtools.kafka import free_port

    bootstrap = f"127.0.0.1:{free_port()}"
    code, out, err = _run(
        capsys, "--kafka-bootstrap", bootstrap, "--topic", "t", "--kafka-timeout", "2"
    )
    assert code == 2 and out == []
    assert len(err) == 1 and err[0].startswith(
        f"anycdc: Kafka at {bootstrap} did not answer within 2s"
    )


def test_max_messages_of_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.jsonl").write_bytes((INSERT + b"\n") * 3)
    code, out, err = _run(capsys, "--max-messages", "2", tmp_path / "m.jsonl")
    assert code == 0 and len(out) == 2 and err == ["2 messages, 2 events, 0 errors"]
    code, _, err = _run(capsys, "--max-messages", "0", tmp_path / "m.jsonl")
    assert code == 2 and err == ["anycdc: --max-messages must be at least 1, got 0"]


def test_refusals_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.jsonl").write_bytes(INSERT + b"\n")
    code, _, err = _run(capsys, "--input-shape", "kcat-json", tmp_path / "m.jsonl")
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"anycdc: {tmp_path / 'm.jsonl'}:1: not a kcat -J line (")
    code, _, err = _run(capsys, "--pretty", "--json-safe", tmp_path / "m.jsonl")
    assert code == 2 and err == ["anycdc: --json-safe is for JSON Lines; --pretty prints text"]


def test_json_safe_writes_zoned_times_as_offsets_with_the_zone_beside(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import datetime as dt

    case = Path(__file__).resolve().parents[1] / "cases" / "canal-json"
    argv = ["decode", "--json-safe", "-o", "timezone=Asia/Shanghai"]
    assert main([*argv, str(case / "constructed_timezone_option.jsonl")]) == 0
    event = json.loads(capsys.readouterr().out.splitlines()[0])
    assert dt.datetime.fromisoformat(event["after"]["dt"]).utcoffset() == dt.timedelta(hours=8)
    assert event["zones"] == {"before.dt": "Asia/Shanghai", "after.dt": "Asia/Shanghai"}


def test_a_wrong_format_that_decodes_nothing_names_what_the_messages_look_like(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in.jsonl").write_bytes(INSERT + b"\n")
    wrong = "canal-json"  # INSERT is a Debezium message
    code, out, err = _run(capsys, "--format", wrong, tmp_path / "in.jsonl")
    assert code == 0 and out == []
    hint = [line for line in err if "they look like" in line]
    assert len(hint) == 1 and hint[0].startswith(f"anycdc: no message is {wrong}: ")
    assert err[-1].endswith(SUMMARY_SUFFIX)  # the summary stays the last line
    code, out, err = _run(capsys, tmp_path / "in.jsonl")  # detected: no hint
    assert len(out) == 1 and not any("look like" in line for line in err)
