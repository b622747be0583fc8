"""Where Avro writer schemas come from: a schema registry, a folder of ``.avsc`` files, or
this process's memory; and the Confluent wire format that names them by id.

A Confluent-framed message is ``0x00`` (magic byte) + the schema id (big-endian signed
int32) + the Avro binary encoding of one datum written with that schema.
:func:`unframe` splits it; :func:`frame` builds it.

Schema sources (:class:`SchemaSource`):

* :class:`ConfluentRegistry` speaks the Confluent Schema Registry REST API (Confluent,
  Karapace, Apicurio's ``/apis/ccompat/v7``, Redpanda): ``GET /schemas/ids/{id}`` to read,
  ``POST /subjects/{subject}/versions`` to register (encoders). Basic or bearer auth,
  timeouts, failover over several URLs; credentials never appear in its ``repr``, in
  errors or in :attr:`SchemaSource.key`.
* :class:`SchemaFolder` reads ``<id>.avsc`` (the decimal id, e.g. ``42.avsc``) from a
  folder; encoders write there, with an id derived from the schema text
  (:func:`content_id`).
* :class:`MemorySchemas`: this process only (what encoders register, decoders of the
  same process find): tests, conversions in one process.

Schemas are cached per process, keyed by (source, id), deliberately: a Spark Python
worker decodes many micro-batches with short-lived decoders, and the registry must see
each id once per worker process, not once per batch. Registration is cached likewise.

>>> frame(7, b"\\x02") == b"\\x00\\x00\\x00\\x00\\x07\\x02"
True
>>> unframe(b"\\x00\\x00\\x00\\x00\\x07\\x02")
(7, 5)
>>> memory = MemorySchemas()
>>> schema_id = memory.register("t-value", '{"type": "string"}')
>>> schema_text(memory, schema_id)
'{"type": "string"}'
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from anycdc.errors import AnyCdcError, SchemaSourceError

MAGIC: Final = 0
FRAME_SIZE: Final = 5  # magic byte + int32 schema id
MAX_SCHEMA_ID: Final = 2**31 - 1
SCHEMA_SUFFIX: Final = ".avsc"
CONTENT_TYPE: Final = "application/vnd.schemaregistry.v1+json"
ACCEPT: Final = f"{CONTENT_TYPE}, application/json"
SCHEMA_TYPE_AVRO: Final = "AVRO"
NOT_FOUND_CODES: Final = frozenset({40403, 40401})  # schema not found, subject not found
ATTEMPTS: Final = 3  # rounds over the registry URLs for a transient failure
RETRY_PAUSE: Final = 0.5  # seconds, times the round number


class SchemaNotFound(AnyCdcError, LookupError):
    """The source answered: it has no schema with this id (the message names a wrong id)."""


# --------------------------------------------------------------------------- the frame
def frame(schema_id: int, body: bytes) -> bytes:
    """The Confluent wire format: magic byte 0, the id (big-endian int32), the body."""
    return bytes((MAGIC,)) + schema_id.to_bytes(4, "big", signed=True) + body


def unframe(data: bytes) -> tuple[int, int]:
    """(schema id, offset of the Avro body); ValueError when ``data`` is not framed."""
    if len(data) < FRAME_SIZE:
        raise ValueError(f"{len(data)} bytes: shorter than the 5-byte Confluent frame")
    if data[0] != MAGIC:
        raise ValueError(
            f"first byte is 0x{data[0]:02x}, not the Confluent magic byte 0x00"
            + (" (this looks like JSON)" if data[:1] in (b"{", b"[") else "")
        )
    return int.from_bytes(data[1:FRAME_SIZE], "big", signed=True), FRAME_SIZE


def content_id(text: str, attempt: int = 0) -> int:
    """A positive int32 derived from a schema text (``attempt`` > 0 after a collision)."""
    digest = hashlib.sha256(f"{attempt}:{text}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % MAX_SCHEMA_ID + 1


# --------------------------------------------------------------------------- sources
class SchemaSource(ABC):
    """Reads (and, for encoders, registers) Avro schema texts by id."""

    @property
    @abstractmethod
    def key(self) -> str:
        """Identifies the source in the per-process caches (never holds a secret)."""

    @abstractmethod
    def fetch(self, schema_id: int) -> str:
        """The schema text of ``schema_id``; :class:`SchemaNotFound` when there is none."""

    @abstractmethod
    def register(self, subject: str, text: str) -> int:
        """Store ``text`` (under ``subject`` where the source has subjects); its id."""

    def describe(self) -> str:
        """How errors name this source (no secrets)."""
        return self.key


@dataclass(frozen=True)
class ConfluentRegistry(SchemaSource):
    """A Confluent-compatible schema registry (see the module docstring).

    ``urls``: base URLs without credentials (tried in order); ``authorization``: the
    ``Authorization`` header value (basic or bearer), kept out of ``repr``.
    """

    urls: tuple[str, ...]
    authorization: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    ca_file: str | None = None

    @classmethod
    def from_options(
        cls,
        urls: str,
        *,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        timeout: float = 10.0,
        ca_file: str | None = None,
    ) -> ConfluentRegistry:
        """Parse ``http[s]://[user:password@]host[:port][/path]``, comma-separated; the
        credentials of a URL are used as basic auth when no other are given."""
        bases: list[str] = []
        for raw in urls.split(","):
            if not raw.strip():
                continue
            base, url_user, url_password = split_credentials(raw.strip())
            bases.append(base)
            if url_user is not None and user is None and token is None:
                user = url_user
                password = password if password is not None else url_password
        if not bases:
            raise ValueError("no registry URL given")
        if token and user:
            raise ValueError("give a bearer token or a user and password, not both")
        authorization = None
        if token:
            authorization = f"Bearer {token}"
        elif user is not None:
            pair = f"{user}:{password or ''}".encode()
            authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        return cls(tuple(bases), authorization, timeout, ca_file)

    @property
    def key(self) -> str:
        return "registry:" + ",".join(self.urls)

    def describe(self) -> str:
        return "schema registry " + ", ".join(self.urls)

    def fetch(self, schema_id: int) -> str:
        answer = self._call("GET", f"/schemas/ids/{schema_id}", None, f"schema id {schema_id}")
        text = answer.get("schema") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            raise SchemaSourceError(
                f"{self.describe()}: schema id {schema_id}: no 'schema' text in the answer"
            )
        kind = answer.get("schemaType") or SCHEMA_TYPE_AVRO
        if kind != SCHEMA_TYPE_AVRO:
            raise SchemaNotFound(f"schema id {schema_id} is a {kind} schema, not Avro")
        return text

    def register(self, subject: str, text: str) -> int:
        path = f"/subjects/{urllib.parse.quote(subject, safe='')}/versions"
        answer = self._call("POST", path, {"schema": text}, f"subject {subject!r}")
        schema_id = answer.get("id") if isinstance(answer, dict) else None
        if type(schema_id) is not int:
            raise SchemaSourceError(f"{self.describe()}: subject {subject!r}: no id in the answer")
        return schema_id

    def _call(self, method: str, path: str, body: Any, what: str) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": ACCEPT, "User-Agent": user_agent()}
        if data is not None:
            headers["Content-Type"] = CONTENT_TYPE
        if self.authorization:
            headers["Authorization"] = self.authorization
        context = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else None
        failures: list[str] = []
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(RETRY_PAUSE * attempt)
            for base in self.urls:
                url = base.rstrip("/") + path  # http(s) only: checked in split_credentials
                request = urllib.request.Request(url, data=data, headers=headers, method=method)  # noqa: S310
                try:
                    with urllib.request.urlopen(  # noqa: S310
                        request, timeout=self.timeout, context=context
                    ) as response:
                        return json.loads(response.read())
                except urllib.error.HTTPError as exc:
                    code, reason = _registry_error(exc)
                    if exc.code == 404 and code in NOT_FOUND_CODES | {None}:
                        raise SchemaNotFound(f"{self.describe()}: {what}: {reason}") from None
                    if exc.code < 500:
                        raise SchemaSourceError(
                            f"{self.describe()}: {what}: HTTP {exc.code} {reason}{_hint(exc.code)}"
                        ) from None
                    failures.append(f"{base}: HTTP {exc.code} {reason}")
                except (urllib.error.URLError, OSError, ValueError) as exc:
                    failures.append(f"{base}: {getattr(exc, 'reason', exc)}")
        raise SchemaSourceError(
            f"{self.describe()}: {what}: no answer after {ATTEMPTS} rounds "
            f"(last: {failures[-1] if failures else 'none'})"
        )


@dataclass(frozen=True)
class SchemaFolder(SchemaSource):
    """``<id>.avsc`` files in ``folder`` (the id in decimal)."""

    folder: Path

    @property
    def key(self) -> str:
        return f"folder:{self.folder.resolve()}"

    def describe(self) -> str:
        return f"schema folder {self.folder}"

    def path_of(self, schema_id: int) -> Path:
        return self.folder / f"{schema_id}{SCHEMA_SUFFIX}"

    def fetch(self, schema_id: int) -> str:
        path = self.path_of(schema_id)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if not self.folder.is_dir():  # misconfigured (or not mounted here): not the message
                raise SchemaSourceError(f"{self.describe()} does not exist") from None
            raise SchemaNotFound(f"{self.describe()}: no {path.name}") from None
        except OSError as exc:
            raise SchemaSourceError(f"{self.describe()}: cannot read {path.name}: {exc}") from None

    def register(self, subject: str, text: str) -> int:
        self.folder.mkdir(parents=True, exist_ok=True)
        for attempt in range(64):
            schema_id = content_id(text, attempt)
            path = self.path_of(schema_id)
            try:
                if path.read_text(encoding="utf-8") == text:
                    return schema_id
                continue  # another schema holds this id: the next candidate
            except FileNotFoundError:
                pass
            with contextlib.suppress(FileExistsError), open(path, "x", encoding="utf-8") as out:
                out.write(text)
            if path.read_text(encoding="utf-8") == text:
                return schema_id
        raise SchemaSourceError(f"{self.describe()}: no free id for the schema of {subject!r}")


class MemorySchemas(SchemaSource):
    """This process's schemas (all instances share them)."""

    _texts: dict[int, str] = {}  # noqa: RUF012 - shared on purpose: the process's store
    _lock = threading.Lock()

    @property
    def key(self) -> str:
        return "memory"

    def describe(self) -> str:
        return "this process's schemas (no registry_url or schema_dir given)"

    def fetch(self, schema_id: int) -> str:
        try:
            return self._texts[schema_id]
        except KeyError:
            raise SchemaNotFound(f"{self.describe()}: no schema id {schema_id}") from None

    def register(self, subject: str, text: str) -> int:
        with self._lock:
            for attempt in range(64):
                schema_id = content_id(text, attempt)
                held = self._texts.setdefault(schema_id, text)
                if held == text:
                    return schema_id
        raise SchemaSourceError(f"{self.describe()}: no free id for the schema of {subject!r}")


# --------------------------------------------------------------------------- per-process caches
_FETCHED: dict[tuple[str, int], str] = {}
_REGISTERED: dict[tuple[str, str, str], int] = {}
_CACHE_LOCK: Final = threading.Lock()
FETCH_COUNT: dict[tuple[str, int], int] = {}  # how often each id was fetched (for tests)


def schema_text(source: SchemaSource, schema_id: int) -> str:
    """The text of ``schema_id``, fetched at most once per process and source."""
    cache_key = (source.key, schema_id)
    text = _FETCHED.get(cache_key)
    if text is not None:
        return text
    with _CACHE_LOCK:
        text = _FETCHED.get(cache_key)
        if text is None:
            FETCH_COUNT[cache_key] = FETCH_COUNT.get(cache_key, 0) + 1
            text = source.fetch(schema_id)
            _FETCHED[cache_key] = text
    return text


def registered_id(source: SchemaSource, subject: str, text: str) -> int:
    """Register ``text`` under ``subject`` once per process and source; its id."""
    cache_key = (source.key, subject, text)
    schema_id = _REGISTERED.get(cache_key)
    if schema_id is None:
        with _CACHE_LOCK:
            schema_id = _REGISTERED.get(cache_key)
            if schema_id is None:
                schema_id = source.register(subject, text)
                _REGISTERED[cache_key] = schema_id
                _FETCHED.setdefault((source.key, schema_id), text)
    return schema_id


# --------------------------------------------------------------------------- helpers
def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``http://u:p@host/x`` -> (``http://host/x``, ``u``, ``p``); only http(s) URLs."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {mask_url(url)!r}")
    if parts.username is None:
        return url, None, None
    netloc = parts.netloc.rpartition("@")[2]
    base = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    user = urllib.parse.unquote(parts.username)
    password = urllib.parse.unquote(parts.password) if parts.password is not None else None
    return base, user, password


def mask_url(text: str, mask: str = "***") -> str:
    """A URL (or comma-separated URLs) with any ``user:password@`` replaced by the mask."""
    out = []
    for part in text.split(","):
        scheme, sep, rest = part.partition("://")
        at = rest.find("@")
        slash = rest.find("/")
        if sep and at >= 0 and (slash < 0 or at < slash):
            part = f"{scheme}{sep}{mask}@{rest[at + 1 :]}"
        out.append(part)
    return ",".join(out)


def user_agent() -> str:
    """anycdc and the process id: a registry's access log shows who fetched what."""
    from anycdc import __version__

    return f"anycdc/{__version__} (pid {os.getpid()})"


def _registry_error(exc: urllib.error.HTTPError) -> tuple[int | None, str]:
    """The registry's ``error_code`` and ``message`` of an HTTP error (reason if none)."""
    try:
        body = json.loads(exc.read() or b"{}")
    except (ValueError, OSError):
        body = None
    if not isinstance(body, dict):
        return None, str(exc.reason)
    code = body.get("error_code")
    message = body.get("message")
    return (code if type(code) is int else None), str(message or exc.reason)


def _hint(code: int) -> str:
    if code in (401, 403):
        return " (check registry_user / registry_password or registry_token)"
    return ""


def parse_timeout(text: str | None, default: float = 10.0) -> float:
    value = float(text) if text else default
    if not value > 0:
        raise ValueError(f"expected seconds > 0, got {text!r}")
    return value


__all__: Sequence[str] = [
    "ConfluentRegistry",
    "MemorySchemas",
    "SchemaFolder",
    "SchemaNotFound",
    "SchemaSource",
    "SchemaSourceError",
    "frame",
    "mask_url",
    "registered_id",
    "schema_text",
    "unframe",
]
