"""Search through MCP (retrieve_entities with `search`), over HTTP with
tokens: typos forgiven, by meaning (the built-in embedding model), the
mode that answered said, a stranger finds nothing of another user's
memory, bad input refused with the envelope; list_entity_types by
meaning."""

from __future__ import annotations

import base64
import json

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio


async def test_search_through_mcp(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        tools = {t.name: t for t in (await a.list_tools()).tools}
        schema = tools["retrieve_entities"].input_schema["properties"]
        assert "search" in schema and "search_mode" in schema
        ok(await a.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Katherine Johnson", "email": "kj@nasa.example", "notes": "orbital mechanics"},
            {"entity_type": "person", "name": "Dorothy Vaughan", "email": "dv@nasa.example", "notes": "FORTRAN programmer"},
            {"entity_type": "company", "name": "Johnson Controls"}]}))

        found = ok(await a.call_tool("retrieve_entities", {"search": "Katherin Jonson", "search_mode": "lexical"}))
        assert found["search_method"] == "lexical" and "search_fallback" not in found
        names = [e["snapshot"]["name"] for e in found["entities"]]
        assert names[0] == "Katherine Johnson", names
        assert found["entities"][0]["matched_fields"] == ["name"]
        assert 0 < found["entities"][0]["relevance_score"] <= 1
        scores = [e["relevance_score"] for e in found["entities"]]
        assert scores == sorted(scores, reverse=True)

        by_text = ok(await a.call_tool("retrieve_entities", {"search": "fortran", "search_mode": "lexical"}))
        assert [e["snapshot"]["name"] for e in by_text["entities"]] == ["Dorothy Vaughan"]
        # A value since corrected: found through the observations that said it.
        dorothy = by_text["entities"][0]["id"]
        ok(await a.call_tool("correct", {"entity_id": dorothy, "entity_type": "person", "field": "notes", "value": "NACA computer"}))
        gone = ok(await a.call_tool("retrieve_entities", {"search": "fortran", "search_mode": "lexical"}))
        assert gone["total"] == 0
        history = ok(await a.call_tool("retrieve_entities", {"search": "fortran", "search_mode": "lexical", "include_observations": True}))
        assert [(e["id"], e["matched_fields"]) for e in history["entities"]] == [(dorothy, ["observations"])]
        # A stored file's words: the contacts of an e-mail are found by what it says.
        mail = (b"From: Mary Jackson <mj@nasa.example>\r\nTo: Christine Darden <cd@nasa.example>\r\n"
                b"Subject: Wind tunnel\r\n\r\nThe supersonic boom results are in.\r\n")
        ok(await a.call_tool("store", {"file_content": base64.b64encode(mail).decode(), "mime_type": "message/rfc822"}))
        by_file = ok(await a.call_tool("retrieve_entities", {"search": "supersonic", "entity_type": "contact",
                                                              "search_mode": "lexical", "include_observations": True}))
        assert sorted((e["snapshot"]["name"], e["matched_fields"]) for e in by_file["entities"]) == [
            ("Christine Darden", ["files"]), ("Mary Jackson", ["files"])]
        stranger_files = ok(await b.call_tool("retrieve_entities", {"search": "supersonic", "include_observations": True}))
        assert stranger_files["total"] == 0

        # By meaning: no entity has the words "space flight"; auto is hybrid.
        by_meaning = ok(await a.call_tool("retrieve_entities", {"search": "space flight trajectories"}))
        assert by_meaning["search_method"] == "hybrid" and by_meaning["pending_embeddings"] == 0
        assert by_meaning["entities"][0]["snapshot"]["name"] == "Katherine Johnson", by_meaning
        semantic = ok(await a.call_tool("retrieve_entities", {"search": "space flight trajectories", "search_mode": "semantic"}))
        assert semantic["search_method"] == "semantic"
        top = semantic["entities"][0]
        assert top["snapshot"]["name"] == "Katherine Johnson" and top["matched_fields"] == []
        assert top["relevance_score"] == top["semantic_similarity"] > 0.2
        types = ok(await a.call_tool("list_entity_types", {"keyword": "payment"}))
        assert types["search_method"] == "vector_semantic"
        assert {"transaction", "invoice"} <= {t["entity_type"] for t in types["entity_types"]}
        assert all(t["match_type"] == "vector" for t in types["entity_types"])

        # The same search as a resource (the query percent-encoded).
        read = await a.read_resource("neotoma://search/Katherin%20Jonson")
        body = json.loads(read.contents[0].text)
        assert body["type"] == "search" and body["query"] == "Katherin Jonson"
        assert body["entities"][0]["canonical_name"] == found["entities"][0]["canonical_name"]

        stranger = ok(await b.call_tool("retrieve_entities", {"search": "Katherine Johnson"}))
        assert stranger["total"] == 0 and stranger["entities"] == []
        stranger = ok(await b.call_tool("retrieve_entities", {"search": "space flight", "search_mode": "semantic"}))
        assert stranger["total"] == 0 and stranger["search_method"] == "lexical"
        assert "has an embedding" in stranger["search_fallback"]

        for args in ({"search": ""}, {"search": "x" * 10_000}, {"search": "a", "search_mode": "psychic"}):
            assert error(await a.call_tool("retrieve_entities", args))["code"] == "VALIDATION_ERROR", args
