"""Vendor presets end to end: the real job (SparkSession + Delta) over each preset's fixture.

The fixtures (tests/data/sources, written by its generate.py) hold one workload in each vendor's
export shape; every preset must give the workload's table edges, no edge from a failed
statement, and leave out the rows that are not user SQL.

One extraction reads all eight fixtures, each as a source of its own (one run instead of one
per preset), and each preset's figures are those its own rows left in the warehouse, which are
those a run over its source alone would leave:

- its query rows: the ``queries`` rows of the query ids its reader gives. ``queries`` is keyed
  by query id alone, and the fixtures hold the vendors' own ids, which no two sources share
  (checked before any figure is taken), so no row of one source replaced one of another;
- its edges: the ``table_lineage`` rows of those rows' fingerprints, whatever the rows'
  status. Two sources log statements of the same workload (postgres_pg_stat_statements and
  postgres_csvlog, redshift_query_history and redshift_stl's chunked statement): such a
  statement is one fingerprint (the same text, or texts differing in literals and blanks
  only), parsed once, and its edges count for each source that logged it, as they would in
  a run over that source alone. No fingerprint fails in one source and runs in another, so a
  failed statement has no edge in this run either; an edge from one would be attributed to
  its source and fail the tests below, not hide;
- rows read and rows quarantined at load: counted from its reader (``read_query_logs`` over
  that source alone): the run's read stage counts the union of the sources' readers, and the
  run's totals are checked to be the sums;
- its reconciliation: the ``lineage_reconciliation`` rows of its ``source_name`` and the
  ``"<source> <level>"`` entries of the run summary.

The identity step is off: no test here reads ``dataset_aliases``, and the reconciliation reads
``queries`` and the edge tables only.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession

from lineage_udfs.settings import IdentitySettings, JobSettings, SourceSettings, load_settings
from lineage_udfs.sources.presets import (
    STL_QUERYTEXT_CHUNK,
    SYS_QUERY_TEXT_CHUNK,
    reassemble_chunks,
)
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.readers import LOAD_ERROR, read_query_logs
from lineage_udfs.spark.extract.reconcile import RECONCILIATION_TABLE
from lineage_udfs.spark.extract.stage import extract as run
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "sources"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fixture_generator", DATA / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _workload_edges(prefix: str, default: str, *, merge: bool = True, script: bool = True) -> set:
    edges = {
        ("raw.adressen_ü", "marts.kundenübersicht"),
        ("raw.customers", "marts.customer_orders"),
        ("raw.orders", "marts.customer_orders"),
        ("raw.orders", "marts.daily_revenue"),
        ("raw.orders", "marts.売上_日次"),
    }
    if merge:
        edges.add(("raw.customers", "marts.customer_dim"))
    if script:
        edges.add(("raw.orders", "marts.big_spenders"))
    out = {(f"{prefix}.{s}", f"{prefix}.{t}") for s, t in edges}
    out.add((f"{default}.events", f"{default}.event_summary"))
    return out


CHUNKED = ("dev.raw.order_lines", "dev.marts.chunked_report")

CASES: dict[str, dict[str, Any]] = {
    "snowflake_query_history": {
        "source": {"path": "snowflake_query_history/query_history.csv"},
        "edges": _workload_edges("analytics", "analytics.raw"),
        "rows": 28,
        "failed": 2,
    },
    "bigquery_jobs": {
        "source": {"path": "bigquery_jobs/jobs.jsonl"},
        "edges": _workload_edges("acme-prod", "acme-prod.raw")
        | {("acme-prod.raw.v_active_customers", "acme-prod.marts.customer_dim")},
        "rows": 25,  # the LOAD job, the RUNNING job and the script's two child jobs left out
        "failed": 2,
    },
    "databricks_query_history": {
        "source": {
            "path": "databricks_query_history/query_history.jsonl",
            "defaults": {"default_database": "main"},
            "extra_paths": {
                "table_lineage": "databricks_query_history/table_lineage.jsonl",
                "column_lineage": "databricks_query_history/column_lineage.jsonl",
            },
        },
        "edges": _workload_edges("main", "main.raw"),
        "rows": 27,
        "failed": 2,
    },
    "redshift_query_history": {
        "source": {
            "path": "redshift_query_history/sys_query_history.csv",
            "extra_paths": {"query_text": "redshift_query_history/sys_query_text.csv"},
        },
        "edges": _workload_edges("dev", "dev.public") | {CHUNKED},
        "rows": 26,  # rdsdb's two rows left out
        "failed": 2,
    },
    "redshift_stl": {
        "preset": "redshift_query_history",
        "source": {
            "path": "redshift_stl/stl_query.csv",
            "extra_paths": {"query_text": "redshift_stl/stl_querytext.csv"},
        },
        "edges": {CHUNKED},
        "rows": 2,
        "failed": 1,
    },
    "postgres_pg_stat_statements": {
        "source": {"path": "postgres_pg_stat_statements/pg_stat_statements.csv"},
        "edges": _workload_edges("shop", "shop.public"),
        "rows": 11,  # <insufficient privilege> left out
        "failed": 0,  # pg_stat_statements keeps completed statements only
    },
    "postgres_csvlog": {
        "source": {"path": "postgres_csvlog/postgresql.csv"},
        "edges": _workload_edges("shop", "shop.public"),
        "rows": 25,  # connection, checkpoint and ERROR lines are not statements
        "failed": 2,
    },
    "trino_query_completed": {
        "source": {"path": "trino_query_completed/query_completed.jsonl"},
        "edges": _workload_edges("hive", "hive.raw", merge=False, script=False),
        "rows": 22,
        "failed": 2,
    },
}


_ReconciliationRow = tuple[str | None, ...]
"""(level, source_table, source_column, target_table, target_column, status)."""


@dataclass(frozen=True)
class SourceRead:
    """What a source's reader gives: what ``extract`` counts as that source's rows read and
    rows quarantined at load (its read stage counts the union of the sources' readers)."""

    query_ids: frozenset[str]
    rows: int
    load_errors: int


@dataclass(frozen=True)
class Outcome:
    """One preset's part of the run."""

    rows_read: int
    load_quarantined: int
    edges: set[tuple[str, str]]
    statuses: dict[str, int]
    reconciliation: dict[str, dict[str, int]]
    """The run summary's entries of the source."""
    reconciliation_rows: list[_ReconciliationRow]
    """The ``lineage_reconciliation`` rows of the source."""


@dataclass(frozen=True)
class Extraction:
    """The run over every preset's fixture: its summary, each source's read, and the stored
    rows the presets' figures are taken from (collected once; the tests only filter them)."""

    summary: RunSummary
    reads: dict[str, SourceRead]
    queries: list[tuple[str, str, str]]
    """(query_id, fingerprint, status) of every ``queries`` row."""
    edges: list[tuple[str, str, str]]
    """(fingerprint, source_table, target_table) of every ``table_lineage`` row."""
    reconciliation: list[tuple[str, _ReconciliationRow]]
    """(source_name, row) of every ``lineage_reconciliation`` row."""

    def of(self, name: str) -> Outcome:
        """The preset's figures: its own query rows, their fingerprints' edges, its
        reconciliation rows and summary entries (see the module docstring)."""
        read = self.reads[name]
        rows = [
            (fingerprint, status)
            for query_id, fingerprint, status in self.queries
            if query_id in read.query_ids
        ]
        fingerprints = {fingerprint for fingerprint, _ in rows}
        statuses = Counter(status for _, status in rows)
        return Outcome(
            rows_read=read.rows,
            load_quarantined=read.load_errors,
            edges={(s, t) for fingerprint, s, t in self.edges if fingerprint in fingerprints},
            statuses=dict(statuses),
            reconciliation={
                key: counts
                for key, counts in self.summary.reconciliation.items()
                if _summary_source(key) == name
            },
            reconciliation_rows=[row for source, row in self.reconciliation if source == name],
        )


def _reconciliation_row(row: Row) -> _ReconciliationRow:
    return (
        row.level,
        row.source_table,
        row.source_column,
        row.target_table,
        row.target_column,
        row.status,
    )


def _summary_source(key: str) -> str:
    """The source of a ``RunSummary.reconciliation`` key, ``"<source> <level>"``."""
    return key.rsplit(" ", 1)[0]


def _source(name: str) -> SourceSettings:
    case = CASES[name]
    raw = dict(case["source"])
    raw["path"] = str(DATA / raw["path"])
    raw["extra_paths"] = {k: str(DATA / v) for k, v in raw.get("extra_paths", {}).items()}
    return SourceSettings.model_validate({"name": name, "format": case.get("preset", name), **raw})


def _settings(base_path: Path) -> JobSettings:
    """Every preset's fixture as a source named after its case, into a warehouse at
    ``base_path``; the identity step off (no test here reads what it writes)."""
    base = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    sink = base.sink.model_copy(update={"base_path": str(base_path)})
    return base.model_copy(
        update={
            "sources": [_source(name) for name in sorted(CASES)],
            "sink": sink,
            "identity": IdentitySettings(enabled=False),
        }
    )


def _read(spark: SparkSession, source: SourceSettings, max_field_chars: int) -> SourceRead:
    """The source's rows as the run's read stage reads them (``read_query_logs``, the same
    field cap), the source alone."""
    rows = read_query_logs(spark, [source], max_field_chars).select("query_id", LOAD_ERROR)
    collected = rows.collect()
    return SourceRead(
        query_ids=frozenset(r.query_id for r in collected),
        rows=len(collected),
        load_errors=sum(r[LOAD_ERROR] is not None for r in collected),
    )


@pytest.fixture(scope="module")
def extraction(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Extraction:
    """One ``extract`` over the eight preset sources (one run instead of one per preset, each of
    which took over a minute), and what each source's reader gives.

    Every figure of a preset is attributed through its query ids, so no two sources may log
    the same id: checked here, before any test takes a figure."""
    settings = _settings(tmp_path_factory.mktemp("presets"))
    summary = run(spark, settings)
    reads = {
        source.name: _read(spark, source, settings.limits.max_field_chars)
        for source in settings.sources
    }
    for a, b in combinations(sorted(reads), 2):
        shared = reads[a].query_ids & reads[b].query_ids
        assert not shared, f"{a} and {b} both log query ids {sorted(shared)}: not attributable"
    tables = LineageTables(spark, settings.sink)
    queries = tables.read("queries").select("query_id", "fingerprint", "status").collect()
    edges = tables.read("table_lineage").select("fingerprint", "source_table", "target_table")
    reconciliation = tables.read(RECONCILIATION_TABLE).collect()
    return Extraction(
        summary=summary,
        reads=reads,
        queries=[(r.query_id, r.fingerprint, r.status) for r in queries],
        edges=[(r.fingerprint, r.source_table, r.target_table) for r in edges.collect()],
        reconciliation=[(r.source_name, _reconciliation_row(r)) for r in reconciliation],
    )


@pytest.fixture(scope="module", params=sorted(CASES))
def outcome(request: pytest.FixtureRequest, extraction: Extraction) -> tuple[str, Outcome]:
    """Each preset's part of the one run."""
    name: str = request.param
    return name, extraction.of(name)


def test_the_run_reads_and_stores_the_presets_rows_only(extraction: Extraction) -> None:
    summary = extraction.summary
    assert summary.rows_read == sum(read.rows for read in extraction.reads.values())
    assert summary.rows_read == sum(case["rows"] for case in CASES.values())
    assert summary.load_quarantined == 0
    # every stored query row, edge and reconciliation figure belongs to one preset's figures
    ids = set[str]().union(*(read.query_ids for read in extraction.reads.values()))
    assert {query_id for query_id, _, _ in extraction.queries} <= ids
    assert {(s, t) for _, s, t in extraction.edges} == set[tuple[str, str]]().union(
        *(case["edges"] for case in CASES.values())
    )
    assert {_summary_source(key) for key in summary.reconciliation} <= set(CASES)
    assert {source for source, _ in extraction.reconciliation} <= set(CASES)


def test_preset_gives_the_workload_edges(outcome: tuple[str, Outcome]) -> None:
    name, result = outcome
    assert result.edges == CASES[name]["edges"]
    assert not any("refund" in target for _, target in result.edges)  # failed statements only


def test_preset_rows_and_statuses(outcome: tuple[str, Outcome]) -> None:
    name, result = outcome
    assert result.rows_read == CASES[name]["rows"]
    assert result.load_quarantined == 0
    assert result.statuses.get("failed", 0) == CASES[name]["failed"]
    assert set(result.statuses) <= {"success", "failed"}


def test_reconciliation_lists_every_kind(outcome: tuple[str, Outcome]) -> None:
    name, result = outcome
    if name not in (
        "bigquery_jobs",
        "databricks_query_history",
        "snowflake_query_history",
        "trino_query_completed",
    ):
        assert result.reconciliation == {}
        assert result.reconciliation_rows == []
        return
    found = set(result.reconciliation_rows)
    if name == "bigquery_jobs":
        p = "acme-prod"
        expected = {
            ("table", f"{p}.raw.orders", None, f"{p}.marts.daily_revenue", None, "agree"),
            ("table", f"{p}.raw.events", None, f"{p}.raw.event_summary", None, "agree"),
            # the SQL names a view; BigQuery records the view's base table
            ("table", f"{p}.raw.v_active_customers", None, f"{p}.marts.customer_dim", None,
             "parser_only"),
            ("table", f"{p}.raw.customers", None, f"{p}.marts.customer_dim", None,
             "warehouse_only"),
            # the script's temporary table hides the edge from BigQuery's per-job record
            ("table", f"{p}.raw.orders", None, f"{p}.marts.big_spenders", None, "parser_only"),
        }  # fmt: skip
    elif name == "databricks_query_history":
        m = "main"
        expected = {
            ("table", f"{m}.raw.orders", None, f"{m}.marts.daily_revenue", None, "agree"),
            ("column", f"{m}.raw.orders", "amount", f"{m}.marts.daily_revenue", "revenue",
             "agree"),
            ("table", f"{m}.raw.customers", None, f"{m}.marts.customer_dim", None, "agree"),
            # the lineage tables left the script's statement out
            ("table", f"{m}.raw.orders", None, f"{m}.marts.big_spenders", None, "parser_only"),
        }  # fmt: skip
        assert not any(r[1] is None or "s3://" in str(r[1]) for r in found)  # a path read
    elif name == "snowflake_query_history":
        a = "analytics"
        expected = {
            ("table", f"{a}.raw.orders", None, f"{a}.marts.daily_revenue", None, "agree"),
            ("column", f"{a}.raw.orders", "amount", f"{a}.marts.daily_revenue", "revenue",
             "agree"),
            ("column", f"{a}.raw.customers", "name", f"{a}.marts.customer_orders", "name",
             "agree"),
            ("table", f"{a}.raw.customers", None, f"{a}.marts.customer_dim", None, "agree"),
            ("table", f"{a}.raw.adressen_ü", None, f"{a}.marts.kundenübersicht", None, "agree"),
            ("table", f"{a}.raw.events", None, f"{a}.raw.event_summary", None, "agree"),
        }  # fmt: skip
        # the MERGE target ACCESS_HISTORY lists as read is not its own source (parser default)
        assert not any(r[1] == r[3] for r in found)
        # the script's parent query has no ACCESS_HISTORY row: outside the comparison
        assert not any(r[3] == f"{a}.marts.big_spenders" for r in found)
    else:
        expected = {
            ("table", "hive.raw.orders", None, "hive.marts.daily_revenue", None, "agree"),
            ("column", "hive.raw.orders", "amount", "hive.marts.daily_revenue", "revenue",
             "agree"),
        }  # fmt: skip
    assert expected <= found
    assert not any("refund" in str(r) for r in found)
    total = sum(sum(v.values()) for v in result.reconciliation.values())
    assert total == len(result.reconciliation_rows)


def test_redshift_chunks_are_reassembled_in_sequence_order(spark: SparkSession) -> None:
    generate = _generator()
    sys_text = spark.read.options(header="true", multiLine="true", escape='"').csv(
        str(DATA / "redshift_query_history" / "sys_query_text.csv")
    )
    texts = reassemble_chunks(sys_text, "query_id", SYS_QUERY_TEXT_CHUNK, escaped_newlines=False)
    got: list[Row] = texts.where("query_id = '5900'").collect()
    assert got[0]["_full_text"] == generate._long_select(SYS_QUERY_TEXT_CHUNK)
    stl = spark.read.options(header="true", multiLine="true", escape='"').csv(
        str(DATA / "redshift_stl" / "stl_querytext.csv")
    )
    texts = reassemble_chunks(stl, "query", STL_QUERYTEXT_CHUNK, escaped_newlines=True)
    got = texts.where("query = '6950'").collect()
    expected = generate._long_select(STL_QUERYTEXT_CHUNK, "\\n").replace("\\n", "\n")
    assert got[0]["_full_text"] == expected
    assert "order_lines" in expected and "'x" in expected  # the cuts the fixture is made of
