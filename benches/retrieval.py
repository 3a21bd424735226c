"""Benchmark of retrieval quality: does search find the turn of a
conversation that answers a question, asked as a person would ask it?

The corpus (benches/retrieval/conversations.py, deterministic, written for
this project) is a memory of chats between pairs of friends over ten sessions
each: about 6,400 turns in 29 conversations (English, and a few in German,
French, Spanish, Chinese, Japanese and Thai), with 1,416 questions whose
answering turn is known; each question shares a topic word with its turn
(`overlap`), only the speaker's name (`paraphrase`), or asks when
(`temporal`). Each turn is stored as one `note` (content "Speaker: text",
created_date the session's day) for one user, by an ordinary role (a member
of neotoma_user, no superuser, no BYPASSRLS, with neotoma.user_id set), so
every search goes through row level security as an application's would.

Each question is sent verbatim to retrieve_entities {search, search_mode,
limit} in the lexical, semantic and hybrid modes, and ranked in the same run
by two baselines over the same turns' text:

- BM25: the PyPI package bm25s (Lucene's BM25, k1 1.5, b 0.75) over plain
  tokens (lower-cased runs of letters and digits, no stemming, no stop list);
- BM25 + semantic: Reciprocal Rank Fusion (k 60, as hybrid) of BM25's first
  100 and the first 100 of our own semantic mode.

Prints recall@5, recall@10 (the share of questions whose turn is among the
first 5 or 10) and MRR@10 per method, recall@10 per category and language,
and the goals: lexical's recall@10 at least BM25's; hybrid's above both
BM25's and the fusion's.

Embedding models: the server's (the built-in potion-base-8M) unless
NEOTOMA_BENCH_MODELS (or --model, repeatable) names model2vec directories on
the database server to compare; each gets its own database (set as the
database's neotoma.embedding_model by the superuser) and its own semantic,
hybrid and fusion rows. BENCH_SCALE scales the number of conversations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import bm25s
import psycopg
from psycopg import sql
from common import connect_as, fresh_database, goal, ordinary_role, pct, table

sys.path.insert(0, str(Path(__file__).resolve().parent / "retrieval"))
import conversations  # noqa: E402

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ROLE = "neotoma_bench_retrieval"
DATABASE = "neotoma_bench_retrieval"
ENTITY_TYPE = "note"
DEPTH = 100  # the rankings fused by the baseline
RRF_K = 60
MODES = ("lexical", "semantic", "hybrid")


def tokens(text: str) -> list[str]:
    """Plain BM25 tokens: lower-cased runs of letters and digits."""
    return re.findall(r"\w+", text.lower())


def bm25_rankings(turns: list[conversations.Turn], questions: list[conversations.Question]) -> list[list[int]]:
    """Each question's BM25 ranking (turn keys, best first, score > 0)."""
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index([tokens(t.content) for t in turns], show_progress=False)
    docs, scores = retriever.retrieve([tokens(q.text) or [""] for q in questions], k=min(DEPTH, len(turns)),
                                      show_progress=False)
    return [[int(d) for d, s in zip(row, srow) if s > 0] for row, srow in zip(docs, scores)]


def fuse(*rankings: list[int]) -> list[int]:
    """Reciprocal Rank Fusion of rankings (1/(k + place), places from 1)."""
    score: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for place, key in enumerate(ranking, 1):
            score[key] += 1.0 / (RRF_K + place)
    return sorted(score, key=lambda k: (-score[k], k))


def metrics(rankings: list[list[int]], questions: list[conversations.Question]) -> tuple[float, float, float]:
    """recall@5, recall@10 and MRR@10 (a question's recall: the share of its
    evidence turns found)."""
    r5 = r10 = mrr = 0.0
    for ranking, q in zip(rankings, questions):
        evidence = set(q.evidence)
        r5 += len(evidence & set(ranking[:5])) / len(evidence)
        r10 += len(evidence & set(ranking[:10])) / len(evidence)
        mrr += next((1.0 / p for p, k in enumerate(ranking[:10], 1) if k in evidence), 0.0)
    n = max(len(questions), 1)
    return r5 / n, r10 / n, mrr / n


def store(conn: psycopg.Connection, turns: list[conversations.Turn]) -> dict[str, int]:
    """Stores one note per turn; answers each entity id's turn key."""
    with_time = time.perf_counter()
    for s in range(0, len(turns), 500):
        batch = [{"entity_type": ENTITY_TYPE, "content": t.content, "created_date": t.date} for t in turns[s:s + 500]]
        conn.execute("SELECT neotoma.store(%s::jsonb)", (json.dumps({"entities": batch}),))
    took = time.perf_counter() - with_time
    key = {t.content: t.key for t in turns}
    ids = {}
    for entity_id, content in conn.execute(
            "SELECT entity_id, snapshot->>'content' FROM neotoma.entity_snapshots WHERE entity_type = %s",
            (ENTITY_TYPE,)):
        ids[entity_id] = key[content]
    assert len(ids) == len(turns), f"{len(turns)} turns stored as {len(ids)} entities"
    print(f"  stored {len(turns):,} turns as {len(ids):,} {ENTITY_TYPE} entities in {took:.1f}s "
          f"({len(turns) / took:,.0f}/s)")
    return ids


def search(conn: psycopg.Connection, ids: dict[str, int], questions: list[conversations.Question], mode: str,
           limit: int) -> tuple[list[list[int]], list[float], dict[str, int]]:
    """Each question's ranking by `mode` (turn keys), the latencies (ms), and
    how many were answered by another mode (and why)."""
    rankings, times, fallbacks = [], [], defaultdict(int)
    for q in questions:
        t = time.perf_counter()
        answer = conn.execute("SELECT neotoma.retrieve_entities(%s::jsonb)",
                              (json.dumps({"search": q.text, "search_mode": mode, "limit": limit,
                                           "include_snapshots": False}),)).fetchone()[0]
        times.append((time.perf_counter() - t) * 1000)
        if answer.get("search_method") != mode:
            fallbacks[answer.get("search_fallback") or answer.get("search_method") or "?"] += 1
        rankings.append([ids[e["id"]] for e in answer["entities"]])
    return rankings, times, dict(fallbacks)


def category(q: conversations.Question) -> str:
    return f"en {q.category}" if q.language == "en" else q.language


def run_model(model: str | None, number: int, turns, questions, user: str) -> dict:
    """Stores the corpus in a fresh database whose embedding model is `model`
    (None: the built-in one) and runs every mode."""
    dsn = fresh_database(f"{DATABASE}_{number}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        ordinary_role(admin, ROLE)
        if model:
            admin.execute(sql.SQL("ALTER DATABASE {} SET neotoma.embedding_model = {}").format(
                sql.Identifier(f"{DATABASE}_{number}"), sql.Literal(model)))
    with connect_as(dsn, ROLE, user) as conn:
        name = conn.execute("SELECT neotoma._embedding_model()").fetchone()[0]
        if name is None:
            print(f"  embedding model {model or '(built-in)'}: not loaded (see the server log); skipped")
            return {}
        print(f"embedding model {name}" + (f" ({model})" if model else " (built-in)"))
        ids = store(conn, turns)
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("VACUUM (ANALYZE) neotoma.entity_snapshots, neotoma.entity_name_trigrams, "
                          "neotoma.entity_embeddings, neotoma.entities")
        out = {"name": name}
        for mode in MODES if number == 0 else ("semantic", "hybrid"):
            limit = DEPTH if mode == "semantic" else 10
            out[mode] = search(conn, ids, questions, mode, limit)
            fallbacks = out[mode][2]
            if fallbacks:
                for why, n in sorted(fallbacks.items()):
                    print(f"  {mode}: {n} questions answered otherwise: {why}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", default=[],
                        help="a model2vec directory on the database server to compare with the built-in model")
    args = parser.parse_args()
    models = [None] + args.model + [m for m in os.environ.get("NEOTOMA_BENCH_MODELS", "").split(",") if m]

    turns, questions = conversations.build(SCALE)
    languages = sorted({t.language for t in turns})
    print(f"corpus: {len(turns):,} turns in {max(t.conversation for t in turns)} conversations "
          f"({', '.join(languages)}), {len(questions):,} questions; one user, role {ROLE} (neotoma_user, row level "
          f"security); each question sent verbatim")

    started = time.perf_counter()
    bm25 = bm25_rankings(turns, questions)
    bm25_ms = (time.perf_counter() - started) * 1000 / max(len(questions), 1)
    user = str(uuid.uuid4())
    runs = [r for r in (run_model(m, i, turns, questions, user) for i, m in enumerate(models)) if r]
    if not runs or "lexical" not in runs[0]:
        raise SystemExit("no embedding model could be loaded: nothing to compare")

    def row(label: str, rankings: list[list[int]], times: list[float] | None) -> tuple[str, ...]:
        r5, r10, mrr = metrics(rankings, questions)
        return (label, f"{r5:6.1%}", f"{r10:6.1%}", f"{mrr:.3f}", f"{pct(times, 50):7.2f} ms" if times else "")

    rows = [("method", "recall@5", "recall@10", "MRR@10", "p50")]
    rows.append(row("BM25 (bm25s, plain tokens)", bm25, None))
    ranked: dict[str, list[list[int]]] = {"BM25": bm25, "lexical": runs[0]["lexical"][0]}
    rows.append(row("lexical", runs[0]["lexical"][0], runs[0]["lexical"][1]))
    for r in runs:
        suffix = f" ({r['name']})" if len(runs) > 1 else ""
        fusion = [fuse(b, s) for b, s in zip(bm25, r["semantic"][0])]
        ranked[f"BM25+semantic{suffix}"] = fusion
        ranked[f"semantic{suffix}"] = r["semantic"][0]
        ranked[f"hybrid{suffix}"] = r["hybrid"][0]
        rows.append(row(f"BM25 + semantic, RRF{suffix}", fusion, None))
        rows.append(row(f"semantic{suffix}", r["semantic"][0], r["semantic"][1]))
        rows.append(row(f"hybrid{suffix}", r["hybrid"][0], r["hybrid"][1]))
    table(f"retrieval quality ({len(questions):,} questions over {len(turns):,} turns; BM25 "
          f"{bm25_ms:.2f} ms a question in Python)", rows)

    # recall@10 by category (English) and language.
    by: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        by[category(q)].append(i)
    order = ["en overlap", "en paraphrase", "en temporal"] + [c for c in ("de", "fr", "es", "zh", "ja", "th") if c in by]
    methods = list(ranked)
    rows = [("questions", "n") + tuple(methods)]
    for c in order:
        qs = [questions[i] for i in by.get(c, [])]
        if qs:
            rows.append((c, str(len(qs))) + tuple(
                f"{metrics([ranked[m][i] for i in by[c]], qs)[1]:6.1%}" for m in methods))
    table("recall@10 by kind of question (English) and by language", rows)

    r10 = {m: metrics(v, questions)[1] for m, v in ranked.items()}
    first = runs[0]
    fusion = r10["BM25+semantic" + (f" ({first['name']})" if len(runs) > 1 else "")]
    hybrid = r10["hybrid" + (f" ({first['name']})" if len(runs) > 1 else "")]
    table(f"goals (embedding model {first['name']})", [
        ("goal", "figure", ""),
        ("lexical recall@10 >= BM25's", f"{r10['lexical']:.1%} vs {r10['BM25']:.1%}", goal(r10["lexical"] >= r10["BM25"])),
        ("hybrid recall@10 > BM25's", f"{hybrid:.1%} vs {r10['BM25']:.1%}", goal(hybrid > r10["BM25"])),
        ("hybrid recall@10 > BM25 + semantic fusion's", f"{hybrid:.1%} vs {fusion:.1%}", goal(hybrid > fusion)),
    ])


if __name__ == "__main__":
    main()
