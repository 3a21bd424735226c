"""MCP-level comparison over stdio: our gateway (neotoma-mcp) against the
reference MCP memory server from npm (@modelcontextprotocol/server-memory, a
graph memory kept in one JSON-lines file), driven by the same client (the
official Python SDK) with the same workload, in one run.

At 500, 5,000 and 50,000 person entities (times BENCH_SCALE), after growing
both memories to that size with batches of 100 (the same names on both), it
times six phases through each server: store one entity, read one entity, a
100-row listing, a partial-identifier lookup, and a lexical and a hybrid
search of a word 1 % of the persons' notes have (the reference's
search_nodes for both). A third server, a no-op tool
over the same transport (benches/noop_server.py), is the harness's floor.

Prints a table per goal of the issue: ours, the reference or baseline, the
ratio and whether the goal is met. Asserts nothing about time.

The reference's package is installed in benches/node by scripts/bench
(npm ci); Node comes from PATH (NEOTOMA_BENCH_NODE overrides it).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable

import psycopg
from common import gateway_bin, gateway_database, gateway_env, pct, summary, table, timer
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
SIZES = [max(10, int(n * SCALE)) for n in (500, 5_000, 50_000)]
CALLS = max(20, int(200 * SCALE))  # calls per measured phase
BUDGET_S = 60.0  # a phase stops early once it has taken this long (after 20 calls)
BATCH = 100
DATABASE = "neotoma_bench_mcp_stdio"
APP_ROLE = "neotoma_bench_mcp"
HERE = Path(__file__).resolve().parent
REFERENCE_JS = HERE / "node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
PHASES = ["store one entity", "read one entity", "100-row listing", "partial-identifier lookup",
          "lexical search (1 % word)", "hybrid search (1 % word)"]
# A person's notes name one of 100 pastimes: each word is in 1 % of them.
TOPICS = """astronomy baking ballet banjo beekeeping birdwatching bowling calligraphy canoeing carpentry ceramics
chess choir climbing cricket crochet cycling dancing diving drumming embroidery fencing fishing gardening
geocaching golf guitar gymnastics hiking hockey journaling judo juggling kayaking knitting lacrosse magic
marathon meditation mosaics mountaineering origami painting parkour photography pilates podcasting poetry
pottery quilting racquetball robotics rowing rugby running sailing saxophone sculpture sewing skateboarding
skiing snorkeling snowboarding soccer squash stargazing surfing swimming tennis theater triathlon trumpet
ukulele violin volleyball weaving woodworking wrestling yoga zumba archery badminton baseball basketball
boxing camping cooking darts falconry fossils glassblowing handball harp karate lapidary leathercraft
macrame opera rafting sketching""".split()
assert len(set(TOPICS)) == 100, len(set(TOPICS))


def name(i: int) -> str:
    return f"Person {i:06d}"


def email(i: int) -> str:
    return f"person{i:06d}@bench.example"


def partial(i: int) -> str:
    """A substring of entity i's e-mail, of nothing else in either memory."""
    return f"{i:06d}@bench"


def topic(i: int) -> str:
    """The pastime entity i's notes name (1 % of the persons share it)."""
    return TOPICS[i % len(TOPICS)]


def notes(i: int) -> str:
    return f"met at the {topic(i)} club, asked about the weekend"


def ours_entity(i: int) -> dict:
    return {"entity_type": "person", "name": name(i), "email": email(i), "notes": notes(i)}


def reference_entity(i: int) -> dict:
    return {"name": name(i), "entityType": "person", "observations": [f"email {email(i)}", f"notes {notes(i)}"]}


def gateway_params(user: str) -> StdioServerParameters:
    dsn = gateway_database(DATABASE, APP_ROLE)
    with psycopg.connect(dsn, autocommit=True) as conn:
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'neotoma'").fetchone()[0]
    print(f"  ours: neotoma-mcp over stdio, extension neotoma {version} in database {DATABASE}")
    env = gateway_env(dsn)
    binary = gateway_bin()
    limits = [a for action in ("store", "retrieve_entities", "retrieve_entity_by_identifier")
              for a in ("--rate-limit", f"{action}=0")]  # fmt: skip
    return StdioServerParameters(command=binary, args=["--user-id", user, *limits], env=env)


def reference_params(memory_file: Path) -> StdioServerParameters:
    if not REFERENCE_JS.exists():
        raise SystemExit(f"no {REFERENCE_JS}: run (cd benches/node && npm ci) or scripts/bench")
    node = os.environ.get("NEOTOMA_BENCH_NODE") or shutil.which("node") or "/usr/bin/node"
    return StdioServerParameters(command=node, args=[str(REFERENCE_JS)], env={**os.environ, "MEMORY_FILE_PATH": str(memory_file)})


def floor_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(HERE / "noop_server.py")], env=dict(os.environ))


async def call(client: Client, tool: str, args: dict) -> Any:
    """Calls a tool; answers its structured content (fails on a tool error)."""
    r = await client.call_tool(tool, args)
    if r.is_error:
        raise RuntimeError(f"{tool} failed: {r.content[0].text if r.content else r}")
    return r.structured_content


async def timed(fn: Callable[[int], Awaitable[Any]], n: int, warm: bool = True) -> list[float]:
    """Calls fn(i) for i < n (fewer once BUDGET_S has passed, never under 20);
    answers each call's latency in milliseconds. With `warm`, calls fn(0) once
    untimed first (the client lists the tools on its first call of each, to
    validate results against their output schemas)."""
    if warm:
        await fn(0)
    out: list[float] = []
    start = time.perf_counter()
    for i in range(n):
        t = time.perf_counter()
        await fn(i)
        out.append((time.perf_counter() - t) * 1000)
        if len(out) >= 20 and time.perf_counter() - start > BUDGET_S:
            break
    return out


class Memories:
    """Both servers' clients, and the entities stored so far (the same on both)."""

    def __init__(self, ours: Client, reference: Client):
        self.ours, self.reference = ours, reference
        self.ids: list[str] = []  # our entity_id of entity i
        self.grow_s = [0.0, 0.0]

    async def store_ours(self, first: int, n: int) -> None:
        out = await call(self.ours, "store", {"entities": [ours_entity(i) for i in range(first, first + n)]})
        ids = [e["entity_id"] for e in out["entities"]]
        assert len(ids) == n and len(set(ids)) == n, f"store answered {len(ids)} entities for {n}"
        self.ids.extend(ids)

    async def store_reference(self, first: int, n: int) -> None:
        out = await call(self.reference, "create_entities", {"entities": [reference_entity(i) for i in range(first, first + n)]})
        assert len(out["entities"]) == n, f"create_entities created {len(out['entities'])} of {n}"

    async def grow(self, size: int) -> None:
        have = len(self.ids)
        with timer() as t:
            for first in range(have, size, BATCH):
                await self.store_ours(first, min(BATCH, size - first))
        self.grow_s[0] += t()
        with timer() as t:
            for first in range(have, size, BATCH):
                await self.store_reference(first, min(BATCH, size - first))
        self.grow_s[1] += t()
        print(f"  grew to {size:,} entities in batches of {BATCH}: ours {self.grow_s[0]:.1f}s, reference {self.grow_s[1]:.1f}s in all")

    async def phases(self, size: int) -> dict[str, tuple[list[float], list[float]]]:
        """Times each phase through both servers (ours first, then the
        reference, with the same arguments)."""
        rng = random.Random(size)
        picks = [rng.randrange(size) for _ in range(CALLS)]
        out: dict[str, tuple[list[float], list[float]]] = {}

        # (a) store one entity: new names, so that neither server deduplicates.
        first = len(self.ids)

        async def store_ours(i: int) -> None:
            await self.store_ours(first + i, 1)

        ours = await timed(store_ours, CALLS, warm=False)  # growth warmed it up
        stored = len(self.ids) - first

        async def store_reference(i: int) -> None:
            await self.store_reference(first + i, 1)

        out[PHASES[0]] = (ours, await timed(store_reference, stored, warm=False))
        for i in range(len(out[PHASES[0]][1]), stored):  # the rest, untimed, if it ran out of time
            await store_reference(i)

        # (b) read one entity by its id (ours) or its name (reference).
        async def read_ours(i: int) -> None:
            s = await call(self.ours, "retrieve_entity_snapshot", {"entity_id": self.ids[picks[i]]})
            assert s["entity_id"] == self.ids[picks[i]]

        async def read_reference(i: int) -> None:
            s = await call(self.reference, "open_nodes", {"names": [name(picks[i])]})
            assert len(s["entities"]) == 1

        out[PHASES[1]] = (await timed(read_ours, CALLS), await timed(read_reference, CALLS))

        # (c) a 100-row listing; the reference has no paged listing: its
        # search_nodes answers every match.
        async def list_ours(i: int) -> None:
            s = await call(self.ours, "retrieve_entities", {"entity_type": "person", "limit": 100})
            assert len(s["entities"]) == 100 or len(s["entities"]) == len(self.ids)

        rows = [0]

        async def list_reference(i: int) -> None:
            rows[0] = len((await call(self.reference, "search_nodes", {"query": "person"}))["entities"])

        out[PHASES[2]] = (await timed(list_ours, CALLS), await timed(list_reference, CALLS))
        print(f"  note: the reference's listing (search_nodes \"person\") answered all {rows[0]:,} matching entities, "
              f"not a page of 100")  # fmt: skip

        # (d) a partial identifier: a substring of one entity's e-mail.
        async def lookup_ours(i: int) -> None:
            s = await call(self.ours, "retrieve_entity_by_identifier", {"identifier": partial(picks[i])})
            assert s["match_type"] == "partial" and s["total"] == 1, (s["match_type"], s["total"])

        async def lookup_reference(i: int) -> None:
            s = await call(self.reference, "search_nodes", {"query": partial(picks[i])})
            assert len(s["entities"]) == 1

        out[PHASES[3]] = (await timed(lookup_ours, CALLS), await timed(lookup_reference, CALLS))

        # (e, f) a search for a word 1 % of the notes have, a page of 10:
        # lexical, then hybrid (ours); the reference's search_nodes answers
        # every entity whose text contains it.
        def searcher(mode: str) -> Callable[[int], Awaitable[None]]:
            async def search_ours(i: int) -> None:
                s = await call(self.ours, "retrieve_entities", {
                    "search": topic(picks[i]), "search_mode": mode, "limit": 10, "include_snapshots": False})
                assert s["entities"], (mode, topic(picks[i]))

            return search_ours

        async def search_reference(i: int) -> None:
            s = await call(self.reference, "search_nodes", {"query": topic(picks[i])})
            assert s["entities"]

        found = await timed(search_reference, CALLS)
        out[PHASES[4]] = (await timed(searcher("lexical"), CALLS), found)
        out[PHASES[5]] = (await timed(searcher("hybrid"), CALLS), found)
        return out


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def met(ok: bool) -> str:
    return "met" if ok else "not met"


async def run() -> None:
    user = str(uuid.uuid4())
    with tempfile.TemporaryDirectory(prefix="neotoma-bench-memory-") as tmp:
        print(f"sizes {', '.join(f'{s:,}' for s in SIZES)} entities; up to {CALLS} calls per phase "
              f"(fewer after {BUDGET_S:.0f}s, at least 20); client: the official Python MCP SDK over stdio")  # fmt: skip
        print("phases, ours vs reference: store one entity = store vs create_entities; read one entity = "
              "retrieve_entity_snapshot vs open_nodes;\n  100-row listing = retrieve_entities (person, limit 100) vs "
              "search_nodes \"person\"; partial-identifier lookup = retrieve_entity_by_identifier\n  (its exact "
              f"match finds nothing, then a substring match) vs search_nodes, both with e.g. \"{partial(123)}\";\n  lexical and hybrid "
              f"search = retrieve_entities (search, limit 10) vs search_nodes, with e.g. \"{topic(23)}\"")  # fmt: skip
        async with Client(floor_params()) as noop:

            async def floor_call(i: int) -> None:
                await call(noop, "noop", {})

            floor = await timed(floor_call, max(CALLS, 200))
        print(f"  floor (no-op tool, Python SDK server over stdio): {summary(floor)}")

        results: dict[int, dict[str, tuple[list[float], list[float]]]] = {}
        async with Client(gateway_params(user)) as ours, Client(reference_params(Path(tmp) / "memory.jsonl")) as reference:
            memories = Memories(ours, reference)
            for size in SIZES:
                print(f"\n-- {size:,} entities")
                await memories.grow(size)
                results[size] = await memories.phases(size)
                rows = [("phase", "ours (neotoma-mcp)", "reference (server-memory)")]
                rows += [(p, summary(o), summary(r)) for p, (o, r) in results[size].items()]
                table(f"latency at {size:,} entities (then {len(memories.ids):,} after the stores)", rows)

    # Goal 1: every phase faster (p50) through ours than through the reference.
    for size in SIZES:
        rows = [("phase", "ours p50", "reference p50", "ours/reference", "goal: ours faster")]
        for p, (o, r) in results[size].items():
            po, pr = pct(o, 50), pct(r, 50)
            rows.append((p, f"{po:.3f} ms", f"{pr:.3f} ms", ratio(po, pr), met(po < pr)))
        table(f"goal 1 at {size:,} entities: every phase faster (p50) than the reference server", rows)

    # Goal 2: our listing is flat from the middle size to the largest.
    mid, big = SIZES[1], SIZES[2]
    lm, lb = pct(results[mid][PHASES[2]][0], 50), pct(results[big][PHASES[2]][0], 50)
    table(f"goal 2: our 100-row listing p50 at {big:,} within 1.2x of its p50 at {mid:,}",
          [("ours at " + f"{big:,}", f"baseline: ours at {mid:,}", "ratio", "goal: <= 1.2x"),
           (f"{lb:.3f} ms", f"{lm:.3f} ms", ratio(lb, lm), met(lb <= 1.2 * lm))])  # fmt: skip

    # Goal 3: our partial-identifier lookup's p99 within 2x of its own p50.
    rows = [("size", "ours p99", "baseline: ours p50", "ratio", "goal: <= 2x")]
    for size in SIZES:
        lat = results[size][PHASES[3]][0]
        p99, p50 = pct(lat, 99), pct(lat, 50)
        rows.append((f"{size:,}", f"{p99:.3f} ms", f"{p50:.3f} ms", ratio(p99, p50), met(p99 <= 2 * p50)))
    table("goal 3: our partial-identifier lookup p99 within 2x of its p50", rows)

    # Issue 40's goals through MCP at 50,000 entities: lexical and hybrid
    # search p50 <= 30 ms, a read <= 1.5 ms, a store <= 4 ms.
    rows = [("size", "lexical p50", "hybrid p50", "read p50", "store p50", "goal: 30 / 30 / 1.5 / 4 ms")]
    for size in SIZES:
        lex, hyb = pct(results[size][PHASES[4]][0], 50), pct(results[size][PHASES[5]][0], 50)
        read, store = pct(results[size][PHASES[1]][0], 50), pct(results[size][PHASES[0]][0], 50)
        rows.append((f"{size:,}", f"{lex:.3f} ms", f"{hyb:.3f} ms", f"{read:.3f} ms", f"{store:.3f} ms",
                     met(lex <= 30 and hyb <= 30 and read <= 1.5 and store <= 4)))
    table("goal 5: search of a 1 % word, a read and a store through MCP (issue 40)", rows)

    # Goal 4: our per-call cost (the read) within 3x of the harness's floor.
    f50 = pct(floor, 50)
    rows = [("size", "ours p50 (read)", "baseline: no-op p50", "ratio", "goal: <= 3x")]
    for size in SIZES:
        r50 = pct(results[size][PHASES[1]][0], 50)
        rows.append((f"{size:,}", f"{r50:.3f} ms", f"{f50:.3f} ms", ratio(r50, f50), met(r50 <= 3 * f50)))
    table("goal 4: our per-call p50 no more than 3x a no-op tool over the same transport and client", rows)


def main() -> None:
    asyncio.run(run())


if __name__ == "__main__":
    main()
