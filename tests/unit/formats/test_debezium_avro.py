"""debezium-avro: round trips, the Confluent frame, schema folders, the per-process schema
cache, errors, detection, options and secrets (the registry itself: tests/infra)."""

from __future__ import annotations

import json
import shutil
import socket
from decimal import Decimal
from pathlib import Path

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.changelog import CHANGELOG_COLUMNS
from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.errors import DecodeError, EncodeError, OptionError, SchemaSourceError
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import detect, format_class
from anycdc.formats.debezium.avro import DebeziumAvro
from anycdc.formats.debezium.avro_schemas import avro_schema
from anycdc.formats.debezium.format import DebeziumJson
from anycdc.formats.schema_source import (
    ConfluentRegistry,
    SchemaFolder,
    content_id,
    frame,
    mask_url,
    unframe,
)
from anycdc.spark.decode import ChangelogRows
from anycdc.values import LogicalType
from tests.cases import iter_cases
from tests.unit.formats.test_debezium import (
    NON_ROW_EVENTS,
    golden_events,
    st_debezium_event,
    st_mongo_event,
)

CASES = Path(__file__).resolve().parents[2] / "cases" / "debezium-avro"
SCHEMA_DIR = CASES / "schemas"
SECRET = "s3cr3t-Pa55"
fmt = DebeziumAvro()  # this process's schemas


def avro(event: ChangeEvent) -> ChangeEvent:
    return event.with_changes(format="debezium-avro")


def case_bytes(name: str) -> tuple[bytes, bytes | None]:
    key = CASES / f"{name}.key.avro"
    return (CASES / f"{name}.avro").read_bytes(), key.read_bytes() if key.exists() else None


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- round trips
@given(st_debezium_event().map(avro))
def test_round_trip_row_changes_with_their_avro_key(event: ChangeEvent) -> None:
    [message] = fmt.encode(event)
    assert message[0] == 0 and detect(message).format == "debezium-avro"
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]


@given(st_mongo_event().filter(lambda e: e.position.parts[1] < 2**31).map(avro))  # ord: int32
def test_round_trip_mongodb_documents(event: ChangeEvent) -> None:
    [message] = fmt.encode(event)
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]


@pytest.mark.parametrize("event", [avro(e) for e in NON_ROW_EVENTS], ids=lambda e: e.op.value)
def test_round_trip_other_events(event: ChangeEvent) -> None:
    [message] = fmt.encode(event)
    assert fmt.decode(message) == [event]


def typed_golden_events() -> list[ChangeEvent]:
    """debezium-json's decoded golden events that Avro carries as they are: typed rows
    (untyped ones get types from their values), and not Flink's ``float``/``double``
    aliases (Avro says float32/float64, and a float32 keeps only its float32 value)."""
    out = []
    for event in golden_events():
        columns = event.columns
        untyped_row = columns is None and event.op in (Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT)
        mongo = event.extra.get("connector") == "mongodb"
        if "cloudevents" in event.extra:
            continue  # a CloudEvents envelope is the JSON converter's; Avro has none
        if (untyped_row and not mongo) or any(
            c.vendor_type in ("float", "double") for c in (columns or {}).values()
        ):
            continue
        out.append(avro(event))
    return out


@pytest.mark.parametrize("event", typed_golden_events(), ids=lambda e: f"{e.op.value}-{e.table}")
def test_every_typed_golden_event_of_debezium_json_round_trips(event: ChangeEvent) -> None:
    [message] = fmt.encode(event)
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]


def test_a_row_without_types_gets_them_from_its_values() -> None:
    event = ChangeEvent(
        op=Op.INSERT, format="debezium-avro", database="d", table="t", key=("id",),
        after={"id": 1, "name": "x", "ok": True, "n": None}, ts_ms=1,
    )  # fmt: skip
    [decoded] = fmt.decode(fmt.encode(event)[0], key=fmt.encode_key(event))
    assert decoded.after == event.after and decoded.key == ("id",)
    assert decoded.columns is not None
    assert {n: str(c.type) for n, c in decoded.columns.items()} == {
        "id": "int64", "name": "string", "ok": "boolean", "n": "string",
    }  # fmt: skip


def test_an_image_lacking_a_column_is_refused_unless_postgres_toast() -> None:
    columns = {
        "id": Column(LogicalType("int64"), "int64"),
        "body": Column(LogicalType("string"), "string"),
    }
    event = ChangeEvent(
        op=Op.UPDATE, format="debezium-avro", database="d", table="t", key=("id",),
        before={"id": 1}, after={"id": 1, "body": "b"}, columns=columns, partial=("before",),
        ts_ms=1,
    )  # fmt: skip
    with pytest.raises(EncodeError, match="lacks column 'body'"):
        fmt.encode(event)
    toast = event.with_changes(extra={"connector": "postgresql"}, before=None, partial=())
    toast = toast.with_changes(after={"id": 1}, partial=("after",))
    [message] = fmt.encode(toast)
    assert fmt.decode(message, key=fmt.encode_key(toast)) == [toast]


def test_float32_is_the_exact_float32_value() -> None:
    columns = {"id": Column(LogicalType("int64"), "int64"), "f": Column(LogicalType("float32"))}
    event = ChangeEvent(
        op=Op.INSERT, format="debezium-avro", database="d", table="t", key=("id",),
        after={"id": 1, "f": 1.1}, columns=columns, ts_ms=1,
    )  # fmt: skip
    [decoded] = fmt.decode(fmt.encode(event)[0])
    assert decoded.after is not None and decoded.after["f"] == 1.100000023841858  # float32(1.1)


# --------------------------------------------------------------------------- the Avro schemas
def test_avro_schema_follows_the_connect_converter() -> None:
    connect = {
        "type": "struct", "name": "srv.db.t.Value", "optional": False, "version": 1,
        "fields": [
            {"type": "int8", "optional": False, "field": "a"},
            {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
             "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "9"},
             "field": "d"},
            {"type": "int32", "optional": True, "name": "org.apache.kafka.connect.data.Date",
             "version": 1, "field": "day"},
            {"type": "struct", "optional": True, "field": "s",
             "fields": [{"type": "string", "optional": True, "field": "x"}]},
        ],
    }  # fmt: skip
    assert avro_schema(connect) == {
        "type": "record", "name": "Value", "namespace": "srv.db.t",
        "fields": [
            {"name": "a", "type": {"type": "int", "connect.type": "int8"}},
            {"name": "d", "type": ["null", {
                "type": "bytes", "connect.version": 1,
                "connect.parameters": {"scale": "2", "connect.decimal.precision": "9"},
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                "logicalType": "decimal", "precision": 9, "scale": 2}], "default": None},
            {"name": "day", "type": ["null", {
                "type": "int", "connect.version": 1,
                "connect.name": "org.apache.kafka.connect.data.Date", "logicalType": "date"}],
             "default": None},
            {"name": "s", "type": ["null", {
                "type": "record", "name": "ConnectDefault", "namespace": "io.confluent.connect.avro",
                "fields": [{"name": "x", "type": ["null", "string"], "default": None}]}],
             "default": None},
        ],
        "connect.version": 1, "connect.name": "srv.db.t.Value",
    }  # fmt: skip


def test_a_column_name_avro_cannot_hold_is_an_encode_error() -> None:
    event = ChangeEvent(
        op=Op.INSERT, format="debezium-avro", database="d", table="t",
        after={"order-id": 1}, columns={"order-id": Column(LogicalType("int64"))}, ts_ms=1,
    )  # fmt: skip
    with pytest.raises(EncodeError, match="'order-id' is not a valid Avro name"):
        fmt.encode(event)


def test_record_names_are_made_avro_valid() -> None:
    event = ChangeEvent(
        op=Op.INSERT, format="debezium-avro", database="my-db", table="2024 orders",
        key=("id",), after={"id": 1}, columns={"id": Column(LogicalType("int64"), "int64")},
        ts_ms=1,
    )  # fmt: skip
    [message] = fmt.encode(event)
    schema = fmt.avro_schema_of(message)
    assert schema["name"] == "anycdc.my_db._2024_orders.Envelope"
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]


# --------------------------------------------------------------------------- frame and folder
def test_the_frame_is_magic_byte_and_big_endian_id() -> None:
    assert frame(258, b"x") == b"\x00\x00\x00\x01\x02x"
    assert unframe(b"\x00\x00\x00\x01\x02x") == (258, 5)
    with pytest.raises(ValueError, match="looks like JSON"):
        unframe(b'{"op":"c"}')


def test_a_schema_folder_gives_the_same_id_to_the_same_text(tmp_path: Path) -> None:
    folder = SchemaFolder(tmp_path / "schemas")
    first = folder.register("t-value", '{"type":"string"}')
    assert first == content_id('{"type":"string"}')
    assert folder.register("other-value", '{"type":"string"}') == first
    assert (tmp_path / "schemas" / f"{first}.avsc").read_text() == '{"type":"string"}'
    second = folder.register("t-value", '{"type":"long"}')
    assert second != first and folder.fetch(second) == '{"type":"long"}'


def test_encoder_and_decoder_share_a_schema_dir(tmp_path: Path) -> None:
    writer = DebeziumAvro({"schema_dir": str(tmp_path)})
    event = avro(NON_ROW_EVENTS[2])  # a DDL event with a table
    [message] = writer.encode(event)
    schema_id, _ = unframe(message)
    assert (tmp_path / f"{schema_id}.avsc").exists()
    assert DebeziumAvro({"schema_dir": str(tmp_path)}).decode(message) == [event]


def test_each_schema_id_is_read_once_per_process(tmp_path: Path) -> None:
    """Decoders come and go (one per Spark partition and batch); the schema text stays:
    after the first read the file can even be gone."""
    shutil.copytree(SCHEMA_DIR, tmp_path / "schemas")
    value, key = case_bytes("writer_every_logical_type")
    options = {"schema_dir": str(tmp_path / "schemas")}
    first = DebeziumAvro(options).decode(value, key)
    for path in (tmp_path / "schemas").iterdir():
        path.unlink()
    assert DebeziumAvro(options).decode(value, key) == first


# --------------------------------------------------------------------------- errors
def options() -> dict[str, str]:
    return {"schema_dir": str(SCHEMA_DIR)}


@pytest.mark.parametrize(
    "message, path, reason",
    [
        (b'{"op":"c"}', "$", "not a Confluent-framed Avro message: first byte is 0x7b, not the "
                              "Confluent magic byte 0x00 (this looks like JSON)"),
        (b"\x00\x00\x01", "$", "not a Confluent-framed Avro message: 3 bytes: shorter than"),
        (b"\x00\x00\x00\x03\xe7\x02", "$", "schema id 999: schema folder"),
        (b"\x00\xff\xff\xff\xff\x02", "$", "schema id -1: schema folder"),
    ],
)  # fmt: skip
def test_bad_frames_name_the_format_and_the_reason(message: bytes, path: str, reason: str) -> None:
    with pytest.raises(DecodeError) as info:
        DebeziumAvro(options()).decode(message)
    assert info.value.format_id == "debezium-avro" and info.value.path == path
    assert info.value.reason.startswith(reason)


def test_a_body_that_does_not_fit_its_schema_names_the_field() -> None:
    value, _ = case_bytes("seed_sqlserver_create")
    with pytest.raises(DecodeError) as info:
        DebeziumAvro(options()).decode(value[:40])
    assert info.value.path.startswith("$.")
    assert "does not fit its writer schema (id" in info.value.reason
    bad_union = value[:5] + b"\x09" + value[6:]  # union index 4 of ["null", Value]
    with pytest.raises(DecodeError, match=r"\$.before: .*union index -5 out of range"):
        DebeziumAvro(options()).decode(bad_union)


def test_a_missing_schema_folder_fails_the_task_not_the_message(tmp_path: Path) -> None:
    value, _ = case_bytes("seed_sqlserver_create")
    with pytest.raises(SchemaSourceError, match="does not exist"):
        DebeziumAvro({"schema_dir": str(tmp_path / "absent")}).decode(value)


def test_a_schema_that_is_not_avro_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "5.avsc").write_text('{"type": "nonsense"}')
    with pytest.raises(DecodeError, match="schema id 5 is not a valid Avro schema"):
        DebeziumAvro({"schema_dir": str(tmp_path)}).decode(frame(5, b"\x00"))


def test_a_bad_kafka_key_says_it_is_the_key() -> None:
    value, _ = case_bytes("docs_mysql_create_L1143")
    with pytest.raises(DecodeError, match="Kafka key: schema id 4242"):
        DebeziumAvro(options()).decode(value, key=frame(4242, b"\x02"))
    # a JSON key (JSON key converter) still names the key columns
    [event] = DebeziumAvro(options()).decode(value, key=b'{"id": 1004}')
    assert event.key == ("id",)


@given(st.binary(max_size=200), st.sampled_from(sorted(p.name for p in CASES.glob("*.avro"))))
def test_damaged_messages_never_crash(noise: bytes, name: str) -> None:
    value = (CASES / name).read_bytes()
    cut = len(noise) % max(1, len(value))
    for message in (value[:cut] + noise, value[:5] + noise, noise):
        try:
            events = DebeziumAvro(options()).decode(message)
        except DecodeError as exc:
            assert exc.format_id == "debezium-avro"
        else:
            assert isinstance(events, list)


def test_an_unreachable_registry_fails_the_task_instead_of_dead_lettering() -> None:
    url = f"http://u:{SECRET}@127.0.0.1:{closed_port()}"
    value, _ = case_bytes("seed_sqlserver_create")
    rows = ChangelogRows("debezium-avro", {"registry_url": url, "registry_timeout": "2"})
    with pytest.raises(SchemaSourceError) as info:
        list(rows.rows([("t", 0, 0, None, value, None)]))
    assert "127.0.0.1" in str(info.value) and SECRET not in str(info.value)
    # a message that is not framed is still the message's fault: a dead letter
    [row] = ChangelogRows("debezium-avro", {"registry_url": url}).rows(
        [("t", 0, 1, None, b"{}", None)]
    )
    assert row["error"].startswith("debezium-avro: $: not a Confluent-framed Avro message")
    assert set(row) == {name for name, _ in CHANGELOG_COLUMNS}


# --------------------------------------------------------------------------- detection
def foreign_binary_messages() -> list[bytes]:
    return [
        case.input_path.read_bytes()
        for case in iter_cases()
        if case.format_id != "debezium-avro" and case.input_path.suffix == ".avro"
    ]


@pytest.mark.parametrize(
    "message", foreign_binary_messages(), ids=range(len(foreign_binary_messages()))
)
def test_other_avro_formats_are_not_taken_for_debezium_avro(message: bytes) -> None:
    assert DebeziumAvro.sniff(message) < 0.5


@given(st.binary(max_size=64))
def test_sniff_never_raises_and_needs_the_magic_byte(data: bytes) -> None:
    score = DebeziumAvro.sniff(data)
    assert 0.0 <= score <= 1.0
    if not data.startswith(b"\x00"):
        assert score == 0.0


def test_the_class_is_registered_as_a_binary_detectable_encoder() -> None:
    cls = format_class("debezium-avro")
    assert cls is DebeziumAvro and cls.binary and cls.detectable and cls.can_encode


# --------------------------------------------------------------------------- options, secrets
@pytest.mark.parametrize(
    "given, message",
    [
        ({"registry_url": "http://h:8081", "schema_dir": "x"}, "give registry_url or schema_dir"),
        ({"registry_password": "p"}, "option registry_password needs registry_url"),
        ({"registry_url": "ftp://h/x"}, "not an http(s) URL"),
        ({"registry_url": "http://h", "registry_token": "t", "registry_user": "u"}, "not both"),
        ({"registry_url": "http://h", "registry_timeout": "0"}, "expected seconds > 0"),
        ({"registry": "http://h"}, "unknown option(s) registry"),
    ],
)  # fmt: skip
def test_bad_options_are_refused(given: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        DebeziumAvro(given)


def test_credentials_in_the_url_become_basic_auth_and_never_show() -> None:
    fmt_ = DebeziumAvro({"registry_url": f"https://alice:{SECRET}@reg.example:8081/ccompat"})
    source = fmt_.schema_source
    assert isinstance(source, ConfluentRegistry)
    assert source.urls == ("https://reg.example:8081/ccompat",)
    assert source.authorization == "Basic YWxpY2U6czNjcjN0LVBhNTU="  # alice:s3cr3t-Pa55
    assert SECRET not in repr(source) and SECRET not in source.key
    with pytest.raises(OptionError) as info:
        DebeziumAvro({"registry_url": f"ftp://alice:{SECRET}@h/"})
    assert SECRET not in str(info.value)
    token = DebeziumAvro({"registry_url": "http://h", "registry_token": SECRET}).schema_source
    assert isinstance(token, ConfluentRegistry) and token.authorization == f"Bearer {SECRET}"


def test_mask_url_hides_user_and_password_only() -> None:
    assert mask_url(f"http://u:{SECRET}@h:1/p,https://h2") == "http://***@h:1/p,https://h2"
    assert mask_url("http://h:1/p?x=a@b") == "http://h:1/p?x=a@b"


def test_registry_secrets_are_masked_in_the_printed_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli([
        "run", "--kafka-bootstrap", "127.0.0.1:9093", "--topics", "t", "--target", "lake",
        "--format", "debezium-avro",
        "--option", f"registry_url=http://bob:{SECRET}@reg:8081",
        "--option", f"registry_password={SECRET}", "--option", "registry_timeout=5",
        "--topic-option", f"t2:registry_token={SECRET}", "--print-config",
    ])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    assert SECRET not in out.out + out.err
    printed = json.loads(out.out)
    assert printed["format_options"] == {
        "registry_url": "http://***@reg:8081", "registry_password": "***",
        "registry_timeout": "5",
    }  # fmt: skip
    assert printed["per_topic"]["t2"]["options"]["registry_token"] == "***"
    config = PipelineConfig.from_mapping(
        {"source_dir": "in", "format": "debezium-avro", "format_options": {"registry_token": SECRET,
                                                                          "registry_url": "http://r"}}
    )  # fmt: skip
    assert SECRET not in json.dumps(config.redacted(), default=str)


# --------------------------------------------------------------------------- the CLI
def test_convert_writes_framed_avro_and_its_schemas(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes((Path(__file__).resolve().parents[2] / "cases" / "debezium-json" /
                        "seed_sqlserver_create.json").read_bytes().replace(b"\n", b" ") + b"\n")  # fmt: skip
    out = tmp_path / "out"
    assert cli(["convert", "--to", "debezium-avro", str(source), str(out)]) == 0
    [message_file] = sorted(out.glob("*.avro"))
    message = message_file.read_bytes()
    schema_id, _ = unframe(message)
    assert (out / "schemas" / f"{schema_id}.avsc").exists()
    [event] = DebeziumAvro({"schema_dir": str(out / "schemas")}).decode(message)
    [reference] = DebeziumJson().decode(source.read_bytes().strip())
    assert event == reference.with_changes(format="debezium-avro")


def test_the_bench_reads_framed_messages_with_fastavro() -> None:
    [message] = fmt.encode(avro(NON_ROW_EVENTS[0]))
    record = fastavro.schemaless_reader(
        __import__("io").BytesIO(message[5:]), fmt.avro_schema_of(message)
    )
    assert isinstance(record, dict) and record["op"] == "t"


def test_decimal_values_stay_exact_through_avro() -> None:
    big = Decimal("12345678901234567890123456789.123456789")
    columns = {
        "id": Column(LogicalType("int64"), "int64"),
        "d": Column(LogicalType("decimal", 38, 9), "org.apache.kafka.connect.data.Decimal"),
    }
    event = ChangeEvent(
        op=Op.INSERT, format="debezium-avro", database="d", table="t", key=("id",),
        after={"id": 1, "d": big}, columns=columns, ts_ms=1, position=Position((5,)),
    )  # fmt: skip
    [decoded] = fmt.decode(fmt.encode(event)[0], key=fmt.encode_key(event))
    assert decoded.after is not None and decoded.after["d"] == big
    assert str(decoded.after["d"]) == str(big)


def test_a_heartbeat_is_a_lone_epoch_ms_long() -> None:
    heartbeat = avro(NON_ROW_EVENTS[5])
    [message] = fmt.encode(heartbeat)
    assert len(message) == 5 + 6 and detect(message).format == "debezium-avro"
    assert fmt.decode(message) == [heartbeat]
    # a lone long that is no plausible epoch-ms time says nothing
    assert DebeziumAvro.sniff(message[:5] + b"\x02") == 0.0
    assert DebeziumAvro.sniff(message[:5] + b"\xff\xff\xff\xff\xff\xff\x7f") == 0.0
