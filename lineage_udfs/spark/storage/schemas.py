"""Declared Spark schemas: the canonical query log, the parse UDF's return type and one
:class:`TableSpec` per Delta table (schema, merge key, properties and comments together).

The query log and the parse-result struct are derived from the records of
``lineage_udfs.core.records``; so are the parse-result columns of ``parsed_statements``. Writers
always ``select`` a spec's columns in its order; nothing relies on inference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lineage_udfs.core.records import FieldSpec, Kind, ParseRecord, QueryLogRow, fields_of

_SCALAR_TYPES: dict[Kind, DataType] = {
    Kind.STRING: StringType(),
    Kind.DOUBLE: DoubleType(),
    Kind.INT: IntegerType(),
    Kind.BOOLEAN: BooleanType(),
    Kind.TIMESTAMP: TimestampType(),
    Kind.STRINGS: ArrayType(StringType()),
}


def spark_type(spec: FieldSpec) -> DataType:
    """The Spark type of a record field (a list of records: an array of their structs)."""
    if spec.kind is Kind.RECORDS:
        assert spec.element is not None
        return ArrayType(record_schema(spec.element))
    return _SCALAR_TYPES[spec.kind]


def record_schema(record: type, *, exclude: Sequence[str] = ()) -> StructType:
    """The struct of a record of ``lineage_udfs.core.records`` (every field nullable)."""
    return StructType(
        [
            StructField(spec.name, spark_type(spec), True)
            for spec in fields_of(record)
            if spec.name not in exclude
        ]
    )


QUERY_LOG_SCHEMA = record_schema(QueryLogRow)
"""The canonical query log: what every reader produces."""

PARSE_RESULT_SCHEMA = record_schema(ParseRecord)
"""One parse result (``ParseRecord``)."""

UDF_RESULT_SCHEMA = record_schema(ParseRecord, exclude=("masked_sql",))
"""What the parse UDF returns: PARSE_RESULT_SCHEMA without ``masked_sql``. The masked text is a
column of the statements already (masked by Spark expressions); it does not travel to the
Python worker and back."""

_STR_ARRAY = ArrayType(StringType())
_LOG = {f.name: f.dataType for f in QUERY_LOG_SCHEMA}
_PARSE = {f.name: f.dataType for f in PARSE_RESULT_SCHEMA}

COLUMN_MEANINGS: dict[str, str] = {
    "fingerprint": "sha256 hex prefix of dialect, session db/schema and the masked normalized "
    "statement",
    "dialect": "sqlglot dialect name",
    "masked_sql": "the statement with every literal masked to ? and comments removed",
    "statement_type": "CTAS, INSERT, MERGE, UPDATE, CREATE_VIEW, SELECT_INTO, SCRIPT, ...",
    "parser": "cascade tier that produced the result: sqlglot / sqlfluff / sqlparse / none",
    "parser_version": "lineage-warehouse version + sqlglot version that parsed the statement",
    "status": "ok / partial / failed / timeout / skipped (runs: succeeded / failed)",
    "error_kind": "SYNTAX, UNSUPPORTED, TIMEOUT, TOO_LARGE, EMPTY, COLUMN_LINEAGE, INTERNAL",
    "error": "failure message (literals masked)",
    "parse_ms": "parse time in milliseconds",
    "sources": "tables read",
    "targets": "tables written",
    "intermediates": "temporary tables traced through inside a script",
    "table_edges": "table edges of the statement (source_table, target_table)",
    "column_edges": "column edges of the statement",
    "statements": "per-statement lineage of a script",
    "first_seen": "earliest log start_time of the rows behind this row",
    "last_seen": "latest log start_time of the rows behind this row",
    "occurrences": "number of distinct log query_ids behind this row",
    "query_id": "query id from the source system, or a sha256 of the log row",
    "default_database": "session database/catalog when the query ran",
    "default_schema": "session schema when the query ran",
    "user_name": "who ran the query",
    "start_time": "when the query started (UTC)",
    "end_time": "when the query ended (UTC)",
    "source_system": "OpenLineage namespace of the system that ran the query",
    "object_kind": "query (log row), view or procedure (definitions)",
    "object_name": "view or procedure name for definitions",
    "source_table": "upstream table (canonical lower-case qualified name)",
    "target_table": "downstream table (canonical lower-case qualified name)",
    "source_column": "upstream column",
    "target_column": "downstream column",
    "transformation_type": "DIRECT or INDIRECT (OpenLineage)",
    "transformation_subtype": "IDENTITY, TRANSFORMATION, AGGREGATION, FILTER, JOIN, ... "
    "(OpenLineage)",
    "edge_kind": "query / view / procedure",
    "quarantine_id": "sha256 of the stage and the identity of the quarantined row",
    "stage": "load or parse",
    "reason": "why the row was quarantined",
    "source_file": "source name and file the row came from",
    "masked_record": "the row's text with literals masked",
    "run_id": "extraction run id",
    "node": "table, view or external dataset (canonical name)",
    "kind": "table / view / external",
    "in_degree": "number of distinct upstream tables (self-loops excluded)",
    "out_degree": "number of distinct downstream tables (self-loops excluded)",
    "is_root": "no upstream table",
    "is_leaf": "no downstream table",
    "on_cycle": "the node lies on a directed cycle (its strongly connected component has 2+ "
    "nodes, or it has a self-loop)",
    "component_id": "connected component (its smallest node name)",
    "component_size": "number of nodes in the component",
    "root": "first node of the path (a root)",
    "leaf": "last node of the path (a leaf, or where a cycle or the depth limit stopped it)",
    "path": "node names from root to leaf",
    "depth": "number of edges on the path",
    "truncated": "lineage_paths: the path was cut at max_depth, or its root had more paths than "
    "the cap; closures: the ancestor had more descendants than graph.max_closure_per_node (only "
    "the nearest are stored)",
    "ancestor": "upstream table",
    "descendant": "downstream table",
    "min_distance": "fewest hops from ancestor to descendant (any edge)",
    "ancestor_table": "upstream column's table",
    "ancestor_column": "upstream column",
    "descendant_table": "downstream column's table",
    "descendant_column": "downstream column",
    "direct_min_distance": "fewest hops through DIRECT edges only (null: only via INDIRECT)",
    "signature": "sha256 of the component's sorted (source, target, edge_kind) edges",
    "edge_count": "distinct table edges in the component",
    "node_count": "nodes in the component",
    "emission_id": "OpenLineage emission id",
    "scope": "incremental (changes since the watermark) or full (every row)",
    "emit_mode": "openlineage.emit_mode of the emission: per_run / per_statement_day",
    "options_digest": "digest of the event-shaping openlineage options; a change forces a full "
    "emission",
    "queries_from_version": "queries version of the previous watermark (exclusive start of the "
    "range); null for a full emission",
    "queries_version": "queries version covered: every change up to it was emitted (null: "
    "rows without a parse were found, the next emission is full)",
    "parsed_statements_from_version": "parsed_statements version of the previous watermark; "
    "null for a full emission",
    "parsed_statements_version": "parsed_statements version covered",
    "changed_queries": "queries rows new or updated since the watermark",
    "reparsed_statements": "fingerprints whose parse changed since the watermark",
    "rows": "runs (log rows or statement-days) looked at",
    "skipped": "runs that produce no event",
    "emitted": "events the transport accepted",
    "spooled": "events spooled for a later replay",
    "overflowed": "events dropped because the spool was full",
    "failed": "events rejected by the transport (or undeliverable without a spool)",
    "replayed": "spooled events delivered before this emission",
}
"""What a column of a given name means, in whichever table it stands (a table may say otherwise
for its own column: ``TableSpec.column_comments``)."""


@dataclass(frozen=True)
class TableSpec:
    """One Delta table: its schema, natural (MERGE) key, table properties and comments.

    Attributes:
        name: the table's plain name (also its default path under ``sink.base_path``).
        comment: the table comment.
        schema: the declared columns, in order.
        keys: the natural key, unique per row (MERGE condition).
        properties: Delta table properties, set on creation and on existing tables.
        column_comments: a comment per column (its meaning from COLUMN_MEANINGS unless the
            table says otherwise).
    """

    name: str
    comment: str
    schema: StructType
    keys: tuple[str, ...]
    properties: Mapping[str, str] = field(default_factory=dict)
    column_comments: Mapping[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """The column names, in declared order."""
        return list(self.schema.fieldNames())


def _table(
    name: str,
    comment: str,
    keys: tuple[str, ...],
    columns: Sequence[tuple[str, DataType]],
    *,
    properties: Mapping[str, str] | None = None,
    comments: Mapping[str, str] | None = None,
) -> TableSpec:
    schema = StructType([StructField(column, dtype, True) for column, dtype in columns])
    own = comments or {}
    return TableSpec(
        name=name,
        comment=comment,
        schema=schema,
        keys=keys,
        properties={**MAINTENANCE, **(properties or {})},
        column_comments={
            f.name: own.get(f.name) or COLUMN_MEANINGS.get(f.name, f.name.replace("_", " "))
            for f in schema
        },
    )


MAINTENANCE: Mapping[str, str] = {"delta.enableDeletionVectors": "true"}
"""Properties of every table, so that many small runs stay as fast as one: with deletion
vectors a MERGE that updates or deletes a few rows marks them in a small side file instead of
rewriting every data file they sit in, and a MERGE whose update conditions hold for no row (a
rerun with nothing new) commits nothing at all. Small files are compacted by
``LineageTables.compact`` (Delta's auto compaction compacts after nearly every small commit:
a second commit per table and run)."""


def _log(*names: str) -> list[tuple[str, DataType]]:
    return [(n, _LOG[n]) for n in names]


def _parse(*names: str) -> list[tuple[str, DataType]]:
    return [(n, _PARSE[n]) for n in names]


CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
"""Incremental OpenLineage emission reads what changed since its watermark from the change data
feed of ``queries`` and ``parsed_statements`` (new / updated log rows, re-parsed statements)
instead of scanning all history; the incremental graph stage reads which edges changed since
its last run from the feed of ``table_lineage`` and ``column_lineage``."""

_STATS: list[tuple[str, DataType]] = [
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
]

PARSED_STATEMENTS = _table(
    "parsed_statements",
    "One row per distinct statement fingerprint: parse outcome and usage.",
    ("fingerprint",),
    [
        ("fingerprint", StringType()),
        ("dialect", StringType()),
        *_parse("statement_type", "masked_sql", "parser"),
        ("parser_version", StringType()),
        *_parse(
            "status",
            "error_kind",
            "error",
            "parse_ms",
            "sources",
            "targets",
            "intermediates",
            "table_edges",
            "column_edges",
            "statements",
        ),
        *_STATS,
    ],
    properties={CHANGE_DATA_FEED: "true"},
)

QUERIES = _table(
    "queries",
    "One row per lineage-relevant log row: its metadata (never its text).",
    ("query_id",),
    [
        ("query_id", StringType()),
        ("fingerprint", StringType()),
        *_log(*(f.name for f in QUERY_LOG_SCHEMA if f.name not in ("query_id", "query_text"))),
    ],
    properties={CHANGE_DATA_FEED: "true"},
)

_EDGE_OWNER: list[tuple[str, DataType]] = [
    ("edge_kind", StringType()),  # query / view / procedure
    ("fingerprint", StringType()),
    ("object_name", StringType()),
    ("source_system", StringType()),
    *_STATS,
]

TABLE_LINEAGE = _table(
    "table_lineage",
    "Table-level lineage edges, per statement fingerprint (query lineage accumulates; a view or "
    "procedure keeps only its newest definition's edges).",
    ("source_table", "target_table", "edge_kind", "fingerprint"),
    [("source_table", StringType()), ("target_table", StringType()), *_EDGE_OWNER],
    properties={CHANGE_DATA_FEED: "true"},
)

COLUMN_LINEAGE = _table(
    "column_lineage",
    "Column-level lineage edges with OpenLineage transformation type/subtype.",
    (
        "source_table",
        "source_column",
        "target_table",
        "target_column",
        "transformation_type",
        "transformation_subtype",
        "edge_kind",
        "fingerprint",
    ),
    [(f.name, f.dataType) for f in PARSE_RESULT_SCHEMA["column_edges"].dataType.elementType]  # type: ignore[attr-defined]
    + _EDGE_OWNER,
    properties={CHANGE_DATA_FEED: "true"},
)

QUARANTINE = _table(
    "quarantine",
    "Rows that could not be loaded or parsed, with the reason (insert-only).",
    ("quarantine_id",),
    [
        ("quarantine_id", StringType()),  # deterministic: hash of stage + source identity
        ("stage", StringType()),  # load / parse
        ("reason", StringType()),
        ("error_kind", StringType()),
        ("query_id", StringType()),
        ("fingerprint", StringType()),
        ("source_file", StringType()),
        ("masked_record", StringType()),  # literals masked to ?
        ("first_seen", TimestampType()),
        ("last_seen", TimestampType()),
        ("run_id", StringType()),
    ],
)

LINEAGE_RUNS = _table(
    "lineage_runs",
    "One row per extraction run: config, counts and timings.",
    ("run_id",),
    [
        ("run_id", StringType()),
        ("started_at", TimestampType()),
        ("ended_at", TimestampType()),
        ("config_json", StringType()),
        ("input_fingerprint", StringType()),
        ("rows_read", LongType()),
        ("rows_not_relevant", LongType()),
        ("rows_relevant", LongType()),
        ("distinct_statements", LongType()),
        ("parsed_statements", LongType()),
        ("by_status", MapType(StringType(), LongType())),
        ("by_parser", MapType(StringType(), LongType())),
        ("table_edges", LongType()),
        ("column_edges", LongType()),
        ("quarantined", LongType()),
        ("stage_seconds", MapType(StringType(), DoubleType())),
        ("status", StringType()),
    ],
)

SOURCE_STATE = _table(
    "source_state",
    "Read watermarks of incremental sources (lineage_udfs.spark.extract.watermark): one row per "
    "column-watermark source, or one per key of a key-set source; committed after the run's "
    "lineage, in one commit for all sources.",
    ("source_name", "state_key"),
    [
        ("source_name", StringType()),
        ("state_key", StringType()),  # '' for a column watermark; the row key's JSON for a key set
        ("state_value", StringType()),  # the column's maximum read / the key's version
        ("run_id", StringType()),
        ("committed_at", TimestampType()),
    ],
    comments={
        "state_key": "'' for a column watermark; the JSON of a row's key for a key-set source",
        "state_value": "the highest value of the watermark column read (as text), or the "
        "key's version (e.g. pg_stat_statements calls)",
        "run_id": "the run that committed the row",
        "committed_at": "when the run committed it (UTC)",
    },
)

CATALOG_COLUMNS_TABLE = _table(
    "catalog_columns",
    "Table and column definitions imported from catalog sources (information_schema.columns "
    "over JDBC or an exported file); the parser resolves SELECT *, unqualified columns and "
    "INSERT without a column list against them.",
    ("source_name", "table_id", "column_name"),
    [
        ("source_name", StringType()),
        ("table_id", StringType()),  # lower-cased table_catalog.table_schema.table_name
        ("table_catalog", StringType()),
        ("table_schema", StringType()),
        ("table_name", StringType()),
        ("column_name", StringType()),
        ("ordinal_position", IntegerType()),
        ("data_type", StringType()),
        ("imported_at", TimestampType()),
    ],
    comments={
        "source_name": "the catalog source the definition came from",
        "table_id": "lower-cased qualified name: table_catalog.table_schema.table_name "
        "(missing parts left out)",
        "column_name": "the column's name as the catalog spells it",
        "ordinal_position": "the column's position in its table (1-based)",
        "data_type": "the column's type as the catalog names it",
        "imported_at": "when the definition was first imported or last changed (UTC)",
    },
)

# graph analytics (lineage_udfs.spark.graph); every row carries its component_id
LINEAGE_NODES = _table(
    "lineage_nodes",
    "One row per table, view or external dataset: degrees, root/leaf, cycle membership, "
    "connected component.",
    ("node",),
    [
        ("node", StringType()),
        ("kind", StringType()),
        ("in_degree", LongType()),
        ("out_degree", LongType()),
        ("is_root", BooleanType()),
        ("is_leaf", BooleanType()),
        ("on_cycle", BooleanType()),
        ("component_id", StringType()),
        ("component_size", LongType()),
    ],
)

LINEAGE_PATHS = _table(
    "lineage_paths",
    "Root-to-leaf table paths (simple paths, at most graph.max_depth hops, at most "
    "graph.max_paths_per_root per root).",
    ("root", "path"),
    [
        ("component_id", StringType()),
        ("root", StringType()),
        ("leaf", StringType()),
        ("path", _STR_ARRAY),
        ("depth", IntegerType()),
        ("truncated", BooleanType()),
    ],
)

_CLOSURE_TRUNCATED = (
    "the ancestor had more descendants than graph.max_closure_per_node: only the nearest are kept"
)

TABLE_CLOSURE = _table(
    "table_closure",
    "Every (ancestor, descendant) table pair within graph.max_depth hops: downstream of X is "
    "ancestor = X, upstream is descendant = X.",
    ("ancestor", "descendant"),
    [
        ("component_id", StringType()),
        ("ancestor", StringType()),
        ("descendant", StringType()),
        ("min_distance", IntegerType()),
        ("truncated", BooleanType()),
    ],
    comments={"truncated": _CLOSURE_TRUNCATED},
)

COLUMN_CLOSURE = _table(
    "column_closure",
    "Every (ancestor, descendant) column pair within graph.max_depth hops, with DIRECT-only "
    "reachability told apart.",
    ("ancestor_table", "ancestor_column", "descendant_table", "descendant_column"),
    [
        ("component_id", StringType()),
        ("ancestor_table", StringType()),
        ("ancestor_column", StringType()),
        ("descendant_table", StringType()),
        ("descendant_column", StringType()),
        ("min_distance", IntegerType()),
        ("direct_min_distance", IntegerType()),
        ("truncated", BooleanType()),
    ],
    comments={"truncated": _CLOSURE_TRUNCATED},
)

COLUMN_TAGS = _table(
    "column_tags",
    "One row per (column, tag): declared (tags file, source export, name rule), carried "
    "downstream over DIRECT column edges, or masked (reached only through a masking "
    "function, where it stops); with the provenance of the row (docs/tags.md).",
    ("table_name", "column_name", "tag"),
    [
        ("table_name", StringType()),
        ("column_name", StringType()),
        ("tag", StringType()),
        ("tag_value", StringType()),
        ("status", StringType()),
        ("depth", IntegerType()),
        ("origin_table", StringType()),
        ("origin_column", StringType()),
        ("via_table", StringType()),
        ("via_column", StringType()),
        ("via_subtype", StringType()),
        ("rule", StringType()),
    ],
    comments={
        "tag_value": "the value declared with the tag at its origin (Snowflake TAG_VALUE …)",
        "status": "declared / propagated / masked (docs/tags.md, 'Conflicts')",
        "depth": "hops from the origin column (0: declared here)",
        "origin_table": "table of the declared column the tag came from",
        "origin_column": "the declared column the tag came from",
        "via_table": "table of the column of the edge the tag came through (null: declared)",
        "via_column": "the column of the edge the tag came through (null: declared)",
        "via_subtype": "subtype of that edge: IDENTITY, TRANSFORMATION, AGGREGATION or MASKED",
        "rule": "the declaration at the origin: column X, source P, pattern G or name rule R",
    },
)

GRAPH_COMPONENTS = _table(
    "graph_components",
    "One row per connected component: signature of its edges (incremental runs recompute the "
    "nodes of components whose signature changed).",
    ("component_id",),
    [
        ("component_id", StringType()),
        ("signature", StringType()),
        ("edge_count", LongType()),
        ("node_count", LongType()),
    ],
)

OPENLINEAGE_EMISSIONS = _table(
    "openlineage_emissions",
    "One row per OpenLineage emission: the queries / parsed_statements versions it covered, "
    "scope and counts; the newest succeeded row is the incremental watermark.",
    ("emission_id",),
    [
        # the newest succeeded row with the same options_digest is the watermark of the next
        # incremental emission (lineage_udfs.spark.openlineage.scope)
        ("emission_id", StringType()),
        ("started_at", TimestampType()),
        ("ended_at", TimestampType()),
        ("scope", StringType()),  # incremental / full
        ("reason", StringType()),  # why full (or why the watermark was held back)
        ("emit_mode", StringType()),
        ("options_digest", StringType()),
        ("queries_from_version", LongType()),  # previous watermark (exclusive); null when full
        ("queries_version", LongType()),  # the watermark: every change up to it was emitted
        ("parsed_statements_from_version", LongType()),
        ("parsed_statements_version", LongType()),
        ("changed_queries", LongType()),
        ("reparsed_statements", LongType()),
        ("rows", LongType()),
        ("skipped", LongType()),
        ("emitted", LongType()),
        ("spooled", LongType()),
        ("overflowed", LongType()),
        ("failed", LongType()),
        ("replayed", LongType()),
        ("status", StringType()),  # succeeded / failed
    ],
    comments={
        "started_at": "when the emission started (UTC)",
        "ended_at": "when the emission ended (UTC)",
        "reason": "why the emission was full (scope all, no watermark, options changed, change "
        "data unavailable) or why its queries watermark was held back",
        "status": "succeeded (watermark) / failed (events rejected or dropped: not a watermark)",
    },
)

RECONCILIATION = _table(
    "lineage_reconciliation",
    "The parser's edges against the warehouse's own lineage record, per query of a source whose "
    "export records it (lineage_udfs.spark.extract.reconcile); a source's rows are replaced on "
    "each run.",
    (
        "source_name",
        "level",
        "query_id",
        "source_table",
        "source_column",
        "target_table",
        "target_column",
    ),
    [
        (name, StringType())
        for name in (
            "source_name",
            "query_id",
            "level",
            "source_table",
            "source_column",
            "target_table",
            "target_column",
            "status",
        )
    ],
    comments={
        "source_name": "the source (sources[].name) whose export the edge was compared with",
        "level": "table / column",
        "status": "agree (both) / parser_only / warehouse_only",
    },
)

# freshness, ownership, usage and expectations (lineage_udfs.spark.activity): rewritten by every
# run of the activity stage (one overwrite commit each); Delta history keeps the past
_WINDOW: list[tuple[str, DataType]] = [
    ("window_start", TimestampType()),
    ("as_of", TimestampType()),
]
_ACTIVITY_COMMENTS = {
    "dataset": "table, view or dataset (canonical name)",
    "column_name": "'' for the dataset itself; a column a write names (column lineage target)",
    "window_start": "start of the window the counts cover (as_of - activity.window_days)",
    "as_of": "the instant the stage computed the row at (activity.as_of)",
}

DATASET_ACTIVITY = _table(
    "dataset_activity",
    "One row per dataset (column_name '') and per column a write names: last successful and "
    "last failed write, writes, writers, last read and readers over the window. Failed writes "
    "never count as freshness.",
    ("dataset", "column_name"),
    [
        ("dataset", StringType()),
        ("column_name", StringType()),
        ("last_write_at", TimestampType()),
        ("last_write_fingerprint", StringType()),
        ("last_write_user", StringType()),
        ("last_write_source_system", StringType()),
        ("last_write_statement_type", StringType()),
        ("last_failed_write_at", TimestampType()),
        ("last_failed_write_fingerprint", StringType()),
        ("last_failed_write_user", StringType()),
        ("writes", LongType()),
        ("failed_writes", LongType()),
        ("writers", LongType()),
        ("last_read_at", TimestampType()),
        ("last_read_user", StringType()),
        ("reads", LongType()),
        ("readers", LongType()),
        *_WINDOW,
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "last_write_at": "end (else start) of the latest successful write",
        "last_write_fingerprint": "statement of the latest successful write",
        "last_write_user": "who ran the latest successful write",
        "last_write_source_system": "system that ran the latest successful write",
        "last_write_statement_type": "CTAS, INSERT, MERGE, ... of the latest successful write",
        "last_failed_write_at": "end (else start) of the latest write whose status says failed "
        "or aborted",
        "last_failed_write_fingerprint": "statement of the latest failed write",
        "last_failed_write_user": "who ran the latest failed write",
        "writes": "successful writes in the window",
        "failed_writes": "failed or aborted writes in the window",
        "writers": "distinct users with a successful write in the window",
        "last_read_at": "start of the latest successful statement reading the dataset (plain "
        "queries with activity.keep_reads, and every statement's sources); null for columns",
        "last_read_user": "who ran the latest read",
        "reads": "successful reads in the window",
        "readers": "distinct users with a read in the window",
    },
)

DATASET_USAGE = _table(
    "dataset_usage",
    "One row per dataset, user and kind (read / write / failed_write): how often and when "
    "last; the writers and readers behind dataset_activity's counts.",
    ("dataset", "user_name", "kind"),
    [
        ("dataset", StringType()),
        ("user_name", StringType()),
        ("kind", StringType()),
        ("count_in_window", LongType()),
        ("first_at", TimestampType()),
        ("last_at", TimestampType()),
        *_WINDOW,
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "user_name": "who ran the statements ('' when the log has no user)",
        "kind": "read / write (succeeded) / failed_write",
        "count_in_window": "statements of this kind by this user in the window",
        "first_at": "the user's first such statement in the log",
        "last_at": "the user's latest such statement in the log",
    },
)

DATASET_OWNERS = _table(
    "dataset_owners",
    "One row per dataset: its owner and which rule gave it (explicit owners file, catalog "
    "owner, else the dominant writer, inferred).",
    ("dataset",),
    [
        ("dataset", StringType()),
        ("owner", StringType()),
        ("contact", StringType()),
        ("rule", StringType()),
        ("evidence", StringType()),
        ("as_of", TimestampType()),
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "owner": "team or user responsible (null: no rule gave one)",
        "contact": "how to reach the owner (explicit rule only)",
        "rule": "explicit / catalog / inferred / none",
        "evidence": "the pattern, the catalog source, or the writer's share of writes",
    },
)

DATASET_EXPECTATIONS = _table(
    "dataset_expectations",
    "One row per dataset (fingerprint '') and per recurring statement writing it: the interval "
    "between successful writes, the expected next write and the status (on_time / late / "
    "stopped / new / irregular).",
    ("dataset", "fingerprint"),
    [
        ("dataset", StringType()),
        ("fingerprint", StringType()),
        ("occurrences", LongType()),
        ("median_interval_s", DoubleType()),
        ("p90_interval_s", DoubleType()),
        ("last_write_at", TimestampType()),
        ("expected_next_at", TimestampType()),
        ("late_after", TimestampType()),
        ("stopped_after", TimestampType()),
        ("status", StringType()),
        ("reason", StringType()),
        *_WINDOW,
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "fingerprint": "'' for the dataset; else the statement whose own cadence the row holds",
        "occurrences": "successful writes in the window_days up to last_write_at",
        "median_interval_s": "median seconds between consecutive successful writes",
        "p90_interval_s": "90th percentile of the seconds between successful writes",
        "last_write_at": "the latest successful write",
        "expected_next_at": "last_write_at + the median interval",
        "late_after": "last_write_at + activity.late_factor x p90",
        "stopped_after": "last_write_at + activity.stopped_factor x p90",
        "status": "on_time / late / stopped / new (fewer than activity.min_occurrences writes) "
        "/ irregular (p90 > activity.irregular_ratio x median)",
        "reason": "the status in words, with the figures",
        "window_start": "start of the cadence window (last_write_at - activity.window_days)",
    },
)

_HOP = StructType(
    [
        StructField("node", StringType(), True),
        StructField("owner", StringType(), True),
        StructField("contact", StringType(), True),
        StructField("rule", StringType(), True),
    ]
)

UPSTREAM_STALENESS = _table(
    "upstream_staleness",
    "One row per dataset and each late or stopped dataset upstream of it (table_closure): "
    "the shortest path to it and the owner of each hop.",
    ("dataset", "upstream"),
    [
        ("dataset", StringType()),
        ("upstream", StringType()),
        ("upstream_status", StringType()),
        ("upstream_last_write_at", TimestampType()),
        ("distance", IntegerType()),
        ("path", _STR_ARRAY),
        ("hops", ArrayType(_HOP)),
        ("as_of", TimestampType()),
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "upstream": "a late or stopped dataset upstream of dataset",
        "upstream_status": "late / stopped (dataset_expectations)",
        "upstream_last_write_at": "the upstream's latest successful write",
        "distance": "hops from upstream to dataset (table_closure.min_distance)",
        "path": "a shortest path from upstream to dataset (ties: smallest names)",
        "hops": "each node of the path with its owner, contact and owner rule",
    },
)

TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        PARSED_STATEMENTS,
        QUERIES,
        TABLE_LINEAGE,
        COLUMN_LINEAGE,
        QUARANTINE,
        LINEAGE_RUNS,
        LINEAGE_NODES,
        LINEAGE_PATHS,
        TABLE_CLOSURE,
        COLUMN_CLOSURE,
        COLUMN_TAGS,
        GRAPH_COMPONENTS,
        OPENLINEAGE_EMISSIONS,
        SOURCE_STATE,
        CATALOG_COLUMNS_TABLE,
        RECONCILIATION,
        DATASET_ACTIVITY,
        DATASET_USAGE,
        DATASET_OWNERS,
        DATASET_EXPECTATIONS,
        UPSTREAM_STALENESS,
    )
}
"""Every Delta table by name, in creation order."""
