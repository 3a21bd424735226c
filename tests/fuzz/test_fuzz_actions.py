"""Fuzzes every action of the catalog (tools, legacy actions, resources,
record_interpretation and the legacy aliases) and fails on any input that
makes the database answer with anything but success or an NT001 error
envelope (see conftest.py for the oracle).

Per action, three sources of input:

* a fixed corpus: valid-looking requests on the seeded rows, each property
  replaced in turn by hostile values (wrong types, huge strings, NUL, deep
  nesting, out-of-range numbers and dates), unknown fields, and
  action-specific cases (dates out of range in every date field of every
  entity type, odd resource URIs, hostile files…);
* Hypothesis, derandomised (the same inputs on every run): requests generated
  from the action's published input_schema (hypothesis-jsonschema), with
  seeded ids, users and dates mixed into their strings, and generic hostile
  JSON;
* literal JSON texts that JSON libraries cannot produce (1e400, duplicate
  keys, lone surrogates, 100,000 levels of nesting).

Texts the ::jsonb cast itself refuses are Postgres' input parsing, not an
action's answer; test_dispatcher_on_refused_texts sends them to
`neotoma._invoke(action, text)`, which parses text itself. Then long
relationship and merge chains, a read-back of every stored entity and source
through the read actions, and `neotoma.verify()` (as the superuser) must find
nothing half-written.

FUZZ_EXAMPLES (default 40) is the number of Hypothesis examples per action.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any, Callable, Iterable

import psycopg
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from conftest import (
    _call,
    FRESH_PERSON,
    PENDING_RUN,
    REFUSED,
    STATS,
    USER_A,
    USER_B,
    FuzzEnv,
    Session,
    admin_dsn,
    assert_clean,
    agent_dsn,
    b64,
    body_problem,
    collapse,
)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))


# ---------------------------------------------------------------------------
# JSON text with things Python's json cannot write


class Raw:
    """A token written verbatim into the JSON text (e.g. the number 1e400)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text!r})"


def dumps(value: Any, ascii: bool = True) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=ascii)}: {dumps(v, ascii)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(v, ascii) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii)


def to_text(value: Any, ascii: bool = True) -> str:
    text = dumps(value, ascii)
    if not ascii:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: only escaped form works
            text = dumps(value, True)
    return text


def nest(depth: int, kind: str = "array", leaf: Any = 1) -> Any:
    v = leaf
    for i in range(depth):
        v = [v] if kind == "array" else ({"k": v} if kind == "object" else ([v] if i % 2 else {"k": v}))
    return v


# ---------------------------------------------------------------------------
# Hostile values

HUGE = 4096


def noise(n: int, seed: str = "neotoma") -> str:
    """`n` characters that do not compress (unlike "x" * n, which TOAST
    squeezes far below Postgres' index row limit)."""
    out, h = "", seed.encode()
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        out += h.hex()
    return out[:n]


BIG_NUMBERS: list[Any] = [
    1e308,
    -1e308,
    123456789012345678901234567890,
    -123456789012345678901234567890,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64,
    2**31,
    -(2**31) - 1,
    5e-324,
    -0.0,
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1e-400"),
    Raw("-0"),
    Raw("1E+308"),
    Raw("0.00000000000000000000000000000000000000000000000001"),
    Raw("1" + "0" * 400),
]
BAD_DATES = [
    "0000-01-01",
    "+10000-01-01",
    "-0001-01-01",
    "-100000-01-01",
    "2024-01-01T00:00:00+23:59",
    "2024-01-01T00:00:00-23:59",
    "2024-01-01T00:00:00+24:00",
    "2024-01-01T00:00:00+99:99",
    "0001-01-01T00:00:00+00:01",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:30:00-01:00",
    "9999-12-31T23:59:59.999999-23:59",
    "0001-01-01T00:00:00.0000001Z",
    "10000-01-01",
    "9999-12-31T23:59:59.9999999Z",
    "0001-01-01T00:00:00+01:00",
    "294276-12-31",
    "294277-01-01",
    "5874898-01-01",
    "-4714-11-23",
    "99999999999999999999-01-01",
    "2024-02-30",
    "2024-13-01",
    "2024-01-01T24:00:00Z",
    "2024-12-31T23:59:60Z",
    "infinity",
    "-infinity",
    "epoch",
    "now",
    "allballs",
    "J2451545",
    "0001-01-01 BC",
    "2024",
    "20240101",
    "2024-W01-1",
    "",
    "1e400",
]
# The ones the slower actions (record_interpretation) get in every date field.
SOME_BAD_DATES = ["0000-01-01", "+10000-01-01", "-0001-01-01", "-100000-01-01", "2024-01-01T00:00:00+23:59", "9999-12-31T23:59:59.9999999Z", "294277-01-01", "infinity"]
GOOD_DATES = ["2024-01-15", "2024-06-01T12:00:00Z", "1999-12-31", "2024-02-29T23:59:59+02:00"]
ODD_STRINGS = [
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\t\r\n",
    "null",
    "NaN",
    "-1",
    "ǅ İ ß ﬁ",
    "\u200b\ufeff\u202e",
    "🙂" * 3,
    "\\",
    '"',
    "'; SELECT pg_sleep(10); --",
    "%_*",
    "../../etc/passwd",
    "sources/",
    "sources/../sources/x",
    "ent_",
    "ent_" + "0" * 32,
    "ent_" + "g" * 32,
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "{",
    "[]",
    "x" * HUGE,
    "é" * 2048,
    "🙂" * 1100,
    "a" * 300 + "@" + "b" * HUGE + ".com",
    "+" + "1" * HUGE,
    "https://" + "a" * HUGE + ".example",
    noise(3000),
    noise(9000),
    "ﷺ" * 300,  # NFKC makes each of these 18 characters
    "ﬃ" * 900,
    "\u0301" * 50,
    "İ" * 1000,
    "ẞ" * 1500,
    "!!!",
]
ODD_URIS = [
    "neotoma://timeline/0000",
    "neotoma://timeline/0000-00",
    "neotoma://timeline/10000",
    "neotoma://timeline/+2024",
    "neotoma://timeline/-0001",
    "neotoma://timeline/2024-13",
    "neotoma://timeline/2024-00",
    "neotoma://timeline/2024-1",
    "neotoma://timeline/2024-01-01",
    "neotoma://timeline/294277",
    "neotoma://timeline/5874898-01",
    "neotoma://timeline/99999999999999999999",
    "neotoma://timeline/２０２４",
    "neotoma://timeline/",
    "neotoma://timeline",
    "neotoma://entities/",
    "neotoma://entities/" + "x" * HUGE,
    "neotoma://entities/%00",
    "neotoma://entity/",
    "neotoma://entity/..",
    "neotoma://entity/ent_x/observations/extra",
    "neotoma://entity/ent_x/relationships",
    "neotoma://source/",
    "neotoma://source/not-a-uuid",
    "neotoma://source/00000000-0000-0000-0000-000000000000",
    "neotoma://sources/extra",
    "neotoma://",
    "neotoma:///",
    "neotoma:",
    "NEOTOMA://SOURCES",
    "http://example.com/",
    "file:///etc/passwd",
    "",
    "neotoma://entity/" + "\u0000",
]


def odd_values(env: FuzzEnv) -> list[Any]:
    """Values any slot of a request gets in the corpus."""
    p = env.pools
    return [
        None,
        True,
        0,
        -1,
        1.5,
        *BIG_NUMBERS[:4],
        Raw("1e400"),
        "",
        "x" * HUGE,
        "a\u0000b",
        "0000-01-01",
        "+10000-01-01",
        [],
        {},
        [None],
        {"\u0000": 1},
        {"x" * HUGE: 1},
        nest(40),
        nest(127, "object"),
        nest(200, "mixed"),
        p.other_user_entity_ids[0],
        USER_B,
    ]


# ---------------------------------------------------------------------------
# Valid-looking requests per action, on the seeded rows


def bases(env: FuzzEnv, action: str) -> list[dict[str, Any]]:
    p = env.pools
    e = p.entity_of_type
    person, invoice, note = e("person"), e("invoice"), e("note")
    csv_source = next((s for s in p.source_ids if s), "")
    rel = p.relationships[0] if p.relationships else ("REFERS_TO", note, person)
    prov = {"extracted_at": "2024-01-16T10:00:00Z", "extractor_version": "fuzz/1"}
    table: dict[str, list[dict[str, Any]]] = {
        "store": [
            {"entities": [{"entity_type": "person", "name": "Ann", "email": "ann@example.com"}]},
            {
                "entities": [
                    {"entity_type": "invoice", "invoice_number": "INV-7", "vendor_name": "Acme", "amount_due": 3, "currency": "EUR", "invoice_date": "2024-04-01"},
                    {"entity_type": "note", "title": "n", "unknown_field": None},
                ],
                "provenance": prov,
                "source_priority": 100,
            },
            {"file_content": b64(b"name,email\nDee,dee@example.com\n"), "mime_type": "text/csv", "original_filename": "p.csv"},
            {"entities": [{"entity_type": "person", "email": "ann@example.com", "role": "lead"}],
             "valid_from": "2021-01-01", "valid_to": "2023-06-01T12:00:00Z"},
        ],
        "retrieve_entity_snapshot": [
            {"entity_id": person},
            {"entity_id": invoice, "at": "2024-06-01T00:00:00Z"},
            {"entity_id": person, "valid_at": "2022-01-01", "at": "2030-01-01"},
        ],
        "retrieve_field_history": [{"entity_id": person, "field": "role"}, {"entity_id": invoice, "field": "amount_due", "at": "2024-06-01"}],
        "list_observations": [{"entity_id": invoice, "limit": 10, "offset": 0}],
        "retrieve_field_provenance": [{"entity_id": person, "field": "email"}, {"entity_id": invoice, "field": "invoice_date"}],
        "retrieve_entities": [
            {"entity_type": "person", "limit": 10, "offset": 0, "include_merged": True},
            {"entity_type": "person", "valid_at": "2022-01-01"},
            {"search": "lead", "current_only": False, "valid_at": "2022-01-01"},
        ],
        "retrieve_entity_by_identifier": [{"identifier": "ann@example.com"}, {"identifier": "INV-1", "entity_type": "invoice"}],
        "list_entity_types": [{"keyword": "invoice"}],
        "correct": [
            {"entity_id": person, "entity_type": "person", "field": "name", "value": "Ann B"},
            {"entity_id": invoice, "entity_type": "invoice", "field": "invoice_date", "value": "2024-01-20"},
            {"entity_id": person, "entity_type": "person", "field": "role", "value": "chair",
             "valid_from": "2022-06-01", "valid_to": "2022-09-01"},
        ],
        "create_relationship": [
            {"relationship_type": "REFERS_TO", "source_entity_id": note, "target_entity_id": invoice, "metadata": {"role": "x"}},
            {"relationship_type": "REFERS_TO", "source_entity_id": note, "target_entity_id": person, "metadata": {"role": "y"},
             "valid_from": "2021-01-01", "valid_to": "2023-06-01T12:00:00Z"},
        ],
        "list_relationships": [{"entity_id": person, "direction": "both", "limit": 10},
                               {"entity_id": person, "valid_at": "2022-01-01", "current_only": False}],
        "get_relationship_snapshot": [{"relationship_type": rel[0], "source_entity_id": rel[1], "target_entity_id": rel[2]},
                                      {"relationship_type": rel[0], "source_entity_id": rel[1], "target_entity_id": rel[2],
                                       "valid_at": "2022-01-01"}],
        "retrieve_related_entities": [{"entity_id": note, "relationship_types": ["REFERS_TO", "PART_OF"], "direction": "both", "max_hops": 2},
                                      {"entity_id": note, "valid_at": "2022-01-01"}],
        "retrieve_graph_neighborhood": [
            {"node_id": person, "include_events": True, "include_sources": True, "include_observations": True},
            {"node_id": person, "valid_at": "2022-01-01"},
            {"node_id": csv_source, "node_type": "source"},
        ],
        "list_timeline_events": [{"after_date": "2024-01-01", "before_date": "2025-01-01", "limit": 10}, {"entity_id": invoice}, {"source_id": csv_source}],
        "merge_entities": [{"from_entity_id": FRESH_PERSON, "to_entity_id": p.merge_candidates[0], "merge_reason": "dup"}],
        "analyze_schema_candidates": [{"entity_type": "note", "min_frequency": 1, "min_confidence": 0.5}],
        "get_schema_recommendations": [{"entity_type": "note", "status": "all", "source": "all"}],
        "update_schema_incremental": [
            {"entity_type": "note", "fields_to_add": [{"field_name": "mood", "field_type": "string"}], "user_specific": True, "migrate_existing": True}
        ],
        "register_schema": [
            {
                "entity_type": "fuzz_thing",
                "schema_definition": {
                    "fields": {"name": {"type": "string"}, "when": {"type": "date"}},
                    "identity_fields": ["name"],
                    "temporal_fields": [{"field": "when", "event_type": "FuzzHappened"}],
                },
                "reducer_config": {"merge_policies": {"name": {"strategy": "last_write"}}},
                "user_specific": True,
            }
        ],
        "reinterpret": [{"source_id": csv_source, "interpretation_config": {"entity_type": "person"}}],
        "retrieve_file_url": [{"file_path": (p.storage_paths or [""])[0]}, {"file_path": csv_source, "expires_in": 60}],
        "record_interpretation": [
            {"run_id": PENDING_RUN, "entities": [{"entity_type": "invoice", "invoice_number": "INV-9", "invoice_date": "2024-05-01"}]},
            {"run_id": PENDING_RUN, "error": "could not read", "details": {"model": "m"}},
        ],
        "submit_payload": [
            {
                "capability_id": "neotoma:store_invoice:v1",
                "body": {"invoice_number": "INV-2", "vendor_name": "Acme", "invoice_date": "2024-02-01", "amount_due": 3},
                "provenance": prov,
                "client_request_id": "r1",
            }
        ],
        "upload_file": [
            {"file_content": b64(b"remember the milk"), "original_filename": "a.txt"},
            {"file_content": b64(b"kept as is"), "original_filename": "b.bin", "properties": '{"k": 1}'},
        ],
        "read_resource": [{"uri": f"neotoma://entity/{person}"}, {"uri": "neotoma://sources"}, {"uri": "neotoma://timeline/2024-01"}],
    }
    return table.get(action, [{}])


# ---------------------------------------------------------------------------
# Action-specific hostile corpus


def entity(entity_type: str, **fields: Any) -> dict[str, Any]:
    return {"entity_type": entity_type, **fields}


def date_cases(env: FuzzEnv, dates: list[str]) -> Iterable[tuple[str, list[str], str]]:
    """(entity type, its date fields, a bad date) for every type with dates."""
    for t, info in sorted(env.types.items()):
        if info.date_fields:
            for d in dates:
                yield t, info.date_fields, d


def hostile_files() -> list[dict[str, Any]]:
    csv_dates = "\n".join(f"Fuzz{i},{d},{d}" for i, d in enumerate(BAD_DATES))
    wide = ",".join(f"c{i}" for i in range(3000))
    files: list[tuple[bytes, Any]] = [
        (b"Invoice Number,Vendor Name,Amount Due,Invoice Date,Date Due\n" + "\n".join(f"X{i},V,1,{d},{d}" for i, d in enumerate(BAD_DATES)).encode(), "text/csv"),
        (("name,birthday,date\n" + csv_dates).encode(), "text/csv"),
        (b"na\x00me,email\nNul\x00,nul@example.com\n", "text/csv"),
        (("x" * 5000 + ",email\nHuge,huge@example.com\n").encode(), "text/csv"),
        ((wide + "\n" + ",".join("1" for _ in range(3000)) + "\n").encode(), "text/csv"),
        (b"name,email\n\xff\xfe\x80,bad@example.com\n", "text/csv"),
        (b'name,email\n"unterminated,x@example.com\n', "text/csv"),
        (b"\xef\xbb\xbfentity_type,name\n" + b"x" * 300 + b",n\n\x00,m\n", "text/csv"),
        (b"name\temail\nTab\ttab@example.com\n", "text/tab-separated-values"),
        (b"", "text/csv"),
        (b"name,email\n", "text/csv"),
        (json.dumps([{"entity_type": "invoice", "invoice_number": "J1", "invoice_date": d} for d in BAD_DATES]).encode(), "application/json"),
        (b'[{"entity_type": "note", "title": "a\\u0000b", "x\\u0000": 1}]', "application/json"),
        (b'[{"entity_type": "note", "title": 1e400}]', "application/json"),
        (b'{"entity_type": "note", "deep": ' + b"[" * 200 + b"]" * 200 + b"}", "application/json"),
        (b"[" * 5000 + b"]" * 5000, "application/json"),
        (json.dumps([{"entity_type": "note", "x" * 5000: 1, "title": "huge key"}]).encode(), "application/json"),
        (json.dumps([{"entity_type": "x" * 5000, "name": "huge type"}]).encode(), "application/json"),
        (json.dumps([{"entity_type": "note", "title": str(i)} for i in range(1500)]).encode(), "application/json"),
        (b'"just a string"', "application/json"),
        (b"null", "application/json"),
        (b"{", "application/json"),
        (b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nSUMMARY:zero\r\nDTSTART:00000101T000000Z\r\nEND:VEVENT\r\n"
         b"BEGIN:VEVENT\r\nUID:b\r\nSUMMARY:big\r\nDTSTART:99999999T999999Z\r\nDTEND:1000001T000000\r\nEND:VEVENT\r\n"
         b"BEGIN:VTODO\r\nUID:c\r\nSUMMARY:t\r\nDUE:20241301\r\nEND:VTODO\r\n"
         b"BEGIN:VEVENT\r\nUID:d\r\nSUMMARY:tz\r\nDTSTART;TZID=Nowhere/Zone:20240101T000000\r\nEND:VEVENT\r\n"
         b"BEGIN:VEVENT\r\nUID:e\r\nSUMMARY:neg\r\nDTSTART:-0001-01-01\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", "text/calendar"),
        (b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:" + b"s" * 20000 + b"\x00\r\nDTSTART:20240101\r\n", "text/calendar"),
        (b"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Zero\x00Day\r\nBDAY:0000-01-01\r\nEMAIL:" + b"e" * 5000 + b"@x.com\r\nEND:VCARD\r\n"
         b"BEGIN:VCARD\r\nFN:\r\nBDAY:+10000-01-01\r\nTEL:" + b"9" * 5000 + b"\r\nEND:VCARD\r\n", "text/vcard"),
        (b"From: A <a@example.com>\r\nTo: " + b"b" * 5000 + b"@example.com\r\nSubject: \x00nul\r\nDate: Mon, 01 Jan 0000 00:00:00 +0000\r\n\r\nbody\r\n", "message/rfc822"),
        (b"From: a@example.com\r\nDate: Tue, 02 Jul 99999 09:15:00 +9999\r\nSubject: far\r\n\r\n\xff\xfe", "message/rfc822"),
        (b"plain\x00text with a NUL byte and invalid \xc3\x28 utf-8", "text/plain"),
        (b"# " + b"h" * 20000 + b"\n- [ ] " + "\u0000".encode() + b"\n", "text/markdown"),
        (b"%PDF-1.4 garbage", "application/pdf"),
        (b"\x00" * 1000, None),
        (b"anything", "x" * HUGE),
        (b"anything", "text/csv\u0000"),
        (b"anything", "TEXT/CSV; charset=utf-16"),
        (b"anything", ""),
    ]
    out: list[dict[str, Any]] = []
    for content, mime in files:
        out.append({"file_content": b64(content), "mime_type": mime})
    out += [
        {"file_content": "!!!not base64!!!", "mime_type": "text/plain"},
        {"file_content": "YQ", "mime_type": "text/plain"},
        {"file_content": "YW Jj\nZA==", "mime_type": "text/plain"},
        {"file_content": "-_-_", "mime_type": "text/plain"},
        {"file_content": "", "mime_type": "text/plain"},
        {"file_content": b64(b"a,b\n1,2\n"), "mime_type": "text/csv", "original_filename": "x" * HUGE},
        {"file_content": b64(b"a,b\n1,3\n"), "mime_type": "text/csv", "original_filename": "../../x\u0000.csv"},
        {"file_content": b64(b"a,b\n1,4\n"), "mime_type": "text/csv", "interpretation_config": {"entity_type": "x" * HUGE}},
        {"file_content": b64(b"a,b\n1,5\n"), "mime_type": "text/csv", "interpretation_config": {"entity_type": None, "temperature": Raw("1e400")}},
        {"file_content": b64(b"a,b\n1,6\n"), "mime_type": "text/csv", "interpretation_config": nest(31, "object")},
        {"file_content": b64(b"a,b\n1,7\n"), "mime_type": "text/csv", "interpret": False, "entities": []},
        {"file_path": "/etc/passwd"},
        {"file_path": "x" * HUGE, "mime_type": "text/plain"},
    ]
    return out


def corpus(env: FuzzEnv, action: str, canonical: str, schema: dict[str, Any]) -> Iterable[Any]:
    """The fixed hostile inputs of `action`."""
    p = env.pools
    base_list = bases(env, canonical)
    yield from base_list
    yield from [None, [], 1, "x", True, Raw("1e400"), nest(40), nest(200, "object"), {"user_id": USER_B}, {"user_id": "not-a-uuid"}]
    if action != canonical:  # an alias: the same code behind it
        yield from [{**base_list[0], "unknown": None}, {**base_list[0], "x" * HUGE: 1}]
        return
    base = base_list[0]
    props = sorted(set(schema.get("properties", {})) | set(base))
    for prop in props:
        for v in odd_values(env):
            yield {**base, prop: v}
    for extra in ({"unknown": None}, {"x" * HUGE: 1}, {"\u0000": 1}, {"": None}, {"deep": nest(40)}, {"deep": nest(127)}, {"deep": nest(200)}):
        yield {**base, **extra}

    if canonical in ("store", "submit_payload", "record_interpretation"):
        def wrap(entities: list[dict[str, Any]]) -> Any:
            if canonical == "store":
                return {"entities": entities}
            if canonical == "record_interpretation":
                return {"run_id": PENDING_RUN, "entities": entities}
            return None

        if canonical != "submit_payload":
            for t, fields, d in date_cases(env, BAD_DATES if canonical == "store" else SOME_BAD_DATES):
                yield wrap([entity(t, **{f: d for f in fields})])
            for t, info in sorted(env.types.items()):
                for f in info.identity:
                    yield wrap([entity(t, **{f: "x" * HUGE})])
                    yield wrap([entity(t, **{f: "a\u0000b"})])
                    yield wrap([entity(t, **{f: ""})])
                    yield wrap([entity(t, **{f: 123456789012345678901234567890})])
                    yield wrap([entity(t, **{f: None, "unknown_a": None, "unknown_b": None})])
                yield wrap([entity(t, **{f: BIG_NUMBERS[i % len(BIG_NUMBERS)] for i, f in enumerate(sorted(info.fields))})])
                yield wrap([entity(t, **{f: nest(20, "mixed") for f in sorted(info.fields)})])
            for t in ("", "x" * HUGE, "a\u0000b", "Person", " person ", "invoice;drop", 1, None, [], "fuzz_thing"):
                yield wrap([{"entity_type": t, "name": "n"}])
            yield wrap([{"name": "no type"}])
            yield wrap([entity("note", title=str(i)) for i in range(1001)])
            yield wrap([entity("person", name="Same", email="same@example.com")] * 2)
            yield wrap([entity("note", **{f"f{i}": None for i in range(2000)})])
        if canonical == "store":
            for d in BAD_DATES:
                yield {"entities": [entity("note", title="p")], "provenance": {"extracted_at": d, "extractor_version": "fuzz/1"}}
            yield {"entities": [entity("note", title="p")], "provenance": {"extracted_at": "2024-01-01", "extractor_version": "x" * HUGE, "agent_id": "a\u0000", "source_refs": p.source_ids + ["not-a-source", "x" * HUGE]}}
            for v in (-1, 1000, 2**31, 2**63, Raw("1e400"), 1.5):
                yield {"entities": [entity("note", title="prio")], "source_priority": v}
            yield from hostile_files()
        if canonical == "submit_payload":
            for cap in env.capabilities:
                t = cap.split("_", 1)[1].rsplit(":", 1)[0]
                info = env.types.get(t)
                for d in BAD_DATES:
                    body = {f: d for f in (info.date_fields if info else ["date"])}
                    yield {"capability_id": cap, "body": body, "provenance": {"extracted_at": d, "extractor_version": "fuzz/1"}}
            for cap in ("", "neotoma:store_:v1", "neotoma:store_person:v1", "x" * HUGE, "neotoma:store_invoice:v999"):
                yield {"capability_id": cap, "body": {"a": 1}, "provenance": {"extracted_at": "2024-01-01", "extractor_version": "1"}}
    if canonical == "correct":
        for eid, t in sorted(p.entity_types_of.items()):
            info = env.types.get(t)
            for f in (info.date_fields if info else [])[:2]:
                for d in BAD_DATES:
                    yield {"entity_id": eid, "entity_type": t, "field": f, "value": d}
            for f, v in (("x" * HUGE, 1), ("", 1), ("name", "x" * HUGE), ("name", nest(30)), ("name", Raw("1e400")), ("a\u0000", 1)):
                yield {"entity_id": eid, "entity_type": t, "field": f, "value": v}
            yield {"entity_id": eid, "entity_type": "note" if t != "note" else "person", "field": "title", "value": "wrong type"}
    if canonical == "retrieve_entity_snapshot":
        for d in BAD_DATES:
            yield {"entity_id": p.entity_ids[0], "at": d}
    if canonical == "list_timeline_events":
        for d in BAD_DATES:
            yield {"after_date": d}
            yield {"before_date": d, "after_date": d}
        for v in (-1, 0, 1001, 2**63 - 1, -(2**63), Raw("1e400")):
            yield {"limit": v, "offset": v}
    if canonical == "read_resource":
        uris = list(ODD_URIS)
        for eid in p.entity_ids[:3] + p.other_user_entity_ids[:1]:
            uris += [f"neotoma://entity/{eid}", f"neotoma://entity/{eid}/observations", f"neotoma://entity/{eid}/relationships", f"neotoma://entity/{eid.upper()}"]
        for sid in p.source_ids[:2] + p.other_user_source_ids[:1]:
            uris += [f"neotoma://source/{sid}", f"neotoma://source/{sid.upper()}", f"neotoma://source/{sid}/x"]
        uris += [f"neotoma://entities/{t}" for t in sorted(env.types)]
        uris += [f"neotoma://timeline/{y}" for y in ("0001", "9999", "2024-12", "1970-01")]
        for u in uris:
            yield {"uri": u}
    if canonical == "retrieve_file_url":
        for v in (-1, 0, 604801, 2**63 - 1, -(2**63), 2**63, Raw("1e400"), 1.5):
            yield {"file_path": (p.storage_paths or [""])[0], "expires_in": v}
        for fp in ("sources/", "sources/" + "0" * 36, "sources/" + p.source_ids[0].upper(), p.other_user_source_ids[0], "/sources/" + p.source_ids[0]):
            yield {"file_path": fp}
    if canonical == "retrieve_related_entities":
        for v in (-1, 0, 5, 6, 2**63 - 1, Raw("1e400")):
            yield {**base, "max_hops": v}
        yield {**base, "relationship_types": ["NOPE"]}
        yield {**base, "relationship_types": []}
        yield {**base, "relationship_types": ["REFERS_TO"] * 2000}
    if canonical == "create_relationship":
        ids = p.entity_ids
        for a in ids[:4]:
            yield {"relationship_type": "PART_OF", "source_entity_id": a, "target_entity_id": a}
        yield {"relationship_type": "PART_OF", "source_entity_id": ids[0], "target_entity_id": p.other_user_entity_ids[0]}
        yield {**base, "metadata": {"when": "0000-01-01", "amount": Raw("1e400")}}
        yield {**base, "metadata": {"x" * 300: 1, "n": None}}
        yield {**base, "metadata": nest(30, "object")}
    if canonical == "merge_entities":
        c = p.merge_candidates
        yield {"from_entity_id": c[1], "to_entity_id": c[1]}
        yield {"from_entity_id": c[1], "to_entity_id": c[0]}  # back again: a cycle
        yield {"from_entity_id": c[2], "to_entity_id": p.entity_of_type("note")}  # another type
        yield {"from_entity_id": c[3], "to_entity_id": p.other_user_entity_ids[0]}
    if canonical in ("register_schema", "update_schema_incremental"):
        for ver in ("x" * HUGE, "1.0" * 100, "99999999999999999999.0", "-1.0", "1.0.0.0", "", "a.b", "1.0\u0000", "0.0", "1e400"):
            yield {**base, "schema_version": ver}
        for name in ("x" * HUGE, "", "a\u0000b", "entity_type", "__proto__", "a.b", "🙂"):
            if canonical == "register_schema":
                yield {**base, "schema_definition": {"fields": {name: {"type": "string"}}}}
            else:
                yield {**base, "fields_to_add": [{"field_name": name, "field_type": "string"}]}
        for t in ("", "x" * HUGE, "Person", "a\u0000", "person"):
            yield {**base, "entity_type": t}
        if canonical == "register_schema":
            d = base["schema_definition"]
            yield {**base, "schema_definition": {**d, "identity_fields": ["missing"], "temporal_fields": [{"field": "missing", "event_type": "X"}]}}
            yield {**base, "schema_definition": {**d, "identity_fields": [{"composite": []}, {"composite": ["name"] * 100}]}}
            yield {**base, "schema_definition": {**d, "temporal_fields": [{"field": "name", "event_type": "x" * HUGE}]}}
            yield {**base, "schema_definition": {"fields": {f"f{i}": {"type": "string"} for i in range(3000)}}}
            yield {**base, "reducer_config": {"merge_policies": {"missing": {"strategy": "merge_array", "tie_breaker": None}}}}
        else:
            yield {**base, "fields_to_add": []}
            yield {**base, "fields_to_add": [{"field_name": "mood", "field_type": "date"}], "migrate_existing": True}
            yield {**base, "fields_to_add": [{"field_name": f"f{i}", "field_type": "number"} for i in range(2000)]}
    if canonical == "upload_file":
        for props in ("{", "null", "[]", "1e400", "[" * 200 + "]" * 200, '{"a": "\\u0000"}', '{"\\u0000": 1}', '{"' + "k" * 5000 + '": 1}', "\u0000", ""):
            yield {"file_content": b64(b"props"), "properties": props}
        for f in hostile_files()[:12]:
            yield {"file_content": f.get("file_content"), "original_filename": "f.csv"}
    if canonical in ("retrieve_entities", "list_observations", "list_relationships"):
        for v in (-1, 0, 1001, 2**63 - 1, -(2**63), 2**63):
            yield {**base, "limit": v}
            yield {**base, "offset": v}
    if canonical == "analyze_schema_candidates":
        for v in (-1, 0, 2**63 - 1, Raw("1e400"), Raw("-1e400"), 1e308):
            yield {"min_frequency": v}
            yield {"min_confidence": v}
    if canonical == "retrieve_entity_by_identifier":
        for s in ODD_STRINGS:
            yield {"identifier": s}
            yield {"identifier": s, "entity_type": "person"}
    if canonical == "list_entity_types":
        for s in ODD_STRINGS:
            yield {"keyword": s}
    if canonical == "reinterpret":
        for sid in p.source_ids:
            yield {"source_id": sid, "interpretation_config": {"entity_type": "x" * HUGE, "model_id": "a\u0000"}}
            yield {"source_id": sid, "interpretation_config": {"provider": 1, "feature_flags": nest(30)}}
    if canonical == "retrieve_graph_neighborhood":
        for sid in p.source_ids[:3] + p.other_user_source_ids[:1]:
            yield {"node_id": sid, "node_type": "source", "include_events": True, "include_observations": True}
            yield {"node_id": sid, "node_type": "entity"}


# ---------------------------------------------------------------------------
# Hypothesis strategies

ID_KEYS = ("entity_id", "source_id", "node_id", "from_entity_id", "to_entity_id", "source_entity_id", "target_entity_id", "run_id", "file_path", "identifier")
DATE_KEYS = ("at", "after_date", "before_date", "extracted_at")


def json_values(leaves: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
        st.sampled_from(BIG_NUMBERS),
        *( [leaves] if leaves is not None else [] ),
    )
    return st.recursive(
        scalars,
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=4),
        max_leaves=12,
    )


def id_strings(env: FuzzEnv) -> st.SearchStrategy[str]:
    ids = env.pools.ids()
    return st.one_of(
        st.sampled_from(ids),
        st.sampled_from(ids).map(str.upper),
        st.sampled_from(ids).map(lambda s: f" {s} "),
        st.sampled_from(ids).map(lambda s: s[:-1]),
        st.sampled_from(ids).map(lambda s: s + "\u0000"),
        st.sampled_from(ids).map(lambda s: "sources/" + s),
        st.sampled_from([PENDING_RUN, FRESH_PERSON]),
        st.sampled_from(ODD_STRINGS),
        st.builds(lambda: str(uuid.UUID(int=0))),
        st.text(max_size=40),
    )


def strings(env: FuzzEnv) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=30),
        st.sampled_from(ODD_STRINGS),
        st.sampled_from(BAD_DATES + GOOD_DATES),
        st.sampled_from(env.pools.ids()),
        st.sampled_from(sorted(env.types)),
        st.sampled_from([1000, 4096, 9000]).map(lambda n: "x" * n),
    )


def hostile_values(env: FuzzEnv) -> st.SearchStrategy[Any]:
    return st.one_of(
        json_values(),
        strings(env),
        st.sampled_from(odd_values(env)),
        st.sampled_from([40, 127, 128, 129, 200]).flatmap(lambda d: st.sampled_from(["array", "object", "mixed"]).map(lambda k: nest(d, k))),
    )


def entities(env: FuzzEnv) -> st.SearchStrategy[dict[str, Any]]:
    """Entities of real types with typed-ish hostile field values."""

    @st.composite
    def build(draw: Callable[..., Any]) -> dict[str, Any]:
        t = draw(st.sampled_from(sorted(env.types)))
        info = env.types[t]
        out: dict[str, Any] = {"entity_type": draw(st.one_of(st.just(t), st.just(t), st.just(t), strings(env)))}
        names = sorted(info.fields)
        for f in draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True)) if names else []:
            kind = info.fields[f]
            if kind == "date":
                out[f] = draw(st.one_of(st.sampled_from(BAD_DATES), st.sampled_from(GOOD_DATES), hostile_values(env)))
            elif kind == "number":
                out[f] = draw(st.one_of(st.sampled_from(BIG_NUMBERS), st.floats(), st.integers(), hostile_values(env)))
            elif f in info.identity:
                out[f] = draw(st.one_of(strings(env), st.sampled_from(["ann@example.com", "INV-1", "Acme", "Ann"]), hostile_values(env)))
            else:
                out[f] = draw(hostile_values(env))
        for k in draw(st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["x" * 300, "", "\u0000", "entity_type "])), max_size=3)):
            out[k] = draw(st.one_of(st.none(), hostile_values(env)))
        return out

    return build()


def schema_inputs(env: FuzzEnv, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """From the published schema, with real ids, users and dates mixed in."""
    try:
        generated = from_schema(schema)
    except Exception:  # a schema hypothesis-jsonschema cannot read
        generated = st.dictionaries(st.sampled_from(sorted(schema.get("properties", {})) or ["x"]), json_values(), max_size=6)

    @st.composite
    def build(draw: Callable[..., Any]) -> Any:
        value = draw(generated)
        return mix(draw, env, value)

    return build()


def mix(draw: Callable[..., Any], env: FuzzEnv, value: Any, key: str | None = None) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "user_id":
                choice = draw(st.integers(0, 5))
                if choice <= 2:
                    continue  # the session's user
                v = [USER_A, USER_B, v][choice - 3]
            out[k] = mix(draw, env, v, k)
        return out
    if isinstance(value, list):
        return [mix(draw, env, v, key) for v in value]
    if isinstance(value, str) and key is not None and draw(st.integers(0, 3)) > 0:
        if key in ID_KEYS or key.endswith("_id"):
            return draw(id_strings(env))
        if key in DATE_KEYS or "date" in key:
            return draw(st.sampled_from(BAD_DATES + GOOD_DATES))
        if key == "entity_type":
            return draw(st.sampled_from(sorted(env.types)))
        if key == "uri":
            return draw(uris(env))
    return value


def uris(env: FuzzEnv) -> st.SearchStrategy[str]:
    p = env.pools
    return st.one_of(
        st.sampled_from(ODD_URIS),
        st.sampled_from(p.entity_ids + p.other_user_entity_ids).flatmap(
            lambda e: st.sampled_from([f"neotoma://entity/{e}", f"neotoma://entity/{e}/observations", f"neotoma://entity/{e}/relationships"])
        ),
        st.sampled_from(p.source_ids + p.other_user_source_ids).map(lambda s: f"neotoma://source/{s}"),
        st.integers(-99999, 999999).map(lambda y: f"neotoma://timeline/{y:04d}"),
        st.tuples(st.integers(-10, 10001), st.integers(-1, 13)).map(lambda t: f"neotoma://timeline/{t[0]:04d}-{t[1]:02d}"),
        st.text(max_size=30).map(lambda s: "neotoma://" + s),
    )


def hostile_inputs(env: FuzzEnv, action: str, canonical: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    base = st.sampled_from(bases(env, canonical))
    props = sorted(set(schema.get("properties", {})) | {"unknown"})

    @st.composite
    def replace_fields(draw: Callable[..., Any]) -> Any:
        out = dict(draw(base))
        for prop in draw(st.lists(st.sampled_from(props), min_size=1, max_size=3, unique=True)):
            out[prop] = draw(hostile_values(env))
        return out

    @st.composite
    def add_fields(draw: Callable[..., Any]) -> Any:
        out = dict(draw(base))
        extra = draw(st.dictionaries(st.one_of(st.text(max_size=10), st.sampled_from(["x" * 300, "x" * 5000, "\u0000", "", "user_id "])), st.one_of(st.none(), hostile_values(env)), min_size=1, max_size=4))
        out.update(extra)
        return out

    @st.composite
    def drop_fields(draw: Callable[..., Any]) -> Any:
        b = draw(base)
        keep = draw(st.lists(st.sampled_from(sorted(b) or ["x"]), unique=True))
        return {k: b[k] for k in keep if k in b}

    options = [replace_fields(), add_fields(), drop_fields()]
    if canonical in ("store", "record_interpretation"):
        @st.composite
        def with_entities(draw: Callable[..., Any]) -> Any:
            out = dict(draw(base))
            out["entities"] = draw(st.lists(entities(env), min_size=1, max_size=4))
            out.pop("file_content", None)
            return out

        options += [with_entities(), with_entities()]
    if canonical == "store":
        options.append(st.sampled_from(hostile_files()))
    if canonical == "submit_payload":
        @st.composite
        def payload(draw: Callable[..., Any]) -> Any:
            e = draw(entities(env))
            e.pop("entity_type", None)
            return {
                "capability_id": draw(st.one_of(st.sampled_from(env.capabilities), strings(env))),
                "body": e,
                "provenance": {"extracted_at": draw(st.sampled_from(BAD_DATES + GOOD_DATES)), "extractor_version": draw(strings(env))},
            }

        options += [payload(), payload()]
    if canonical == "correct":
        @st.composite
        def correction(draw: Callable[..., Any]) -> Any:
            eid, t = draw(st.sampled_from(sorted(env.pools.entity_types_of.items())))
            info = env.types.get(t)
            field = draw(st.one_of(st.sampled_from(sorted(info.fields) if info and info.fields else ["name"]), strings(env)))
            return {"entity_id": eid, "entity_type": t, "field": field, "value": draw(st.one_of(st.sampled_from(BAD_DATES), hostile_values(env)))}

        options += [correction(), correction()]
    if canonical == "read_resource":
        options += [uris(env).map(lambda u: {"uri": u})] * 3
    return st.one_of(options)


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


# ---------------------------------------------------------------------------
# Tests


def test_fuzz_action(action: str, env: FuzzEnv, session: Session) -> None:
    canonical, schema = env.actions[action]
    start = len(STATS.failures)
    for value in corpus(env, action, canonical, schema):
        session.check(action, to_text(value))

    examples = EXAMPLES if action == canonical else max(3, EXAMPLES // 5)
    strategy = st.one_of(schema_inputs(env, schema), hostile_inputs(env, action, canonical, schema))

    @fuzz_settings(examples)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        value = data.draw(strategy, label="input")
        ascii = data.draw(st.booleans(), label="ascii")
        model = data.draw(st.sampled_from([None, True, False]), label="model_interpreter")
        session.check(action, to_text(value, ascii), model_interpreter=model)

    run()
    assert_clean(since=start)


def literal_texts(env: FuzzEnv) -> list[tuple[str, str]]:
    p = env.pools
    deep = 100_000
    texts: list[tuple[str, str]] = [
        ("store", '{"entities": [{"entity_type": "note", "title": 1e400}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": -1e400}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": 1e-400}]}'),
        ("store", '{"entities": [{"entity_type": "invoice", "invoice_number": "L1", "amount_due": 1' + "0" * 1000 + "}]}"),
        ("store", '{"entities": [{"entity_type": "invoice", "invoice_number": "L2", "amount_due": 1e131071}]}'),
        ("store", '{"entities": [{"entity_type": "invoice", "invoice_number": "L3", "amount_due": 1e-16383}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": "\\ud800"}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": "\\udc00\\ud800"}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": "a\\u0000b"}]}'),
        ("store", '{"entities": [{"entity_type": "note", "t\\u0000": 1}]}'),
        ("store", '{"entities": [], "entities": [{"entity_type": "note", "title": "duplicate key"}]}'),
        ("store", '{"entities": [{"entity_type": "note", "entity_type": "person", "name": "dup type"}]}'),
        ("store", '{"\\u0065ntities": [{"entity_type": "note", "title": "escaped key"}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": NaN}]}'),
        ("store", '{"entities": [{"entity_type": "note", "title": Infinity}]}'),
        ("store", "{" + '"entities": [{"entity_type": "note", "deep": ' + "[" * 3000 + "]" * 3000 + "}]}"),
        ("store", '{"entities": [' + ", ".join('{"entity_type": "note", "title": "t%d"}' % i for i in range(1000)) + "]}"),
        ("retrieve_entities", '{"limit": 1e400}'),
        ("retrieve_entities", '{"limit": 1.0}'),
        ("retrieve_entities", '{"limit": 1e2}'),
        ("retrieve_entities", '{"limit": -0}'),
        ("retrieve_entities", '{"limit": 9223372036854775808}'),
        ("retrieve_entities", '{"offset": 9223372036854775807}'),
        ("retrieve_entities", '{"offset": -9223372036854775809}'),
        ("list_timeline_events", '{"limit": 1e-400}'),
        ("retrieve_file_url", '{"file_path": "%s", "expires_in": 9223372036854775807}' % (p.storage_paths or [""])[0]),
        ("retrieve_file_url", '{"file_path": "%s", "expires_in": 1e400}' % (p.storage_paths or [""])[0]),
        ("retrieve_related_entities", '{"entity_id": "%s", "relationship_types": ["REFERS_TO"], "direction": "both", "max_hops": 1e400}' % p.entity_ids[0]),
        ("analyze_schema_candidates", '{"min_confidence": 1e400}'),
        ("analyze_schema_candidates", '{"min_frequency": 18446744073709551616}'),
        ("read_resource", '{"uri": "neotoma://timeline/0000"}'),
        ("read_resource", '{"uri": "neotoma://entity/\\ud800"}'),
        ("get_version", "[" * deep + "]" * deep),
        ("get_version", '{"a": ' * 5000 + "1" + "}" * 5000),
        ("get_version", ""),
        ("get_version", " "),
        ("get_version", "null"),
        ("get_version", "\ufeff{}"),
        ("get_version", "{} {}"),
        ("get_version", '{"user_id": "%s"}' % USER_A.upper()),
        ("get_version", '{"user_id": "{%s}"}' % USER_A),
        ("list_resources", '{"user_id": "' + USER_A.replace("-", "") + '"}'),
    ]
    texts += [(name, '{"x": 1e400}') for name in sorted(env.actions)]
    texts += [(name, '{"user_id": 1e400}') for name in sorted(env.actions)]
    return texts


def test_literal_texts(env: FuzzEnv, session: Session) -> None:
    start = len(STATS.failures)
    for action, text in literal_texts(env):
        session.check(action, text)
    assert_clean(since=start)


def test_dispatcher_on_refused_texts(env: FuzzEnv, session: Session) -> None:
    """The texts Postgres' ::jsonb cast refused (NUL escapes, lone
    surrogates, nesting past its stack depth…) never reach an action through
    `neotoma.<action>(jsonb)`, but `neotoma._invoke(action, text)` (the
    dispatcher behind every action, executable by neotoma_user) parses text
    itself and promises `{"ok": …}` or `{"error": envelope}` for any text."""
    texts = list(REFUSED)
    for name in sorted(env.actions):
        texts += [(name, '{"x": "a\\u0000b"}'), (name, '{"\\u0000": 1}'), (name, '{"x": "\\ud800"}'), (name, "[" * 100_000)]
    start = len(STATS.failures)
    for action, text in dict.fromkeys(texts):
        session.check_invoke(action, text)
    assert_clean(since=start)


def test_routed_on_hostile_input(env: FuzzEnv) -> None:
    """`neotoma.routed` (a partition's entry for its router,
    docs/scale-out.md), called as a router's role, answers `{"ok": …}` or
    `{"error": envelope}` for any action name, request text, user and
    forwarded settings: never a raised error (the router would pass it on
    raw). What it refuses leaves nothing written (test_verify_after_fuzzing
    checks the fold after)."""
    with psycopg.connect(admin_dsn(), autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'fuzz_router'").fetchone():
            admin.execute("CREATE ROLE fuzz_router LOGIN NOSUPERUSER NOBYPASSRLS IN ROLE neotoma_router")
    dsn = agent_dsn().replace("user=fuzz_agent", "user=fuzz_router")
    texts = [t for t in REFUSED if "\x00" not in t[1] and not t[1].count("{{{{")][:300]
    texts += [(name, '{"x": "\\ud800"}') for name in sorted(env.actions)]
    texts += [(name, '{"entities": [{"entity_type": "note", "title": "routed fuzz"}], "user_id": "%s"}' % USER_B)
              for name in ("store", "bulk", "memory_create_entities")]
    texts += [("no_such_action", "{}"), ("", ""), ("store", "[" * 100_000), ("store", "null"), ("STORE", "{}")]
    forwarded = ["{}", '{"neotoma.token_id": "not a uuid"}', '{"neotoma.query_embedding": "[1e400, \\"x\\"]"}',
                 '{"neotoma.query_embedding_model": "' + "m" * 5000 + '"}', '{"neotoma.user_id": "%s"}' % USER_B,
                 "[1, 2]", "null", '{"neotoma.model_interpreter": "maybe"}']
    failures: list[tuple[str, str, str, str]] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for i, (action, text) in enumerate(dict.fromkeys(texts)):
            settings = forwarded[i % len(forwarded)]
            user = (USER_A, None, "00000000-0000-0000-0000-000000000000")[i % 3]
            STATS.calls += 1
            try:
                answer = conn.execute(
                    "SELECT neotoma.routed(%s, %s, %s::jsonb, %s, %s)::text", (user, i % 2 == 0, settings, action, text)
                ).fetchone()[0]
            except psycopg.Error as e:
                failures.append((action, text[:80], settings[:80], str(e)[:300]))
                continue
            body = json.loads(answer)
            if not (set(body) == {"ok"} or (set(body) == {"error"} and body_problem(body["error"]) is None)):
                failures.append((action, text[:80], settings[:80], answer[:300]))
        # The forwarded settings lasted the call only.
        assert conn.execute("SELECT current_setting('neotoma.user_id', true)").fetchone()[0] in ("", None)
    assert not failures, failures[:10]


def test_graph_scenarios(env: FuzzEnv, session: Session) -> None:
    """Long relationship chains closed into cycles (every type), and a long
    chain of merges, then every kind of call on the merged entities."""
    assert session.conn is not None
    made = _call(
        session.conn,
        "store",
        {"entities": [{"entity_type": "person", "name": f"Chain {i}", "email": f"chain{i}@example.com"} for i in range(130)]},
    )
    ids = [e["entity_id"] for e in made["entities"]]
    start = len(STATS.failures)
    types = ["PART_OF", "DEPENDS_ON", "SUPERSEDES", "CORRECTS", "SETTLES", "REFERS_TO", "DUPLICATE_OF"]
    for n, rt in enumerate(types):
        length = 100 if n == 0 else 30
        for i in range(length):
            session.check("create_relationship", to_text({"relationship_type": rt, "source_entity_id": ids[i], "target_entity_id": ids[i + 1]}))
        session.check("create_relationship", to_text({"relationship_type": rt, "source_entity_id": ids[length], "target_entity_id": ids[0]}))
    for h in (1, 5):
        session.check("retrieve_related_entities", to_text({"entity_id": ids[0], "relationship_types": types, "direction": "both", "max_hops": h}))
    session.check("retrieve_graph_neighborhood", to_text({"node_id": ids[3], "include_events": True, "include_sources": True, "include_observations": True}))
    chain = ids[100:130]
    for a, b in zip(chain, chain[1:]):
        session.check("merge_entities", to_text({"from_entity_id": a, "to_entity_id": b}))
    session.check("merge_entities", to_text({"from_entity_id": chain[-1], "to_entity_id": chain[0]}))
    for e in (chain[0], chain[15], ids[0]):
        for action, args in [
            ("retrieve_entity_snapshot", {"entity_id": e}),
            ("list_observations", {"entity_id": e}),
            ("correct", {"entity_id": e, "entity_type": "person", "field": "name", "value": "x"}),
            ("create_relationship", {"relationship_type": "PART_OF", "source_entity_id": e, "target_entity_id": ids[0]}),
            ("merge_entities", {"from_entity_id": ids[99], "to_entity_id": e}),
            ("read_resource", {"uri": f"neotoma://entity/{e}/relationships"}),
            ("retrieve_related_entities", {"entity_id": e, "relationship_types": types, "direction": "both", "max_hops": 5}),
            ("store", {"entities": [{"entity_type": "person", "name": "Chain 100", "email": "chain100@example.com", "extra": 1}]}),
        ]:
            session.check(action, to_text(args))
    assert_clean(since=start)


def test_read_back_everything(env: FuzzEnv, session: Session) -> None:
    """Whatever the fuzzing stored must read back without a non-envelope answer."""
    assert session.conn is not None
    conn = session.conn
    entities = conn.execute(
        "SELECT id, entity_type FROM neotoma.entities WHERE user_id = %s::uuid ORDER BY id LIMIT 300", (USER_A,)
    ).fetchall()
    sources = conn.execute("SELECT id::text FROM neotoma.sources WHERE user_id = %s::uuid ORDER BY id LIMIT 200", (USER_A,)).fetchall()
    assert entities and sources, "the seeded rows are visible to the agent"
    calls: list[tuple[str, Any]] = [
        ("list_resources", {}),
        ("list_entity_types", {}),
        ("analyze_schema_candidates", {"min_frequency": 1, "min_confidence": 0}),
        ("retrieve_entities", {"limit": 1000, "include_merged": True}),
        ("retrieve_entities", {"limit": 1000, "offset": 1000, "include_merged": True}),
        ("list_timeline_events", {"limit": 1000}),
        ("read_resource", {"uri": "neotoma://sources"}),
    ]
    for eid, t in entities:
        calls += [
            ("retrieve_entity_snapshot", {"entity_id": eid, "at": "2000-01-01T00:00:00Z"}),
            ("read_resource", {"uri": f"neotoma://entity/{eid}"}),
            ("read_resource", {"uri": f"neotoma://entity/{eid}/observations"}),
            ("retrieve_graph_neighborhood", {"node_id": eid, "include_events": True, "include_sources": True, "include_observations": True}),
        ]
    for (sid,) in sources:
        calls += [
            ("read_resource", {"uri": f"neotoma://source/{sid}"}),
            ("retrieve_graph_neighborhood", {"node_id": sid, "node_type": "source", "include_events": True, "include_observations": True}),
            ("retrieve_file_url", {"file_path": sid}),
        ]
    types = sorted({t for _, t in entities})
    for t in types:
        calls += [("read_resource", {"uri": f"neotoma://entities/{t}"}), ("get_schema_recommendations", {"entity_type": t, "status": "all"})]
    years = conn.execute(
        "SELECT DISTINCT extract(year FROM event_timestamp)::int FROM neotoma.timeline_events WHERE user_id = %s::uuid",
        (USER_A,),
    ).fetchall()
    for (y,) in years:
        if y is not None and 1 <= y <= 9999:
            calls.append(("read_resource", {"uri": f"neotoma://timeline/{y:04d}"}))
    listed = conn.execute("SELECT neotoma.list_resources('{}')").fetchone()[0]
    calls += [("read_resource", {"uri": r["uri"]}) for r in listed.get("resources", [])]
    start = len(STATS.failures)
    for action, args in calls:
        session.check(action, to_text(args))
    assert_clean(since=start)


class LimitedSession(Session):
    """A session whose calls come with a token limited to the workspace
    `fuzz` (as the gateway's role sets neotoma.token_id)."""

    def __init__(self, user: str, token: str) -> None:
        self.token = token
        super().__init__(user)

    def connect(self) -> None:
        super().connect()
        assert self.conn is not None
        self.conn.execute("SELECT set_config('neotoma.token_id', %s, false)", (self.token,))


def test_fuzz_with_a_workspace_limited_token(env: FuzzEnv) -> None:
    """Every action's corpus again, through a token limited to one
    workspace the seeded rows are not in: refusals and unfound rows are
    envelopes too."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        token = conn.execute(
            "SELECT (neotoma.create_api_token(%s, %s, 'fuzz agent', 'user', NULL, false, NULL, '{fuzz}'))->>'id'",
            (USER_A, f"fuzz-limited-{uuid.uuid4()}"),
        ).fetchone()[0]
    session = LimitedSession(USER_A, token)
    start = len(STATS.failures)
    try:
        for action, (canonical, schema) in sorted(env.actions.items()):
            for value in corpus(env, action, canonical, schema):
                session.check(action, to_text(value))
    finally:
        session.close()
    assert_clean(since=start)


def test_verify_after_fuzzing(env: FuzzEnv) -> None:
    """Nothing the fuzzing did left the derived state out of step."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        report = conn.execute("SELECT neotoma.verify()").fetchone()[0]
    if report.get("ok") is not True:
        shown = "\n".join(collapse(json.dumps(m), 2500) for m in report.get("mismatches", [])[:3])
        pytest.fail(
            f"neotoma.verify() after fuzzing: ok={report.get('ok')}, "
            f"{report.get('mismatch_count')} mismatch(es); the first ones:\n{shown}",
            pytrace=False,
        )
