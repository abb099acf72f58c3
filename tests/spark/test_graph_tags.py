"""Tag propagation (``graph.tags``) on random column graphs, compared with a brute-force reference.

The reference is plain Python: one breadth-first search per declared column over the carrying
edges, then the documented tie order (fewest hops, smallest origin, smallest via), then the
masking edges out of the carried columns. Graphs have cycles, self-loops and hub columns, and
every edge type and subtype. Incremental runs are compared with the reference after each of a
sequence of random edits of the edges and the declarations.
"""

from __future__ import annotations

import fnmatch
import logging
import random
import shutil
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import SinkSettings, TagSettings, TagSourceSettings
from lineage_udfs.spark.graph.tags import STATE_KEY, TAGS_TABLE, TagSummary, run_tag_stage
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

Ref = tuple[str, str]  # (table, column): the order names tie-break in
Edge = tuple[Ref, Ref, str, str]  # source, target, type, subtype
SUBTYPES = {
    "DIRECT": ["IDENTITY", "TRANSFORMATION", "AGGREGATION", "MASKED"],
    "INDIRECT": ["FILTER", "JOIN", "GROUP_BY", "CONDITIONAL"],
}
RANK = ["IDENTITY", "TRANSFORMATION", "AGGREGATION"]

# --- the brute-force reference ----------------------------------------------------------------


def _bfs(carry: dict[Ref, set[Ref]], start: Ref, max_depth: int) -> dict[Ref, int]:
    seen = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if seen[node] == max_depth:
            continue
        for nxt in carry[node]:
            if nxt not in seen:
                seen[nxt] = seen[node] + 1
                queue.append(nxt)
    return seen


def ref_tags(
    edges: list[Edge],
    declared: dict[tuple[Ref, str], tuple[str, str | None]],
    *,
    carry_aggregation: bool,
    max_depth: int,
) -> set[tuple[Any, ...]]:
    carrying = RANK if carry_aggregation else RANK[:2]
    carry: dict[Ref, set[Ref]] = defaultdict(set)
    mask: dict[Ref, set[Ref]] = defaultdict(set)
    sub: dict[tuple[Ref, Ref], str] = {}
    for s, d, kind, subtype in edges:
        if kind != "DIRECT":
            continue
        if subtype in carrying:
            carry[s].add(d)
            best = sub.get((s, d))
            if best is None or carrying.index(subtype) < carrying.index(best):
                sub[(s, d)] = subtype
        elif subtype == "MASKED":
            mask[s].add(d)
    out: set[tuple[Any, ...]] = set()
    for tag in {t for _, t in declared}:
        seeds = sorted(r for r, t in declared if t == tag)
        dist = {o: _bfs(carry, o, max_depth) for o in seeds}
        reached: dict[Ref, tuple[int, Ref]] = {}
        for node in {n for d in dist.values() for n in d}:
            depth = min(d[node] for d in dist.values() if node in d)
            origin = min(o for o in seeds if dist[o].get(node) == depth)
            reached[node] = (depth, origin)
        for node, (depth, origin) in reached.items():
            rule, value = declared[(origin, tag)]
            if depth == 0:
                out.add((*node, tag, value, "declared", 0, *origin, None, None, None, rule))
                continue
            via = min(u for u in carry if node in carry[u] and dist[origin].get(u) == depth - 1)
            out.add((*node, tag, value, "propagated", depth, *origin, *via, sub[(via, node)], rule))
        masked: dict[Ref, tuple[int, Ref, Ref]] = {}
        for u, (depth, origin) in reached.items():
            if depth >= max_depth:
                continue
            for node in mask[u]:
                if node in reached:
                    continue
                candidate = (depth + 1, origin, u)
                if node not in masked or candidate < masked[node]:
                    masked[node] = candidate
        for node, (depth, origin, via) in masked.items():
            rule, value = declared[(origin, tag)]
            out.add((*node, tag, value, "masked", depth, *origin, *via, "MASKED", rule))
    return out


# --- graphs and tables ------------------------------------------------------------------------


def random_graph(seed: int, n_columns: int = 60, n_edges: int = 160) -> list[Edge]:
    """Columns over a few tables; a quarter of the edges touch one of two hubs; cycles and
    self-loops come from the uniform choice of both ends."""
    rng = random.Random(seed)
    tables = ["a", "b", "s.c", "s.c_x", "d"]
    cols = sorted({(rng.choice(tables), f"c{rng.randrange(n_columns)}") for _ in range(n_columns)})
    hubs = cols[:2]
    edges = []
    for _ in range(n_edges):
        s = rng.choice(hubs) if rng.random() < 0.25 else rng.choice(cols)
        d = rng.choice(hubs) if rng.random() < 0.1 else rng.choice(cols)
        kind = "DIRECT" if rng.random() < 0.75 else "INDIRECT"
        edges.append((s, d, kind, rng.choice(SUBTYPES[kind])))
    return edges


def _tables(spark: SparkSession, base: Path) -> LineageTables:
    return LineageTables(spark, SinkSettings(base_path=str(base)))


def write_edges(spark: SparkSession, tables: LineageTables, edges: list[Edge]) -> None:
    rows = spark.createDataFrame(
        [
            (s[0], s[1], d[0], d[1], kind, sub, "query", f"fp{i % 3}", None, "sys", None, None, 1)
            for i, (s, d, kind, sub) in enumerate(edges)
        ],
        TABLES["column_lineage"].schema,
    )
    tables.ensure("column_lineage")
    _, path = tables.location("column_lineage")
    rows.write.format("delta").mode("overwrite").save(path)


def stored(tables: LineageTables) -> set[tuple[Any, ...]]:
    return {tuple(r) for r in tables.read("column_tags").collect()}


def write_file(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


# --- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_propagation_equals_the_brute_force_reference(
    spark: SparkSession, tmp_path: Path, seed: int
) -> None:
    edges = random_graph(seed)
    cols = sorted({e[0] for e in edges} | {e[1] for e in edges})
    rng = random.Random(seed)
    explicit = rng.sample(cols, 3)
    tags_file = "tags:\n" + "".join(
        f"  - column: {t}.{c}\n    tags: [pii]\n    value: v{i}\n"
        for i, (t, c) in enumerate(explicit)
    )
    tags_file += (
        "  - pattern: 's.c.*'\n    tags: [secret]\n  - column: d.nowhere\n    tags: [pii]\n"
    )
    settings = TagSettings(
        enabled=True,
        file=write_file(tmp_path / "tags.yaml", tags_file),
        max_depth=4 if seed == 2 else 10,
        carry_aggregation=seed != 3,
    )
    declared: dict[tuple[Ref, str], tuple[str, str | None]] = {
        ((t, c), "pii"): (f"column {t}.{c}", f"v{i}") for i, (t, c) in enumerate(explicit)
    }
    declared[(("d", "nowhere"), "pii")] = ("column d.nowhere", None)
    for ref in cols:
        if ref[0] == "s.c":  # 's.c.*' matches s.c's columns, not s.c_x's
            declared[(ref, "secret")] = ("pattern s.c.*", None)
    tables = _tables(spark, tmp_path / "wh")
    write_edges(spark, tables, edges)
    summary = run_tag_stage(tables, settings)
    expected = ref_tags(
        edges,
        declared,
        carry_aggregation=settings.carry_aggregation,
        max_depth=settings.max_depth,
    )
    assert stored(tables) == expected
    statuses = {row[4] for row in expected}
    assert {"declared", "propagated", "masked"} <= statuses  # the graphs exercise every rule
    assert summary.declared + summary.propagated + summary.masked == len(expected)
    assert summary.unknown == 1  # d.nowhere


EMAILS: list[Edge] = [
    (("raw", "email"), ("stg", "email"), "DIRECT", "TRANSFORMATION"),
    (("stg", "email"), ("mart", "email"), "DIRECT", "IDENTITY"),
    (("mart", "email"), ("stg", "email"), "DIRECT", "IDENTITY"),  # a cycle
    (("stg", "email"), ("mart", "email_hash"), "DIRECT", "MASKED"),
    (("stg", "email"), ("mart", "id"), "INDIRECT", "FILTER"),
    (("raw", "phone"), ("stg", "phone"), "DIRECT", "IDENTITY"),
]
EMAIL_ONLY = "tags:\n  - column: raw.email\n    tags: [pii]\n"


@dataclass(frozen=True)
class EmailRuns:
    """Three tag runs over ``EMAILS`` in one warehouse (``base``): raw.email and raw.phone
    declared, the same again, then raw.phone's declaration removed (``EMAIL_ONLY``)."""

    base: Path
    first: set[tuple[Any, ...]]
    first_version: int
    again: TagSummary
    again_version: int
    removed: set[tuple[Any, ...]]


@pytest.fixture(scope="module")
def email_runs(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> EmailRuns:
    """The runs of ``EmailRuns``; the warehouse they leave is also where the tests of untrusted
    stored rows start from (a copy each: the recorded tag state names a version, a table id,
    the declarations' digest and the settings, no path)."""
    root = tmp_path_factory.mktemp("emails")
    tables = _tables(spark, root / "wh")
    write_edges(spark, tables, EMAILS)
    path = root / "tags.yaml"
    write_file(
        path,
        "tags:\n  - column: raw.email\n    tags: [pii]\n  - column: raw.phone\n    tags: [pii]\n",
    )
    settings = TagSettings(enabled=True, file=str(path))
    run_tag_stage(tables, settings)
    first, first_version = stored(tables), tables.latest_version(TAGS_TABLE)
    again = run_tag_stage(tables, settings)
    again_version = tables.latest_version(TAGS_TABLE)
    write_file(path, EMAIL_ONLY)
    run_tag_stage(tables, settings)
    return EmailRuns(root / "wh", first, first_version, again, again_version, stored(tables))


def test_removed_tags_disappear_and_an_unchanged_run_writes_nothing(email_runs: EmailRuns) -> None:
    tagged = {(r[0], r[1], r[4]) for r in email_runs.first}
    assert tagged == {
        ("raw", "email", "declared"),
        ("stg", "email", "propagated"),
        ("mart", "email", "propagated"),
        ("mart", "email_hash", "masked"),
        ("raw", "phone", "declared"),
        ("stg", "phone", "propagated"),
    }
    assert email_runs.again.unchanged
    assert email_runs.again_version == email_runs.first_version
    assert {(r[0], r[1]) for r in email_runs.removed} == {
        ("raw", "email"),
        ("stg", "email"),
        ("mart", "email"),
        ("mart", "email_hash"),
    }


def test_source_exports_and_name_rules(spark: SparkSession, tmp_path: Path) -> None:
    edges: list[Edge] = [
        (("db.raw.users", "ssn"), ("db.mart.users", "ssn"), "DIRECT", "IDENTITY"),
        (("cat.raw.cards", "pan"), ("cat.mart.cards", "pan_last4"), "DIRECT", "TRANSFORMATION"),
        (("db.raw.users", "home_phone"), ("db.mart.users", "phone"), "DIRECT", "IDENTITY"),
    ]
    tables = _tables(spark, tmp_path / "wh")
    write_edges(spark, tables, edges)
    snowflake = write_file(
        tmp_path / "tag_references.csv",
        "TAG_DATABASE,TAG_SCHEMA,TAG_NAME,TAG_VALUE,OBJECT_DATABASE,OBJECT_SCHEMA,OBJECT_NAME,"
        "DOMAIN,COLUMN_NAME,OBJECT_DELETED\n"
        "GOV,TAGS,PII,national_id,DB,RAW,USERS,COLUMN,SSN,\n"
        "GOV,TAGS,PII,gone,DB,RAW,OLD,COLUMN,SSN,2024-01-01\n"
        "GOV,TAGS,OWNER,x,DB,RAW,USERS,TABLE,,\n",
    )
    unity = write_file(
        tmp_path / "column_tags.csv",
        "catalog_name,schema_name,table_name,column_name,tag_name,tag_value\n"
        "cat,raw,cards,pan,payment,card\n",
    )
    settings = TagSettings(
        enabled=True,
        sources=[
            TagSourceSettings(preset="snowflake_tag_references", path=snowflake),
            TagSourceSettings(preset="unity_column_tags", path=unity),
        ],
        name_rules=["phone"],
    )
    run_tag_stage(tables, settings)
    got = {(r[0], r[1], r[2], r[3], r[4], r[11]) for r in stored(tables)}
    assert got == {
        (
            "db.raw.users",
            "ssn",
            "pii",
            "national_id",
            "declared",
            "source snowflake_tag_references",
        ),
        (
            "db.mart.users",
            "ssn",
            "pii",
            "national_id",
            "propagated",
            "source snowflake_tag_references",
        ),
        ("cat.raw.cards", "pan", "payment", "card", "declared", "source unity_column_tags"),
        (
            "cat.mart.cards",
            "pan_last4",
            "payment",
            "card",
            "propagated",
            "source unity_column_tags",
        ),
        ("db.raw.users", "home_phone", "pii", None, "declared", "name rule phone"),
        ("db.mart.users", "phone", "pii", None, "declared", "name rule phone"),
    }


def test_a_bad_tags_file_is_one_line(spark: SparkSession, tmp_path: Path) -> None:
    tables = _tables(spark, tmp_path / "wh")
    write_edges(spark, tables, [(("a", "x"), ("b", "x"), "DIRECT", "IDENTITY")])
    bad = write_file(tmp_path / "tags.yaml", "tags:\n  - column: x\n    tags: [pii]\n")
    with pytest.raises(InputError, match=r"entry 1: column 'x' is not TABLE.COLUMN$"):
        run_tag_stage(tables, TagSettings(enabled=True, file=bad))
    with pytest.raises(InputError, match="cannot read the tags file"):
        run_tag_stage(tables, TagSettings(enabled=True, file=str(tmp_path / "missing.yaml")))


# --- incremental runs -------------------------------------------------------------------------

Declared = dict[tuple[Ref, str], tuple[str, str | None]]


def islands(seed: int, count: int = 3) -> list[Edge]:
    """``count`` small random graphs (``random_graph``'s: hubs, cycles, self-loops) on tables
    of their own, ``i<k>.<table>``: columns of different islands share no edge."""
    out = []
    for k in range(count):
        for s, d, kind, sub in random_graph(seed * 10 + k, n_columns=14, n_edges=30):
            out.append(((f"i{k}.{s[0]}", s[1]), (f"i{k}.{d[0]}", d[1]), kind, sub))
    return out


def declarations(edges: list[Edge], explicit: dict[Ref, str], glob: str) -> tuple[str, Declared]:
    """The tags file declaring ``pii`` (with its value) on the ``explicit`` columns and
    ``secret`` on the columns whose ``table.column`` matches ``glob``, and the declared rows
    the stage must derive from it over ``edges``."""
    text = "tags:\n" + "".join(
        f"  - column: {t}.{c}\n    tags: [pii]\n    value: {v}\n"
        for (t, c), v in sorted(explicit.items())
    )
    text += f"  - pattern: '{glob}'\n    tags: [secret]\n"
    declared: Declared = {
        (ref, "pii"): (f"column {ref[0]}.{ref[1]}", v) for ref, v in explicit.items()
    }
    for ref in {e[0] for e in edges} | {e[1] for e in edges}:
        if fnmatch.fnmatchcase(f"{ref[0]}.{ref[1]}", glob):
            declared[(ref, "secret")] = (f"pattern {glob}", None)
    return text, declared


def _edit_edges(edges: list[Edge], rng: random.Random, *, bridge: bool = False) -> list[Edge]:
    """In one island at random: two edges removed, two added, one edge's subtype changed;
    ``bridge``: one more edge joins islands 0 and 1."""
    edges = list(edges)
    island = f"i{rng.randrange(3)}."
    mine = [i for i, e in enumerate(edges) if e[0][0].startswith(island)]
    for i in sorted(rng.sample(mine, 2), reverse=True):
        edges.pop(i)
    cols = sorted({e[0] for e in edges} | {e[1] for e in edges})
    ours = [c for c in cols if c[0].startswith(island)]
    for _ in range(2):
        kind = rng.choice(["DIRECT", "DIRECT", "INDIRECT"])
        edges.append((rng.choice(ours), rng.choice(ours), kind, rng.choice(SUBTYPES[kind])))
    i = rng.choice([i for i, e in enumerate(edges) if e[0][0].startswith(island)])
    s, d, kind, sub = edges[i]
    edges[i] = (s, d, kind, rng.choice([x for x in SUBTYPES[kind] if x != sub]))
    if bridge:
        s = rng.choice([c for c in cols if c[0].startswith("i0.")])
        d = rng.choice([c for c in cols if c[0].startswith("i1.")])
        edges.append((s, d, "DIRECT", "IDENTITY"))
    return edges


def _edit_declarations(
    explicit: dict[Ref, str], edges: list[Edge], rng: random.Random, step: int
) -> dict[Ref, str]:
    """One declared column removed, one added, one value changed."""
    explicit = dict(explicit)
    explicit.pop(rng.choice(sorted(explicit)))
    cols = sorted({e[0] for e in edges} | {e[1] for e in edges})
    explicit[rng.choice([c for c in cols if c not in explicit])] = f"new{step}"
    explicit[rng.choice(sorted(explicit))] = f"changed{step}"
    return explicit


SEED = 5


@dataclass(frozen=True)
class IslandRun:
    """One tag run of ``island_runs``: its inputs, what it did and what it left."""

    edges: list[Edge]
    declared: Declared
    summary: TagSummary
    rows: set[tuple[Any, ...]]
    """``column_tags`` after the run."""
    version: int
    """``column_tags``' version after the run."""
    commits: list[dict[str, Any]]
    """The run's commits to ``column_tags``, oldest first."""


@pytest.fixture(scope="module")
def island_runs(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, IslandRun]:
    """Tag runs over ``islands(SEED)`` in one warehouse, each after an edit, by name: "start"
    (the first run), "edges" (the edges of one island at random), "rerun" (nothing),
    "declarations" (declarations at random), "both" (both, and an edge joining islands 0 and
    1, under a new glob), "indirect" (one INDIRECT edge more: it carries no tag) and "full"
    (nothing, with ``full_refresh``). The tests of incremental runs against the reference and
    of what an edit of one island writes share them: each run is a whole tag stage."""
    rng = random.Random(SEED)
    edges = islands(SEED)
    cols = sorted({e[0] for e in edges} | {e[1] for e in edges})
    explicit = {ref: f"v{i}" for i, ref in enumerate(rng.sample(cols, 4))}
    globs = ["i0.s.c.*", "i2.*.c1*"]
    root = tmp_path_factory.mktemp("islands")
    path = root / "tags.yaml"
    settings = TagSettings(enabled=True, file=str(path), max_depth=5)
    tables = _tables(spark, root / "wh")
    runs: dict[str, IslandRun] = {}

    def run(name: str, declared: Declared, *, write: bool, full_refresh: bool = False) -> None:
        before = tables.latest_version(TAGS_TABLE) if tables.exists(TAGS_TABLE) else -1
        if write:
            write_edges(spark, tables, edges)
        summary = run_tag_stage(tables, settings, full_refresh=full_refresh)
        version = tables.latest_version(TAGS_TABLE)
        commits = tables.recent_commits(TAGS_TABLE, version - before) if version > before else []
        commits = sorted(commits, key=lambda c: int(c["version"]))
        runs[name] = IslandRun(
            list(edges), dict(declared), summary, stored(tables), version, commits
        )

    # what each step edits: the edges, the declarations, both (joining two islands)
    for step, what in enumerate(["start", "edges", "declarations", "both"]):
        if what in ("edges", "both"):
            edges = _edit_edges(edges, rng, bridge=what == "both")
        if what in ("declarations", "both"):
            explicit = _edit_declarations(explicit, edges, rng, step)
        text, declared = declarations(edges, explicit, globs[step >= 3])  # "both": a new glob
        write_file(path, text)
        run(what, declared, write=what != "declarations")
        if what == "edges":
            run("rerun", declared, write=False)
    edges = [*edges, (("i2.a", "x"), ("i2.b", "y"), "INDIRECT", "FILTER")]
    run("indirect", declared, write=True)
    run("full", declared, write=False, full_refresh=True)
    return runs


def test_incremental_runs_equal_full_recomputes_over_random_edits(
    island_runs: dict[str, IslandRun],
) -> None:
    partial = 0
    for what in ("start", "edges", "declarations", "both"):
        done = island_runs[what]
        summary = done.summary
        assert summary.full_refresh == (what == "start"), what
        expected = ref_tags(done.edges, done.declared, carry_aggregation=True, max_depth=5)
        assert done.rows == expected, what
        every = len(
            {e[0] for e in done.edges} | {e[1] for e in done.edges} | {r for r, _ in done.declared}
        )
        assert 0 < summary.columns_recomputed <= every, what
        partial += summary.columns_recomputed < every
    assert partial >= 2  # most edits leave a component alone
    assert {r[4] for r in expected} == {"declared", "propagated", "masked"}
    # a full recompute of the last inputs (one INDIRECT edge more: no tag edge) writes the same
    full = island_runs["full"]
    assert full.summary.full_refresh and full.rows == expected


def test_an_edit_in_one_component_leaves_the_others_rows_untouched(
    island_runs: dict[str, IslandRun],
) -> None:
    before, edit = island_runs["start"], island_runs["edges"]
    # the edit (_edit_edges, no bridge): edges of one island removed, added, retyped
    (island,) = {
        ref[0].split(".")[0] + "." for e in set(before.edges) ^ set(edit.edges) for ref in e[:2]
    }
    changed = before.rows ^ edit.rows
    assert changed and all(row[0].startswith(island) for row in changed)
    assert {r for r in before.rows if not r[0].startswith(island)} == {
        r for r in edit.rows if not r[0].startswith(island)
    }
    summary = edit.summary
    assert not summary.full_refresh
    columns = {ref for e in before.edges + edit.edges for ref in e[:2] if ref[0].startswith(island)}
    assert 0 < summary.columns_recomputed <= len(columns)
    # two commits: one MERGE that deleted and inserted exactly the differing rows, nothing
    # else, then one that adds no row and records the inputs
    merge, record = edit.commits
    assert (merge["version"], record["version"]) == (before.version + 1, before.version + 2)
    assert merge["operation"] == "MERGE"
    metrics = {k: int(v) for k, v in merge["operationMetrics"].items()}
    deleted = sum(1 for r in changed if r in before.rows)
    assert (metrics["numTargetRowsDeleted"], metrics["numTargetRowsInserted"]) == (
        deleted,
        len(changed) - deleted,
    )
    assert metrics["numTargetRowsUpdated"] == 0
    assert summary.rows_written == len(changed)
    assert int(record["operationMetrics"]["numOutputRows"]) == 0
    assert STATE_KEY in record["userMetadata"]
    rerun = island_runs["rerun"]
    assert rerun.summary.unchanged
    assert rerun.version == edit.version and rerun.rows == edit.rows
    # an INDIRECT edge carries no tag: no row written, only the new inputs recorded
    indirect, last = island_runs["indirect"], island_runs["both"]
    assert indirect.summary.unchanged
    (only,) = indirect.commits
    assert only["version"] == last.version + 1 and only["operation"] != "MERGE"
    assert int(only["operationMetrics"]["numOutputRows"]) == 0
    assert indirect.rows == last.rows


def test_untrusted_stored_rows_are_recomputed_in_full(
    spark: SparkSession,
    tmp_path: Path,
    email_runs: EmailRuns,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the stored rows and recorded state of the last run of email_runs (raw.email declared)
    shutil.copytree(email_runs.base, tmp_path / "wh")
    tables = _tables(spark, tmp_path / "wh")
    path = tmp_path / "tags.yaml"
    write_file(path, EMAIL_ONLY)
    settings = TagSettings(enabled=True, file=str(path))

    def run(settings: TagSettings) -> tuple[bool, list[str]]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="lineage_udfs.spark.graph.tags"):
            summary = run_tag_stage(tables, settings)
        lines = [r.getMessage() for r in caplog.records if "full recompute:" in r.getMessage()]
        return summary.full_refresh, lines

    # each full recompute records the inputs it read, so the next case meets trusted rows
    # (else its line would give another reason). A write to column_tags after the recorded run
    tables.delta_table(TAGS_TABLE).delete("table_name = 'mart'")
    assert run(settings) == (
        True,
        ["tags: full recompute: column_tags was written after the last tag run"],
    )
    assert stored(tables) == email_runs.removed  # mart.email and mart.email_hash are back
    # the edges the last run read are vacuumed away
    write_edges(
        spark, tables, [*EMAILS, (("raw", "phone"), ("mart", "phone"), "DIRECT", "IDENTITY")]
    )
    check = "spark.databricks.delta.retentionDurationCheck.enabled"
    spark.conf.set(check, "false")
    try:
        tables.delta_table("column_lineage").vacuum(0)
    finally:
        spark.conf.unset(check)
    full, lines = run(settings)
    assert full and len(lines) == 1 and "cannot be read back" in lines[0], lines
    assert {(r[0], r[1]) for r in stored(tables)} == {
        ("raw", "email"),
        ("stg", "email"),
        ("mart", "email"),
        ("mart", "email_hash"),
    }
    # other settings (last: a run back to the old ones would recompute for the same reason)
    assert run(TagSettings(enabled=True, file=str(path), max_depth=1)) == (
        True,
        ["tags: full recompute: the tag settings changed"],
    )
    assert {(r[0], r[1]) for r in stored(tables)} == {("raw", "email"), ("stg", "email")}
