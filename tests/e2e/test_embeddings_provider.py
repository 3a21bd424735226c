"""Semantic search by a remote embeddings provider (--embeddings-url): a
stand-in that speaks OpenAI's /v1/embeddings protocol embeds by "concepts"
of its own (so an answer no built-in model would give proves whose vectors
ranked it). The gateway embeds queries before their call and entities in
the background; pending_embeddings says what is not embedded yet; a text
the provider refuses holds back no other; a provider that fails leaves the
built-in model to answer, and the answer says so; a stranger finds nothing;
SQL shows the rows under the model `remote:<model>`."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
import pytest
from conftest import (
    DATABASE,
    THROUGH_ROUTER,
    admin_dsn,
    authed_client,
    create_token,
    error,
    free_port,
    new_user,
    ok,
)

pytestmark = pytest.mark.anyio

# The stand-in's meaning: words of one concept share a dimension. "zebra"
# and "orbital" are one concept here, which no real model would say.
CONCEPTS = [
    {"zebra", "orbital", "orbit", "rocket", "trajectories"},
    {"fortran", "programmer", "code"},
    {"pasta", "spaghetti", "dinner"},
]
DIMS = len(CONCEPTS) + 1


def concept_vector(text: str) -> list[float]:
    v = [0.0] * DIMS
    for w in re.findall(r"[a-z]+", text.lower()):
        hits = [i for i, c in enumerate(CONCEPTS) if w in c]
        for i in hits:
            v[i] += 1.0
        if not hits:
            v[-1] += 0.1
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / norm for x in v]


class Embeddings(BaseHTTPRequestHandler):
    """OpenAI's embeddings endpoint: POST /v1/embeddings {model, input}."""

    requests: list[dict] = []
    down = False  # every request fails (503)
    refuse = "HOLD"  # inputs containing it are refused (400)

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Embeddings.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if Embeddings.down:
            return self.reply(503, {"error": {"message": "overloaded", "type": "server_error"}})
        if self.path != "/v1/embeddings" or self.headers.get("Authorization") != "Bearer ek-test":
            return self.reply(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
        if any(Embeddings.refuse and Embeddings.refuse in t for t in inputs):
            return self.reply(400, {"error": {"message": "input refused", "type": "invalid_request_error"}})
        self.reply(200, {
            "object": "list", "model": body["model"],
            "data": [{"object": "embedding", "index": i, "embedding": concept_vector(t)} for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        })  # fmt: skip

    def reply(self, status: int, answer: dict) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


async def embedded(client: Any, query: str, want_pending: int) -> dict:
    """Searches until pending_embeddings is `want_pending` (the worker runs
    moments after a store); bounded."""
    for _ in range(200):
        found = ok(await client.call_tool("retrieve_entities", {"search": query, "search_mode": "semantic"}))
        if found.get("pending_embeddings") == want_pending and found["search_method"] == "semantic":
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"pending_embeddings never reached {want_pending}: {found}")


async def test_remote_embeddings_provider(start_gateway) -> None:
    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Embeddings.requests.clear()
    Embeddings.down = False
    alice, bob = new_user(), new_user()
    try:
        gw = start_gateway("--embeddings-url", f"http://127.0.0.1:{port}/v1", "--embeddings-model", "concepts-1",
                           "--embeddings-api-key", "ek-test", auth=True)  # fmt: skip
        async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
            ok(await a.call_tool("store", {"entities": [
                {"entity_type": "person", "name": "Katherine Johnson", "notes": "orbital mechanics"},
                {"entity_type": "person", "name": "Dorothy Vaughan", "notes": "FORTRAN programmer"},
                {"entity_type": "note", "title": "Supper", "content": "spaghetti with friends", "created_date": "2026-01-04"}]}))

            # "zebra" means "orbital" to this provider only: its vectors ranked.
            found = await embedded(a, "zebra", 0)
            assert found["embedding_model"] == "remote:concepts-1"
            assert found["entities"][0]["snapshot"]["name"] == "Katherine Johnson", found
            assert found["entities"][0]["semantic_similarity"] > 0.8
            hybrid = ok(await a.call_tool("retrieve_entities", {"search": "zebra"}))
            assert hybrid["search_method"] == "hybrid" and hybrid["embedding_model"] == "remote:concepts-1"
            assert hybrid["entities"][0]["snapshot"]["name"] == "Katherine Johnson"
            sent = [r for r in Embeddings.requests if r["body"]["input"] == ["zebra"]]
            assert sent and sent[0]["auth"] == "Bearer ek-test" and sent[0]["body"]["model"] == "concepts-1"
            # The search resource asks the provider too.
            read = json.loads((await a.read_resource("neotoma://search/zebra")).contents[0].text)
            assert read["entities"][0]["canonical_name"] == found["entities"][0]["canonical_name"]

            # A correction drops the entity's remote embedding; the worker
            # embeds the new text: now "pasta" finds her.
            kj = found["entities"][0]["id"]
            ok(await a.call_tool("correct", {"entity_id": kj, "entity_type": "person", "field": "notes", "value": "pasta dinner"}))
            again = await embedded(a, "pasta", 0)
            assert kj in [e["id"] for e in again["entities"]]
            assert kj not in [e["id"] for e in (await embedded(a, "zebra", 0))["entities"]]

            # A text the provider refuses stays pending and holds back no other.
            ok(await a.call_tool("store", {"entities": [
                {"entity_type": "note", "title": "HOLD this", "content": "a rocket", "created_date": "2026-01-05"},
                {"entity_type": "note", "title": "Launch", "content": "rocket trajectories", "created_date": "2026-01-06"}]}))
            held = await embedded(a, "zebra", 1)
            assert "Launch" in [e["snapshot"].get("title") for e in held["entities"]]
            assert "HOLD this" not in [e["snapshot"].get("title") for e in held["entities"]]

            # The provider down: the built-in model answers, and says why.
            Embeddings.down = True
            fallback = ok(await a.call_tool("retrieve_entities", {"search": "space flight", "search_mode": "semantic"}))
            assert fallback["search_method"] == "semantic" and fallback["embedding_model"] == "potion-base-8M"
            assert "embeddings provider answered 503" in fallback["search_fallback"]
            assert f"127.0.0.1:{port}" not in json.dumps(fallback), "the provider's address is not told"
            Embeddings.down = False

            # A stranger finds nothing, by either model.
            stranger = ok(await b.call_tool("retrieve_entities", {"search": "zebra", "search_mode": "semantic"}))
            assert stranger["total"] == 0 and stranger["search_method"] == "lexical"
            assert "remote:concepts-1" in stranger["search_fallback"]
            assert error(await b.call_tool("retrieve_entities", {"search": "zebra", "search_mode": "telepathic"}))["code"] == "VALIDATION_ERROR"

        # In SQL: alice's rows of both models; the snapshot is the truth (verify clean).
        # (Through a router they are on a partition: tests/reliability/test_scale_out.py.)
        if not THROUGH_ROUTER:
            with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
                models = dict(conn.execute(
                    "SELECT model, count(*) FROM neotoma.entity_embeddings WHERE user_id = %s GROUP BY model", (alice,)).fetchall())
                assert models == {"potion-base-8M": 5, "remote:concepts-1": 4}, models
                assert conn.execute("SELECT (neotoma.verify())->'ok'").fetchone()[0] is True
    finally:
        Embeddings.down = False
        server.shutdown()
