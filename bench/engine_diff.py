"""Differential test of the parser against Spark's own column lineage.

For every Spark-dialect statement it can run (hand-written statements of every kind, the shared
conformance corpus and held-out cases with schemas, the sample Spark log, a stratified slice of
the reference workload), the harness

1. creates the tables the statement reads (and the table it writes into, when that must exist)
   empty, from their schemas, in one local SparkSession (Delta for MERGE / UPDATE / DELETE
   targets, parquet otherwise);
2. runs the statement with the OpenLineage Spark listener and a file transport, and reads the
   events the statement produced: input and output datasets and the ``columnLineage`` facet,
   storage-path names mapped back to table names through the ``symlinks`` facet;
3. parses the same text with the parser core (``LineageParser.parse``, as
   ``lineage_udfs.evaluate`` does), given the same schemas;
4. compares set to set: table sources and targets, DIRECT column edges (with subtype), INDIRECT
   column dependencies (source column, target table, subtype), and reports per statement kind.

Usage::

    make engine-diff                      # the full run; writes bench/results/engine_diff.{md,json}
    .venv/bin/python bench/engine_diff.py --origins handwritten --json out.json

The listener jar comes from Maven Central through ``spark.jars.packages`` (pyspark starts the
JVM). Run from the repository root with the project's virtualenv.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine_statements import (
    Catalog,
    Statement,
    corpus_cases,
    handwritten,
    sample_log,
    workload,
)

from lineage_udfs.core.enums import TransformationType
from lineage_udfs.core.errors import one_line
from lineage_udfs.core.options import ENGINE_CONVENTIONS as PRESETS
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

OPENLINEAGE_SPARK = "io.openlineage:openlineage-spark_2.13:1.53.0"
DELTA_SPARK = "io.delta:delta-spark_4.1_2.13:4.4.0"
WRITE_KINDS = ("CTAS", "INSERT", "INSERT_OVERWRITE", "MERGE", "UPDATE", "DELETE", "SCRIPT")
DML_KINDS = ("MERGE", "UPDATE", "DELETE")
_BAD_COLUMN = re.compile(r"[ ,;{}()\n\t=]")

# ---------------------------------------------------------------------------- lineage model

DirectEdge = tuple[str, str, str, str]  # source table, source column, target table, column
IndirectEdge = tuple[str, str, str, str]  # source table, source column, target table, subtype


@dataclass
class Lineage:
    """What one side (engine or parser) says about a statement, names normalised."""

    sources: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    direct: dict[DirectEdge, set[str]] = field(default_factory=dict)
    indirect: set[IndirectEdge] = field(default_factory=set)

    def add_direct(self, edge: DirectEdge, subtype: str) -> None:
        self.direct.setdefault(edge, set()).add(subtype)

    def to_json(self) -> dict[str, Any]:
        return {
            "sources": sorted(self.sources),
            "targets": sorted(self.targets),
            "direct": sorted([*e, "/".join(sorted(s))] for e, s in self.direct.items()),
            "indirect": sorted(list(e) for e in self.indirect),
        }


def qualify(name: str, default_db: str) -> str:
    """``t`` -> ``default_db.t``; ``spark_catalog.db.t`` -> ``db.t``; lowercased, unquoted."""
    parts = [p.strip("`\"'") for p in name.lower().split(".") if p]
    if len(parts) == 1:
        parts = [default_db.lower(), parts[0]]
    if len(parts) == 3 and parts[0] == "spark_catalog":
        parts = parts[1:]
    return ".".join(parts)


# ---------------------------------------------------------------------------- the parser side


# The parser options under which its conventions are the engine's (the core's
# ``openlineage_spark`` preset, ``parser.conventions`` in the settings): openlineage-spark lists a
# MERGE target among the inputs (its rewrite reads the target's files) and the target columns a
# MERGE leaves unchanged as their own sources, and names no dataset for DROP TABLE. Each is a
# documented parser option (docs/configuration.md); the defaults stay OpenLineage's
# column-lineage conventions.
ENGINE_CONVENTIONS: dict[str, bool] = dict(PRESETS["openlineage_spark"])
# the options of the engine-conventions figures in a --json file that does not record them
# (written before merge_unchanged_columns_as_identity joined the preset)
UNRECORDED_CONVENTIONS: dict[str, bool] = {
    "update_target_as_source": True,
    "destructive_statements_as_targets": False,
}


def parser_lineage(
    stmt: Statement, catalog: Catalog, options: ParserOptions | None = None
) -> tuple[Lineage, str, str | None]:
    """Parse ``stmt.sql`` with the parser core; returns (lineage, statement type, error)."""
    parser = LineageParser(options=options, catalog={t: dict(c) for t, c in catalog.items()})
    result = parser.parse(stmt.sql, dialect=stmt.dialect, default_schema=stmt.default_db)
    out = Lineage()
    db = stmt.default_db
    out.sources = {qualify(s, db) for s in result.sources}
    out.targets = {qualify(t, db) for t in result.targets}
    for e in result.column_edges:
        src, tgt = qualify(e.source_table, db), qualify(e.target_table, db)
        if e.transformation_type == TransformationType.DIRECT:
            sub = str(e.transformation_subtype)
            # the engine has no MASKED subtype: it flags masking on TRANSFORMATION/AGGREGATION
            out.add_direct((src, e.source_column.lower(), tgt, e.target_column.lower()), sub)
        else:
            out.indirect.add((src, e.source_column.lower(), tgt, str(e.transformation_subtype)))
    error = result.failure.message if result.failure is not None else None
    return out, str(result.statement_type), error


# ---------------------------------------------------------------------------- statement shape


def split_statements(sql: str, dialect: str = "spark") -> list[str]:
    """Split a script on top-level semicolons with sqlglot's tokenizer (strings, comments and
    quoted names are respected); empty pieces are dropped."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return [s for s in (p.strip() for p in sql.split(";")) if s]
    pieces, start = [], 0
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            pieces.append(sql[start : tok.start])
            start = tok.end + 1
    pieces.append(sql[start:])
    return [p.strip() for p in pieces if _has_code(p, dialect)]


def _has_code(piece: str, dialect: str) -> bool:
    try:
        return bool(sqlglot.Dialect.get_or_raise(dialect).tokenize(piece))
    except SqlglotError:
        return bool(piece.strip())


def _parse(sql: str, dialect: str) -> exp.Expression | None:
    for d in dict.fromkeys((dialect, "spark", "databricks")):
        try:
            tree = sqlglot.parse_one(sql, read=d)
        except SqlglotError:
            continue
        if tree is not None and not isinstance(tree, exp.Command):
            return tree
    return None


def kind_of(sql: str, dialect: str = "spark") -> str:
    """The statement kind used to group figures, from sqlglot's tree of the text (not from the
    parser under test): CTAS, INSERT, INSERT_OVERWRITE, MERGE, UPDATE, DELETE, CREATE_VIEW,
    CACHE, SELECT, SCRIPT (several statements) or OTHER."""
    pieces = split_statements(sql, dialect)
    if len(pieces) > 1:
        return "SCRIPT"
    if re.match(r"\s*(--[^\n]*\n\s*|/\*.*?\*/\s*)*cache\b", sql, re.I | re.S):
        return "CACHE"
    tree = _parse(sql, dialect)
    if tree is None:
        return "OTHER"
    if isinstance(tree, exp.Create):
        kind = str(tree.args.get("kind") or "").upper()
        if kind == "VIEW":
            return "CREATE_VIEW"
        if kind == "TABLE" and tree.expression is not None:
            return "CTAS"
        return "OTHER"
    if isinstance(tree, exp.Insert):
        return "INSERT_OVERWRITE" if tree.args.get("overwrite") else "INSERT"
    for cls, name in ((exp.Merge, "MERGE"), (exp.Update, "UPDATE"), (exp.Delete, "DELETE")):
        if isinstance(tree, cls):
            return name
    if isinstance(tree, exp.Query):
        return "SELECT"
    return "OTHER"


@dataclass
class Shape:
    """Tables one statement reads, the table it writes, and the names it defines itself."""

    reads: list[str] = field(default_factory=list)
    target: str | None = None
    creates: bool = False  # CTAS / CREATE VIEW / CACHE TABLE AS: the target must not exist
    temp: bool = False  # the created name is a temp view / cached table
    dml: bool = False  # MERGE / UPDATE / DELETE: the target must be Delta
    tree: exp.Expression | None = None


def _table_name(t: exp.Table) -> str:
    return ".".join(p for p in (t.args.get("db") and t.db, t.name) if p)


def shape_of(sql: str, dialect: str, defined: set[str]) -> Shape:
    """Read the statement's table names with sqlglot (only to prepare the catalog)."""
    shape = Shape()
    cache = re.match(
        r"\s*cache\s+(?:lazy\s+)?table\s+([\w.`]+)(?:\s+(?:as\s+)?(.*))?$", sql, re.I | re.S
    )
    if cache:
        shape.target, shape.creates, shape.temp = cache.group(1).strip("`"), True, True
        sql = cache.group(2) or ""
        if not sql.strip():
            shape.reads.append(shape.target)
            return shape
    tree = _parse(sql, dialect)
    shape.tree = tree
    if tree is None:
        return shape
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    target_node: exp.Table | None = None
    if isinstance(tree, exp.Create):
        node = tree.this.find(exp.Table) if tree.this is not None else None
        if isinstance(node, exp.Table):
            target_node = node
            shape.creates = True
            props = tree.args.get("properties")
            shape.temp = bool(
                props and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)
            )
    elif isinstance(tree, exp.Insert):
        node = tree.this.find(exp.Table) if tree.this is not None else None
        target_node = node if isinstance(node, exp.Table) else None
    elif isinstance(tree, (exp.Merge, exp.Update, exp.Delete)):
        node = tree.this if isinstance(tree.this, exp.Table) else tree.this.find(exp.Table)
        target_node = node if isinstance(node, exp.Table) else None
        shape.dml = True
    if target_node is not None and shape.target is None:
        shape.target = _table_name(target_node)
    for t in tree.find_all(exp.Table):
        if t is target_node or not t.name:
            continue
        name = _table_name(t)
        if name.lower() in ctes or name.lower() in defined:
            continue
        if name not in shape.reads:
            shape.reads.append(name)
    return shape


# ---------------------------------------------------------------------------- the engine side


@dataclass
class EngineRun:
    ok: bool
    lineage: Lineage
    events: int = 0
    facet: bool = False  # at least one output carried a columnLineage facet
    error: str | None = None
    catalog: Catalog = field(default_factory=dict)  # schemas of the tables as created


class Engine:
    """One local SparkSession with Delta and the OpenLineage listener writing to a file."""

    def __init__(self, workdir: Path, cores: int = 2) -> None:
        from pyspark.sql import SparkSession

        self.workdir = workdir
        self.events_path = workdir / "events.jsonl"
        warehouse = workdir / "warehouse"
        self.warehouse = warehouse.resolve()
        builder = (
            SparkSession.builder.master(f"local[{cores}]")
            .appName("engine_diff")
            .config("spark.jars.packages", f"{DELTA_SPARK},{OPENLINEAGE_SPARK}")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config(
                "spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            )
            .config("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener")
            .config("spark.openlineage.transport.type", "file")
            .config("spark.openlineage.transport.location", str(self.events_path))
            .config("spark.openlineage.namespace", "engine_diff")
            .config("spark.sql.warehouse.dir", str(warehouse))
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.default.parallelism", "1")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.adaptive.enabled", os.environ.get("ENGINE_DIFF_AQE", "false"))
            # empty tables: only the analysed plan matters; be lenient where types differ
            .config("spark.sql.storeAssignmentPolicy", "LEGACY")
            .config("spark.sql.ansi.enabled", "false")
            .config("spark.databricks.delta.snapshotPartitions", "1")
        )
        # Java 17 module opening the listener's extension loader asks for (else one warning)
        builder = builder.config(
            "spark.driver.extraJavaOptions",
            f"-Dderby.system.home={workdir} --add-opens=java.base/java.security=ALL-UNNAMED",
        )
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        self.versions = {
            "spark": self.spark.version,
            "openlineage-spark": OPENLINEAGE_SPARK.rsplit(":", 1)[1],
            "delta-spark": DELTA_SPARK.rsplit(":", 1)[1],
        }
        self._bus = self.spark.sparkContext._jsc.sc().listenerBus()
        self.tables: dict[str, tuple[dict[str, str], bool]] = {}  # name -> (schema, delta)
        self.databases: set[str] = {"default"}

    def stop(self) -> None:
        self.spark.stop()

    # -- catalog preparation

    def _sql(self, text: str) -> Any:
        return self.spark.sql(text).collect()

    def _ensure_db(self, db: str) -> None:
        if db not in self.databases:
            self._sql(f"CREATE DATABASE IF NOT EXISTS `{db}`")
            self.databases.add(db)

    def _exists(self, name: str) -> bool:
        return bool(self.spark.catalog.tableExists(name))

    def drop(self, name: str) -> None:
        if not self._exists(name):
            self.tables.pop(name, None)
            return
        with contextlib.suppress(Exception):  # a table, not a view: DROP VIEW refuses
            self._sql(f"DROP VIEW IF EXISTS {name}")
        if self._exists(name):
            self._sql(f"DROP TABLE IF EXISTS {name}")
        self.tables.pop(name, None)

    def create(
        self, name: str, schema: dict[str, str], delta: bool, partitions: Sequence[str] = ()
    ) -> None:
        known = self.tables.get(name)
        same = known is not None and known[0] == schema and (known[1] or not delta)
        if same and self._exists(name):
            return
        self.drop(name)
        self._ensure_db(name.split(".")[0])
        cols = ", ".join(f"`{c}` {_spark_type(t)}" for c, t in schema.items())
        parts = [p for p in partitions if p in schema]
        by = f" PARTITIONED BY ({', '.join(f'`{p}`' for p in parts)})" if parts else ""
        self._sql(f"CREATE TABLE {name} ({cols}) USING {'delta' if delta else 'parquet'}{by}")
        self.tables[name] = (dict(schema), delta)

    def schema_of_query(self, sql: str) -> dict[str, str]:
        df = self.spark.sql(sql)
        out: dict[str, str] = {}
        for i, f in enumerate(df.schema.fields):
            name = f.name.lower()
            if _BAD_COLUMN.search(name) or name in out:
                name = f"c{i}"
            out[name] = f.dataType.simpleString()
        return out

    # -- events

    def _offset(self) -> int:
        return self.events_path.stat().st_size if self.events_path.exists() else 0

    def _drain(self) -> None:
        self._bus.waitUntilEmpty()

    def _settle(self, quiet: float = 0.2, limit: float = 10.0) -> None:
        """Drain the listener bus, then wait until the events file has not grown for ``quiet``
        seconds (at most ``limit``): the listener writes from its own thread, so on a loaded
        machine a statement's events can land after the bus is empty, and be counted as the
        next statement's."""
        deadline = time.monotonic() + limit
        self._drain()
        size = self._offset()
        while time.monotonic() < deadline:
            time.sleep(quiet)
            self._drain()
            now = self._offset()
            if now == size:
                return
            size = now

    def _events_since(self, offset: int) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        with self.events_path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read().decode("utf-8", "replace")
        out = []
        for line in data.splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    # -- one statement

    def run(self, stmt: Statement) -> EngineRun:
        """Prepare the catalog, run every piece of ``stmt.sql``, collect its events."""
        try:
            self._ensure_db(stmt.default_db)
            self._sql(f"USE `{stmt.default_db}`")
            catalog = self._prepare(stmt)
        except Exception as err:
            return EngineRun(False, Lineage(), error=f"setup: {one_line(err)}")
        self._settle()
        offset = self._offset()
        try:
            for piece in split_statements(stmt.sql, stmt.dialect):
                self.spark.sql(piece).collect()
        except Exception as err:
            self._drain()
            return EngineRun(False, Lineage(), error=one_line(err), catalog=catalog)
        self._settle()
        events = self._events_since(offset)
        lineage, facet = engine_lineage(events, stmt.default_db, str(self.warehouse))
        return EngineRun(True, lineage, events=len(events), facet=facet, catalog=catalog)

    def _execute(self, piece: str) -> None:
        """Run one statement. Text that Spark's default parser rejects at a double-quoted name
        (``AS "_col_0"``, as ANSI SQL writes identifiers) is run once more in Spark's ANSI mode
        with double-quoted identifiers; the text itself is never rewritten."""
        try:
            self.spark.sql(piece).collect()
        except Exception as err:
            if "PARSE_SYNTAX_ERROR" not in str(err) or '"' not in piece:
                raise
            conf = self.spark.conf
            conf.set("spark.sql.ansi.enabled", "true")
            conf.set("spark.sql.ansi.doubleQuotedIdentifiers", "true")
            try:
                self.spark.sql(piece).collect()
            finally:
                conf.set("spark.sql.ansi.doubleQuotedIdentifiers", "false")
                conf.set("spark.sql.ansi.enabled", "false")

    def _prepare(self, stmt: Statement) -> Catalog:
        """Create what the statement reads and writes into; return the schemas as created."""
        schemas = {qualify(t, stmt.default_db): c for t, c in stmt.schemas.items()}
        created: Catalog = {}
        defined: set[str] = set()
        for piece in split_statements(stmt.sql, stmt.dialect):
            shape = shape_of(piece, stmt.dialect, defined)
            for name in shape.reads:
                full = qualify(name, stmt.default_db)
                if full in schemas and full not in created:
                    self.create(full, schemas[full], full in stmt.delta)
                    created[full] = schemas[full]
                elif full not in created and not self._exists(full) and "." in name:
                    raise LookupError(f"no schema for {full}")
            if shape.target is None:
                continue
            full = qualify(shape.target, stmt.default_db)
            if not shape.temp:
                self._ensure_db(full.split(".")[0])
            if shape.creates:
                if shape.temp:
                    self.spark.catalog.dropTempView(shape.target.split(".")[-1])
                    defined.add(shape.target.lower())
                else:
                    self.drop(full)
                    defined.add(shape.target.lower())
                    defined.add(full)
                continue
            if full.split(".")[-1] in defined or full in defined or full in created:
                continue
            if shape.target.lower() in defined:
                continue
            schema = schemas.get(full) or self._infer_target(piece, shape, stmt, created)
            if schema:
                parts = _static_partitions(shape.tree)
                self.create(full, schema, shape.dml or full in stmt.delta, parts)
                created[full] = schema
        return created

    def _infer_target(
        self, piece: str, shape: Shape, stmt: Statement, created: Catalog
    ) -> dict[str, str]:
        """Columns for a written table that has no known schema: an INSERT's query output
        (renamed to its column list when there is one), or for MERGE / UPDATE / DELETE every
        column the statement names on the target, typed from the source when it has one."""
        tree = shape.tree
        if isinstance(tree, exp.Insert):
            query = tree.expression.copy()
            if tree.args.get("with") is not None and isinstance(query, exp.Query):
                query.set("with", tree.args["with"].copy())
            out = self.schema_of_query(query.sql(dialect="spark"))
            listed = tree.this.expressions if isinstance(tree.this, exp.Schema) else []
            if listed:
                types = list(out.values())
                return {
                    c.name.lower(): types[i] if i < len(types) else "string"
                    for i, c in enumerate(listed)
                }
            return out
        if tree is None or shape.target is None:
            return {}
        target_node = tree.this if isinstance(tree.this, exp.Table) else tree.this.find(exp.Table)
        alias = (target_node.alias or target_node.name).lower() if target_node else ""
        names = {alias, shape.target.split(".")[-1].lower(), shape.target.lower()}
        source_types: dict[str, str] = {}
        using = tree.args.get("using")
        if using is not None:
            try:
                if isinstance(using, exp.Table):
                    source_types = self.schema_of_query(f"SELECT * FROM {_table_name(using)}")
                elif isinstance(using, exp.Subquery):
                    source_types = self.schema_of_query(using.this.sql(dialect="spark"))
            except Exception:
                source_types = {}
        cols: list[str] = []

        def add(name: str) -> None:
            if name and name not in cols:
                cols.append(name)

        for col in tree.find_all(exp.Column):
            if col.table and col.table.lower() in names:
                add(col.name.lower())
        for eq in tree.find_all(exp.EQ):
            assignment = isinstance(eq.parent, (exp.Update, exp.When)) or (
                eq.parent is not None and eq.parent.key in ("update", "set")
            )
            if assignment and isinstance(eq.this, exp.Column):
                add(eq.this.name.lower())
        for ins in tree.find_all(exp.Insert):
            if isinstance(ins.this, exp.Tuple):
                for c in ins.this.expressions:
                    add(c.name.lower())
        if isinstance(tree, exp.Update):
            for e in tree.expressions:
                if isinstance(e, exp.EQ) and isinstance(e.this, exp.Column):
                    add(e.this.name.lower())
        if "*" in piece and source_types:
            for c in source_types:
                add(c)
        return {c: source_types.get(c, "string") for c in cols}


def _static_partitions(tree: exp.Expression | None) -> list[str]:
    """Columns an INSERT names in ``PARTITION (...)``: the table must be partitioned by them."""
    if not isinstance(tree, exp.Insert) or tree.this is None:
        return []
    part = tree.this.find(exp.Partition)
    if part is None:
        return []
    out = []
    for e in part.expressions:
        col = e.this if isinstance(e, exp.EQ) else e
        if isinstance(col, (exp.Column, exp.Identifier)):
            out.append(col.name.lower())
    return out


def _spark_type(t: str) -> str:
    text = (t or "string").strip()
    try:
        return exp.DataType.build(text, dialect="spark").sql(dialect="spark")
    except (SqlglotError, ValueError):
        try:
            return exp.DataType.build(text).sql(dialect="spark")
        except (SqlglotError, ValueError):
            return "STRING"


def engine_lineage(
    events: Iterable[dict[str, Any]], default_db: str, warehouse: str = ""
) -> tuple[Lineage, bool]:
    """The union over a statement's events of inputs, outputs and column lineage.

    Dataset names are storage paths for session-catalog tables; the ``symlinks`` facet gives the
    table name, which is used instead wherever it is known (also for the input fields of the
    column-lineage facet, which name datasets by path). A path under the session's warehouse
    directory that no symlink names is mapped by the warehouse layout (``<db>.db/<table>``, or
    ``<table>`` for the default database)."""
    events = list(events)
    names: dict[tuple[str, str], str] = {}
    by_name: dict[str, str] = {}
    for ev in events:
        for ds in [*ev.get("inputs", []), *ev.get("outputs", [])]:
            table = _symlink(ds)
            if table:
                names[(ds.get("namespace", ""), ds["name"])] = table
                by_name[ds["name"]] = table

    def name_of(namespace: str, name: str) -> str:
        table = names.get((namespace, name)) or by_name.get(name) or _by_layout(name, warehouse)
        return qualify(table, default_db) if table else name

    out = Lineage()
    facet = False
    for ev in events:
        for ds in ev.get("inputs", []):
            out.sources.add(name_of(ds.get("namespace", ""), ds["name"]))
        for ds in ev.get("outputs", []):
            target = name_of(ds.get("namespace", ""), ds["name"])
            out.targets.add(target)
            cl = (ds.get("facets") or {}).get("columnLineage")
            if not cl:
                continue
            facet = True
            for column, spec in (cl.get("fields") or {}).items():
                for f in spec.get("inputFields", []):
                    src = name_of(f.get("namespace", ""), f["name"])
                    for tr in f.get("transformations") or [{"type": "DIRECT", "subtype": ""}]:
                        edge = (src, f["field"].lower(), target, column.lower())
                        if tr.get("type") == "DIRECT":
                            out.add_direct(edge, tr.get("subtype") or "")
                        else:
                            out.indirect.add((src, f["field"].lower(), target, tr.get("subtype")))
            for f in cl.get("dataset") or []:
                src = name_of(f.get("namespace", ""), f["name"])
                for tr in f.get("transformations") or []:
                    if tr.get("type") == "INDIRECT":
                        out.indirect.add((src, f["field"].lower(), target, tr.get("subtype")))
    return out, facet


def _by_layout(path: str, warehouse: str) -> str | None:
    root = warehouse.rstrip("/")
    if not root or not path.startswith(root + "/"):
        return None
    rel = path[len(root) + 1 :].strip("/").split("/")
    if len(rel) == 2 and rel[0].endswith(".db"):
        return f"{rel[0][:-3]}.{rel[1]}"
    if len(rel) == 1:
        return f"default.{rel[0]}"
    return None


def _symlink(ds: dict[str, Any]) -> str | None:
    links = ((ds.get("facets") or {}).get("symlinks") or {}).get("identifiers") or []
    for link in links:
        if link.get("type", "TABLE") == "TABLE" and link.get("name"):
            return str(link["name"])
    return None


# ---------------------------------------------------------------------------- comparison


@dataclass
class Outcome:
    id: str
    origin: str
    kind: str
    sql: str
    engine_ok: bool
    engine_error: str | None
    events: int
    facet: bool
    parser_type: str
    parser_error: str | None
    engine: dict[str, Any]
    parser: dict[str, Any]
    table_exact: bool
    direct_tp: int
    direct_fp: int
    direct_fn: int
    subtype_same: int
    indirect_tp: int
    indirect_fp: int
    indirect_fn: int
    seconds: float
    # the parser's lineage under ENGINE_CONVENTIONS (empty in results written before it existed)
    conventions: dict[str, Any] = field(default_factory=dict)


def _scores(eng: dict[str, Any], par: dict[str, Any]) -> dict[str, Any]:
    """The agreement counts of two sides given in their JSON form (``Lineage.to_json``)."""
    e_direct = {tuple(x[:4]): set(x[4].split("/")) for x in eng["direct"]}
    p_direct = {tuple(x[:4]): set(x[4].split("/")) for x in par["direct"]}
    d_e, d_p = set(e_direct), set(p_direct)
    e_ind = {tuple(x) for x in eng["indirect"]}
    p_ind = {tuple(x) for x in par["indirect"]}
    return {
        "table_exact": set(eng["sources"]) == set(par["sources"])
        and set(eng["targets"]) == set(par["targets"]),
        "direct_tp": len(d_e & d_p),
        "direct_fp": len(d_p - d_e),
        "direct_fn": len(d_e - d_p),
        "subtype_same": sum(1 for e in d_e & d_p if _subtype(e_direct[e]) & _subtype(p_direct[e])),
        "indirect_tp": len(e_ind & p_ind),
        "indirect_fp": len(p_ind - e_ind),
        "indirect_fn": len(e_ind - p_ind),
    }


def compare(stmt: Statement, kind: str, run: EngineRun, seconds: float) -> Outcome:
    catalog = run.catalog or stmt.schemas
    parsed, ptype, perr = parser_lineage(stmt, catalog)
    conventional, _, _ = parser_lineage(stmt, catalog, ParserOptions(**ENGINE_CONVENTIONS))
    eng = run.lineage.to_json()
    return Outcome(
        id=stmt.id,
        origin=stmt.origin,
        kind=kind,
        sql=stmt.sql,
        engine_ok=run.ok,
        engine_error=run.error,
        events=run.events,
        facet=run.facet,
        parser_type=ptype,
        parser_error=perr,
        engine=eng,
        parser=parsed.to_json(),
        seconds=round(seconds, 2),
        conventions=conventional.to_json(),
        **_scores(eng, parsed.to_json()),
    )


def under_conventions(o: Outcome) -> Outcome:
    """The same outcome with the parser's side taken under ENGINE_CONVENTIONS."""
    return replace(o, parser=o.conventions, **_scores(o.engine, o.conventions))


def _subtype(subs: set[str]) -> set[str]:
    # the parser's MASKED is the engine's TRANSFORMATION/AGGREGATION with masking=true
    return {"TRANSFORMATION" if s == "MASKED" else s for s in subs}


def _f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def _without_gaps(ran: Sequence[Outcome]) -> tuple[float | None, float]:
    """Table exact share and DIRECT F1 once the items a rule attributes to an engine facet gap
    (class b) are left out: a statement is an exact table match when all its table items are
    class (b), and the DIRECT counts drop those edges."""
    tp = fp = fn = exact = 0
    for o in ran:
        items = disagreements(o)
        gaps = [i for i in items if i["class"] == "b" and i["what"] == "direct"]
        tp += o.direct_tp
        fp += o.direct_fp - sum(1 for i in gaps if i["side"] == "parser only")
        fn += o.direct_fn - sum(1 for i in gaps if i["side"] == "engine only")
        tables = [i for i in items if i["what"] in ("source", "target")]
        exact += o.table_exact or all(i["class"] == "b" for i in tables)
    return (exact / len(ran) if ran else None), _f1(tp, fp, fn)[2]


def summarise(outcomes: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """Figures per statement kind and overall, over statements the engine ran.

    Besides the raw figures: the *gaps excluded* ones leave out the disagreement items that a
    rule classifies as an engine facet gap (b), and only those (convention differences (c),
    parser errors (a) and unclassified items still count); the *engine conventions* ones do
    the same with the parser run under ENGINE_CONVENTIONS, the documented options that make
    its conventions the engine's (when the outcomes carry that run)."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[o.kind].append(o)
        groups["ALL"].append(o)
    out: dict[str, dict[str, Any]] = {}
    for kind, items in sorted(groups.items(), key=lambda kv: (kv[0] == "ALL", kv[0])):
        ran = [o for o in items if o.engine_ok]
        dt = sum(o.direct_tp for o in ran)
        dfp, dfn = sum(o.direct_fp for o in ran), sum(o.direct_fn for o in ran)
        dp, dr, df = _f1(dt, dfp, dfn)
        it = sum(o.indirect_tp for o in ran)
        ip, ir, inf = _f1(it, sum(o.indirect_fp for o in ran), sum(o.indirect_fn for o in ran))
        adj_exact, adj_f1 = _without_gaps(ran)
        with_conv = [under_conventions(o) for o in ran if o.conventions]
        conv_exact, conv_f1 = (
            _without_gaps(with_conv) if len(with_conv) == len(ran) else (None, None)
        )
        out[kind] = {
            "statements": len(items),
            "ran": len(ran),
            "with_facet": sum(1 for o in ran if o.facet),
            "table_exact": sum(o.table_exact for o in ran) / len(ran) if ran else None,
            "direct_p": dp,
            "direct_r": dr,
            "direct_f1": df,
            "direct_edges_engine": dt + dfn,
            "subtype_agree": sum(o.subtype_same for o in ran) / dt if dt else None,
            "indirect_p": ip,
            "indirect_r": ir,
            "indirect_f1": inf,
            "table_exact_no_gaps": adj_exact,
            "direct_f1_no_gaps": adj_f1,
            "table_exact_conventions": conv_exact,
            "direct_f1_conventions": conv_f1,
        }
    return out


# ---------------------------------------------------------------------------- classification

# Every disagreement gets a class: (a) the engine is right and the parser's general rule is
# wrong, (b) the parser is right and the engine's facet has a gap, (c) a naming or convention
# difference. The rules below are general (by statement shape, never by statement id); what no
# rule matches is listed as "unclassified" for a person to classify.
RULES: dict[str, tuple[str, str]] = {
    "no_dataset": (
        "b",
        "openlineage-spark emits no input or output dataset for this statement kind on OSS "
        "Spark 4.1 / Delta 4.4: CREATE VIEW is filtered out by design (OpenLineage#1982, "
        "PR #1987); CACHE TABLE runs as an InMemoryRelation (OpenLineage#1628); Delta's "
        "UpdateCommand / DeleteCommand get no dataset builder (OpenLineage#4807; PRs #4815 "
        "and #4835 cover Databricks' tahoe nodes only)",
    ),
    "dml_target_read": (
        "c",
        "the engine lists the MERGE target among the inputs (the rewrite reads its files); "
        "the parser's convention is update_target_as_source=false",
    ),
    "dml_self_edge": (
        "c",
        "the engine records target.c -> target.c IDENTITY for MERGE target columns that a "
        "clause leaves unchanged (its ON key); the parser's convention is "
        "merge_unchanged_columns_as_identity=false",
    ),
    "constant_conditional": (
        "c",
        "a CASE / IF whose results are all constants: the engine calls its tested column "
        "INDIRECT/CONDITIONAL, the parser's documented rule (eval/README.md) a DIRECT value "
        "mapping",
    ),
    "script_intermediate": (
        "c",
        "a persistent table created and dropped inside the script: the parser collapses it "
        "and stitches lineage through it, the engine reports every statement separately",
    ),
    "subquery_source": (
        "b",
        "a table read only inside a subquery expression (IN / EXISTS / scalar subquery): "
        "openlineage-spark's input builders do not visit plan expressions, so the engine names "
        "no input for it (OpenLineage#4807 lists the same gap for UPDATE/DELETE subqueries)",
    ),
    "cached_relation": (
        "b",
        "column lineage through a cached table (CACHE TABLE ... AS) is cut at the "
        "InMemoryRelation (OpenLineage#1628)",
    ),
    "merge_subquery_source": (
        "b",
        "MERGE ... USING (subquery): the engine's facet has column lineage from the subquery's "
        "table but names no input dataset for it (the MERGE input builder takes the USING "
        "relation only when it is a table)",
    ),
    "window_over_aggregate": (
        "b",
        "RANK() / ROW_NUMBER() OVER (ORDER BY an aggregate): the engine composes the "
        "aggregate's DIRECT edge with the window ordering and reports the ordered column as "
        "DIRECT/AGGREGATION of the rank; the rank carries no value of it (an ordering key is "
        "INDIRECT/WINDOW in the OpenLineage spec, as the engine itself reports for a plain "
        "column)",
    ),
    "grouping_sets": (
        "b",
        "GROUP BY ROLLUP / CUBE / GROUPING SETS: Spark plans an Expand node and the engine's "
        "facet loses the grouping columns behind it",
    ),
    "read_only_query": (
        "b",
        "a plain SELECT: openlineage-spark 1.53.0 emits no event with datasets for a query "
        "that writes nothing (OpenLineage#2764); the parser reports the tables read",
    ),
    "drop_target": (
        "c",
        "DROP TABLE: the parser names the dropped table a target "
        "(destructive_statements_as_targets=true); the engine emits no dataset",
    ),
    "write_without_inputs": (
        "b",
        "the engine emitted the output dataset but neither input datasets nor a columnLineage "
        "facet (seen on a 358-column INSERT over three joined tables); the event carries no "
        "error facet, so the facet builder gave up silently",
    ),
    "noop_cast": (
        "a",
        "CAST of a column to the type it already has: Spark's analyser drops the cast and the "
        "engine reports IDENTITY; the parser does the same when the catalog gives the column's "
        "declared type (an item here is a regression, or a type the catalog does not give)",
    ),
    "aggregate_over_union": (
        "b",
        "an aggregate over a UNION ALL branch column (SUM(x) FROM (... UNION ALL ...)): the "
        "engine reports IDENTITY and loses the aggregation at the Union node",
    ),
    "merge_clause_gap": (
        "b",
        "a MERGE clause's assignments missing from the engine's facet while the statement "
        "has several WHEN clauses or a conditional clause (OpenLineage#2895 family: the Delta "
        "MERGE visitor does not follow every clause)",
    ),
}


def _subquery_tables(sql: str, dialect: str) -> set[str]:
    """Tables that occur only inside subquery expressions of a predicate or projection."""
    out: set[str] = set()
    for piece in split_statements(sql, dialect):
        tree = _parse(piece, dialect)
        if tree is None:
            continue
        inside: set[str] = set()
        outside: set[str] = set()
        for t in tree.find_all(exp.Table):
            name = _table_name(t).lower()
            node, nested = t.parent, False
            while node is not None:
                if isinstance(node, (exp.In, exp.Exists)) or (
                    isinstance(node, exp.Subquery)
                    and not isinstance(
                        node.parent, (exp.From, exp.Join, exp.Union, exp.CTE, exp.Merge)
                    )
                ):
                    nested = True
                    break
                node = node.parent
            (inside if nested else outside).add(name)
        out |= {n.split(".")[-1] for n in inside - outside}
    return out


def _created_and_dropped(sql: str, dialect: str) -> set[str]:
    created, dropped = set(), set()
    for piece in split_statements(sql, dialect):
        m = re.match(
            r"\s*create\s+(?:or\s+replace\s+)?table\s+(?:if\s+not\s+exists\s+)?([\w.`]+)",
            piece,
            re.I,
        )
        if m:
            created.add(m.group(1).strip("`").lower().split(".")[-1])
        m = re.match(r"\s*drop\s+table\s+(?:if\s+exists\s+)?([\w.`]+)", piece, re.I)
        if m:
            dropped.add(m.group(1).strip("`").lower().split(".")[-1])
    return created & dropped


def disagreements(o: Outcome) -> list[dict[str, Any]]:
    """Every item on which the two sides differ, with the rule that explains it (or none)."""
    eng, par = o.engine, o.parser
    items: list[dict[str, Any]] = []
    for role in ("sources", "targets"):
        for t in sorted(set(eng[role]) - set(par[role])):
            items.append({"what": role[:-1], "item": t, "side": "engine only"})
        for t in sorted(set(par[role]) - set(eng[role])):
            items.append({"what": role[:-1], "item": t, "side": "parser only"})
    e_direct = {tuple(x[:4]): x[4] for x in eng["direct"]}
    p_direct = {tuple(x[:4]): x[4] for x in par["direct"]}
    for e in sorted(set(e_direct) - set(p_direct)):
        items.append(
            {"what": "direct", "item": list(e), "side": "engine only", "subtype": e_direct[e]}
        )
    for e in sorted(set(p_direct) - set(e_direct)):
        items.append(
            {"what": "direct", "item": list(e), "side": "parser only", "subtype": p_direct[e]}
        )
    for e in sorted(set(e_direct) & set(p_direct)):
        es, ps = _subtype({e_direct[e]}), _subtype({p_direct[e]})
        if es != ps:
            items.append(
                {
                    "what": "subtype",
                    "item": list(e),
                    "side": "both",
                    "subtype": f"engine {e_direct[e]} / parser {p_direct[e]}",
                }
            )
    if not items:
        return items
    e_indirect = {tuple(x) for x in eng["indirect"]}
    no_dataset = (
        not eng["sources"]
        and not eng["targets"]
        and o.kind in ("CREATE_VIEW", "CACHE", "UPDATE", "DELETE")
    )
    upper = o.sql.upper()
    has_merge = "MERGE" in upper
    has_cache = "CACHE" in upper
    short_lived = _created_and_dropped(o.sql, "spark")
    in_subquery = _subquery_tables(o.sql, "spark")
    p_indirect = {tuple(x) for x in par["indirect"]}
    merge_using_subquery = bool(re.search(r"\bUSING\s*\(", upper))
    grouping_sets = bool(re.search(r"\b(ROLLUP|CUBE|GROUPING\s+SETS)\b", upper))
    short_targets = {t for t in eng["targets"] if t.split(".")[-1] in short_lived}
    via_short = {(e[2], e[3]) for e in e_direct if e[0] in short_targets}
    silent_write = bool(eng["targets"]) and not eng["sources"] and not o.facet
    for it in items:
        rule = None
        names = [it["item"]] if isinstance(it["item"], str) else [it["item"][0], it["item"][2]]
        edge = it["item"] if it["what"] in ("direct", "subtype") else None
        parser_only = it["side"] == "parser only"
        if it["what"] == "subtype":
            e_sub, p_sub = e_direct[tuple(edge)], p_direct[tuple(edge)]
            if e_sub == "IDENTITY" and p_sub == "TRANSFORMATION" and "CAST(" in upper:
                rule = "noop_cast"
            elif e_sub == "IDENTITY" and p_sub == "AGGREGATION" and "UNION" in upper:
                rule = "aggregate_over_union"
        elif no_dataset and parser_only:
            rule = "no_dataset"
        elif o.kind == "SELECT" and parser_only and not eng["sources"]:
            rule = "read_only_query"
        elif o.kind == "OTHER" and it["what"] == "target" and parser_only and "DROP" in upper:
            rule = "drop_target"
        elif silent_write and parser_only:
            rule = "write_without_inputs"
        elif any(n.split(".")[-1] in short_lived for n in names) or (
            edge and parser_only and (edge[2], edge[3]) in via_short
        ):
            rule = "script_intermediate"
        elif (
            has_merge
            and it["what"] == "source"
            and it["side"] == "engine only"
            and it["item"] in eng["targets"]
        ):
            rule = "dml_target_read"
        elif has_merge and edge and not parser_only and edge[0] == edge[2] and edge[1] == edge[3]:
            rule = "dml_self_edge"
        elif edge and parser_only and (edge[0], edge[1], edge[2], "CONDITIONAL") in e_indirect:
            rule = "constant_conditional"
        elif (
            edge
            and not parser_only
            and it.get("subtype") == "AGGREGATION"
            and (edge[0], edge[1], edge[2], "WINDOW") in p_indirect
        ):
            rule = "window_over_aggregate"
        elif parser_only and any(n.split(".")[-1] in in_subquery for n in names[:1]):
            rule = "subquery_source"
        elif has_merge and merge_using_subquery and it["what"] == "source" and parser_only:
            rule = "merge_subquery_source"
        elif grouping_sets and edge and parser_only:
            rule = "grouping_sets"
        elif has_cache and edge and parser_only:
            rule = "cached_relation"
        elif has_merge and edge and parser_only and " AND " in upper.split("WHEN", 1)[-1]:
            rule = "merge_clause_gap"
        it["rule"] = rule
        it["class"] = RULES[rule][0] if rule else None
    return items


def _targets_lines(
    summary: dict[str, dict[str, Any]], conventions_used: dict[str, bool]
) -> list[str]:
    """Table exact >= 0.97 and DIRECT F1 >= 0.95 over the statements the engine ran, raw and
    with the engine's facet gaps (class b) excluded."""
    a = summary.get("ALL")
    if not a or not a["ran"]:
        return ["No statement ran."]

    def mark(x: float | None, goal: float) -> str:
        return "-" if x is None else f"{x:.3f} ({'met' if x >= goal else 'not met'})"

    conventions = ", ".join(f"{k}={str(v).lower()}" for k, v in conventions_used.items())
    return [
        "| figure (all kinds) | target | raw | engine gaps (b) excluded "
        "| (b) excluded, engine conventions |",
        "|---|---:|---:|---:|---:|",
        f"| table exact match | 0.97 | {mark(a['table_exact'], 0.97)} | "
        f"{mark(a['table_exact_no_gaps'], 0.97)} | "
        f"{mark(a.get('table_exact_conventions'), 0.97)} |",
        f"| DIRECT edge F1 | 0.95 | {mark(a['direct_f1'], 0.95)} | "
        f"{mark(a['direct_f1_no_gaps'], 0.95)} | {mark(a.get('direct_f1_conventions'), 0.95)} |",
        "",
        "The raw figures count every difference, including the statement kinds for which the "
        "listener emits no dataset at all. The second column drops only the items that a rule "
        "attributes to a gap in the engine's facet (class b). Convention differences (c) and "
        "parser errors (a) still count. The third column is the second with the parser run "
        f"under the documented options that adopt the engine's conventions ({conventions}); "
        "the remaining convention items (c) and every parser error (a) still count.",
    ]


def write_report(
    path: Path,
    outcomes: Sequence[Outcome],
    summary: dict[str, dict[str, Any]],
    versions: dict[str, str],
    seconds: float,
    command: str,
    host: dict[str, str] | None = None,
    conventions: dict[str, bool] | None = None,
) -> None:
    """The Markdown results file: command, machine, versions, counts, figures, every
    disagreement; ``conventions``: the parser options of the engine-conventions figures
    (default ``ENGINE_CONVENTIONS``)."""
    origins = Counter(o.origin for o in outcomes)
    lines = [
        "# Parser vs. engine: differential results",
        "",
        "Generated by `bench/engine_diff.py`; do not edit by hand (the analysis is in "
        "`docs/engine_diff.md`).",
        "",
        f"Command: `{command}`",
        "",
        "Machine: " + (", ".join(f"{k} {v}" for k, v in (host or {}).items()) or "not recorded"),
        "",
        format_summary(summary, versions, seconds, origins),
        "",
        "Figures are over statements the engine ran. DIRECT edges are "
        "(source table.column -> target table.column); *subtype agree* is the share of "
        "matched DIRECT edges with the same subtype. INDIRECT items are (source table.column, "
        "target table, subtype), since the engine gives dataset-wide INDIRECT dependencies.",
        "",
        "## Where the parser stands against the targets",
        "",
        *_targets_lines(summary, ENGINE_CONVENTIONS if conventions is None else conventions),
        "",
        "## Disagreement rules",
        "",
        "| rule | class | explanation | items |",
        "|---|---|---|---:|",
    ]
    per_rule: Counter[str] = Counter()
    listed: list[tuple[Outcome, list[dict[str, Any]]]] = []
    for o in outcomes:
        if not o.engine_ok:
            continue
        items = disagreements(o)
        if items:
            listed.append((o, items))
            per_rule.update(str(it["rule"]) for it in items)
    for rule, (cls, text) in RULES.items():
        lines.append(f"| {rule} | ({cls}) | {text} | {per_rule.get(rule, 0)} |")
    lines.append(f"| unclassified | - | see the list below | {per_rule.get('None', 0)} |")
    lines += ["", "## Statements the engine did not run", ""]
    for o in outcomes:
        if not o.engine_ok:
            lines.append(f"- `{o.id}` ({o.kind}): {o.engine_error}")
    lines += ["", "## Every disagreement", ""]
    for o, items in listed:
        lines.append(f"### `{o.id}` ({o.kind})")
        lines.append("")
        lines.append("```sql")
        lines.append(o.sql.strip()[:1500])
        lines.append("```")
        lines.append("")
        shown = items if len(items) <= 40 else items[:30]
        for it in shown:
            item = (
                it["item"]
                if isinstance(it["item"], str)
                else (f"{it['item'][0]}.{it['item'][1]} -> {it['item'][2]}.{it['item'][3]}")
            )
            sub = f" {it['subtype']}" if it.get("subtype") else ""
            cls = f"({it['class']}) {it['rule']}" if it["rule"] else "unclassified"
            lines.append(f"- {it['what']} {it['side']}: `{item}`{sub}: {cls}")
        if len(shown) < len(items):
            rest = Counter(
                f"({i['class']}) {i['rule']}" if i["rule"] else "unclassified"
                for i in items[len(shown) :]
            )
            lines.append(
                f"- and {len(items) - len(shown)} more items: "
                + ", ".join(f"{n} {r}" for r, n in rest.most_common())
                + " (all derivable from the JSON outcome)"
            )
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- driver


def collect(origins: Sequence[str], per_group: int, tpc: int) -> list[Statement]:
    """The statements of the chosen origins, each with its kind."""
    stmts: list[Statement] = []
    if "handwritten" in origins:
        stmts += handwritten()
    if "corpus" in origins:
        stmts += corpus_cases(SHARED / "corpus" / "lineage_cases.jsonl", "corpus")
    if "heldout" in origins:
        stmts += corpus_cases(ROOT / "eval" / "heldout_cases.jsonl", "heldout")
        stmts += corpus_cases(ROOT / "eval" / "heldout2_cases.jsonl", "heldout2")
    if "sample" in origins:
        stmts += sample_log(ROOT / "data" / "sample" / "spark_query_log.jsonl")
    if "workload" in origins:
        stmts += workload(
            SHARED / "bench" / "workload.jsonl",
            SHARED / "bench" / "workload_schema.json",
            per_group,
            tpc,
        )
    for s in stmts:
        s.kind = s.kind or kind_of(s.sql, s.dialect)
    return stmts


def run_all(
    stmts: Sequence[Statement], workdir: Path | None = None, log: Any = None
) -> tuple[list[Outcome], dict[str, str]]:
    """Run every statement in one SparkSession; returns the outcomes and the versions."""
    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="engine_diff_")) if workdir is None else workdir
    engine = Engine(work)
    outcomes: list[Outcome] = []
    try:
        for n, stmt in enumerate(stmts, 1):
            t0 = time.perf_counter()
            run = engine.run(stmt)
            outcome = compare(stmt, stmt.kind or "OTHER", run, time.perf_counter() - t0)
            outcomes.append(outcome)
            if log is not None:
                status = "ok" if run.ok else f"not run ({run.error})"
                print(f"[{n}/{len(stmts)}] {stmt.id} {stmt.kind} {status}", file=log, flush=True)
        versions = dict(engine.versions)
    finally:
        engine.stop()
        if own:
            shutil.rmtree(work, ignore_errors=True)
    import pyspark

    versions["pyspark"] = pyspark.__version__
    versions["sqlglot"] = sqlglot.__version__
    return outcomes, versions


def machine() -> dict[str, str]:
    """Where and when a run happened: the date, CPU, cores, memory, load, Java."""
    import platform
    import subprocess

    info = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
    }
    with contextlib.suppress(OSError):
        info["load_average"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["memory"] = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(OSError, subprocess.SubprocessError, IndexError):
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        info["java"] = out.stderr.splitlines()[0]
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--origins",
        default="handwritten,corpus,heldout,sample,workload",
        help="comma-separated: handwritten, corpus, heldout, sample, workload",
    )
    ap.add_argument("--per-group", type=int, default=3, help="workload rows per synthetic group")
    ap.add_argument("--tpc", type=int, default=12, help="workload TPC-H and TPC-DS rows each")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    ap.add_argument("--report", type=Path, help="write the Markdown results file here")
    ap.add_argument("--only", help="run only statement ids containing this text")
    ap.add_argument("--workdir", type=Path, help="keep the warehouse and events.jsonl here")
    ap.add_argument(
        "--from-json",
        type=Path,
        help="no Spark: re-summarise and re-classify the outcomes of an earlier --json run",
    )
    ns = ap.parse_args(argv)
    if ns.from_json:
        saved = json.loads(ns.from_json.read_text(encoding="utf-8"))
        outcomes = [Outcome(**o) for o in saved["outcomes"]]
        summary = summarise(outcomes)
        if ns.report:
            write_report(
                ns.report,
                outcomes,
                summary,
                saved["versions"],
                saved["seconds"],
                saved.get("command", ""),
                saved.get("machine"),
                saved.get("conventions", UNRECORDED_CONVENTIONS),
            )
        print(
            format_summary(
                summary, saved["versions"], saved["seconds"], Counter(o.origin for o in outcomes)
            )
        )
        return 0
    stmts = collect([o.strip() for o in ns.origins.split(",")], ns.per_group, ns.tpc)
    if ns.only:
        stmts = [s for s in stmts if ns.only in s.id]
    host = machine()
    t0 = time.perf_counter()
    outcomes, versions = run_all(stmts, workdir=ns.workdir, log=sys.stderr)
    elapsed = time.perf_counter() - t0
    summary = summarise(outcomes)
    command = ("python bench/engine_diff.py " + " ".join(argv or sys.argv[1:])).strip()
    if ns.json:
        ns.json.write_text(
            json.dumps(
                {
                    "command": command,
                    "machine": host,
                    "versions": versions,
                    "seconds": round(elapsed, 1),
                    "conventions": ENGINE_CONVENTIONS,
                    "summary": summary,
                    "outcomes": [asdict(o) for o in outcomes],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    if ns.report:
        write_report(ns.report, outcomes, summary, versions, elapsed, command, host)
    print(format_summary(summary, versions, elapsed, Counter(o.origin for o in outcomes)))
    return 0


def format_summary(
    summary: dict[str, dict[str, Any]],
    versions: dict[str, str],
    seconds: float,
    origins: Counter[str],
) -> str:
    """The per-kind table as Markdown."""

    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.3f}"

    lines = [
        "versions: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())),
        "origins: " + ", ".join(f"{k} {v}" for k, v in sorted(origins.items())),
        f"wall time: {seconds:.0f} s",
        "",
        "| kind | statements | ran | facet | table exact | DIRECT P | DIRECT R | DIRECT F1 "
        "| engine DIRECT edges | subtype agree | INDIRECT F1 | table exact, (b) excluded "
        "| DIRECT F1, (b) excluded | table exact, conventions | DIRECT F1, conventions |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, s in summary.items():
        lines.append(
            f"| {kind} | {s['statements']} | {s['ran']} | {s['with_facet']} | "
            f"{f(s['table_exact'])} | {f(s['direct_p'])} | {f(s['direct_r'])} | "
            f"{f(s['direct_f1'])} | {s['direct_edges_engine']} | {f(s['subtype_agree'])} | "
            f"{f(s['indirect_f1'])} | {f(s['table_exact_no_gaps'])} | "
            f"{f(s['direct_f1_no_gaps'])} | {f(s.get('table_exact_conventions'))} | "
            f"{f(s.get('direct_f1_conventions'))} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    raise SystemExit(main())
