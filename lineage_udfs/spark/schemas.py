"""Declared Spark schemas: the canonical query log, the parse UDF's return type and every Delta
table. Writers always ``select`` these columns in this order; nothing relies on inference."""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def _s(*fields: tuple[str, object]) -> StructType:
    return StructType([StructField(name, dtype, True) for name, dtype in fields])  # type: ignore[arg-type]


_STR_ARRAY = ArrayType(StringType())

# --- canonical query-log schema (what every reader produces; DESIGN.md) -----------------------
QUERY_LOG_SCHEMA = _s(
    ("query_id", StringType()),
    ("query_text", StringType()),
    ("dialect", StringType()),
    ("default_database", StringType()),
    ("default_schema", StringType()),
    ("user_name", StringType()),
    ("start_time", TimestampType()),
    ("end_time", TimestampType()),
    ("status", StringType()),
    ("source_system", StringType()),
    ("object_kind", StringType()),
    ("object_name", StringType()),
)

# --- the parse UDF's return struct (mirrors lineage_udfs.core.records.PARSE_RESULT_FIELDS) ----
TABLE_EDGE_STRUCT = _s(("source_table", StringType()), ("target_table", StringType()))
COLUMN_EDGE_STRUCT = _s(
    ("source_table", StringType()),
    ("source_column", StringType()),
    ("target_table", StringType()),
    ("target_column", StringType()),
    ("transformation_type", StringType()),
    ("transformation_subtype", StringType()),
)
STATEMENT_STRUCT = _s(
    ("index", IntegerType()),
    ("statement_type", StringType()),
    ("status", StringType()),
    ("sources", _STR_ARRAY),
    ("targets", _STR_ARRAY),
    ("error_kind", StringType()),
    ("error", StringType()),
)
PARSE_RESULT_SCHEMA = _s(
    ("statement_type", StringType()),
    ("parser", StringType()),
    ("status", StringType()),
    ("error_kind", StringType()),
    ("error", StringType()),
    ("parse_ms", DoubleType()),
    ("masked_sql", StringType()),
    ("sources", _STR_ARRAY),
    ("targets", _STR_ARRAY),
    ("intermediates", _STR_ARRAY),
    ("table_edges", ArrayType(TABLE_EDGE_STRUCT)),
    ("column_edges", ArrayType(COLUMN_EDGE_STRUCT)),
    ("statements", ArrayType(STATEMENT_STRUCT)),
)
UDF_RESULT_SCHEMA = StructType([f for f in PARSE_RESULT_SCHEMA.fields if f.name != "masked_sql"])
"""What the parse UDF returns: PARSE_RESULT_SCHEMA without ``masked_sql``. The masked text is a
column of the statements already (masked by Spark expressions); it does not travel to the
Python worker and back."""

# --- Delta tables (DESIGN.md "Lineage tables") -----------------------------------------------
PARSED_STATEMENTS_SCHEMA = _s(
    ("fingerprint", StringType()),
    ("dialect", StringType()),
    ("statement_type", StringType()),
    ("masked_sql", StringType()),
    ("parser", StringType()),
    ("parser_version", StringType()),
    ("status", StringType()),
    ("error_kind", StringType()),
    ("error", StringType()),
    ("parse_ms", DoubleType()),
    ("sources", _STR_ARRAY),
    ("targets", _STR_ARRAY),
    ("intermediates", _STR_ARRAY),
    ("table_edges", ArrayType(TABLE_EDGE_STRUCT)),
    ("column_edges", ArrayType(COLUMN_EDGE_STRUCT)),
    ("statements", ArrayType(STATEMENT_STRUCT)),
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
)

QUERIES_SCHEMA = _s(
    # one row per log row that was lineage-relevant: the log's metadata without its text
    ("query_id", StringType()),
    ("fingerprint", StringType()),
    ("dialect", StringType()),
    ("default_database", StringType()),
    ("default_schema", StringType()),
    ("user_name", StringType()),
    ("start_time", TimestampType()),
    ("end_time", TimestampType()),
    ("status", StringType()),
    ("source_system", StringType()),
    ("object_kind", StringType()),
    ("object_name", StringType()),
)

TABLE_LINEAGE_SCHEMA = _s(
    ("source_table", StringType()),
    ("target_table", StringType()),
    ("edge_kind", StringType()),  # query / view / procedure / external
    ("fingerprint", StringType()),
    ("object_name", StringType()),
    ("source_system", StringType()),
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
)

COLUMN_LINEAGE_SCHEMA = _s(
    ("source_table", StringType()),
    ("source_column", StringType()),
    ("target_table", StringType()),
    ("target_column", StringType()),
    ("transformation_type", StringType()),
    ("transformation_subtype", StringType()),
    ("edge_kind", StringType()),
    ("fingerprint", StringType()),
    ("object_name", StringType()),
    ("source_system", StringType()),
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
)

QUARANTINE_SCHEMA = _s(
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
)

LINEAGE_RUNS_SCHEMA = _s(
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
)

OPENLINEAGE_EMISSIONS_SCHEMA = _s(
    # one row per OpenLineage emission; the newest succeeded row with the same options_digest is
    # the watermark of the next incremental emission (lineage_udfs.spark.emission_scope)
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
)


# --- table and column comments (applied when the tables are created) -------------------------
# --- graph analytics (lineage_udfs.spark.graph); every row carries its component_id ----------
LINEAGE_NODES_SCHEMA = _s(
    ("node", StringType()),
    ("kind", StringType()),
    ("in_degree", LongType()),
    ("out_degree", LongType()),
    ("is_root", BooleanType()),
    ("is_leaf", BooleanType()),
    ("on_cycle", BooleanType()),
    ("component_id", StringType()),
    ("component_size", LongType()),
)

LINEAGE_PATHS_SCHEMA = _s(
    ("component_id", StringType()),
    ("root", StringType()),
    ("leaf", StringType()),
    ("path", _STR_ARRAY),
    ("depth", IntegerType()),
    ("truncated", BooleanType()),
)

TABLE_CLOSURE_SCHEMA = _s(
    ("component_id", StringType()),
    ("ancestor", StringType()),
    ("descendant", StringType()),
    ("min_distance", IntegerType()),
)

COLUMN_CLOSURE_SCHEMA = _s(
    ("component_id", StringType()),
    ("ancestor_table", StringType()),
    ("ancestor_column", StringType()),
    ("descendant_table", StringType()),
    ("descendant_column", StringType()),
    ("min_distance", IntegerType()),
    ("direct_min_distance", IntegerType()),
)

GRAPH_COMPONENTS_SCHEMA = _s(
    ("component_id", StringType()),
    ("signature", StringType()),
    ("edge_count", LongType()),
    ("node_count", LongType()),
)

TABLE_SCHEMAS: dict[str, StructType] = {
    "parsed_statements": PARSED_STATEMENTS_SCHEMA,
    "queries": QUERIES_SCHEMA,
    "table_lineage": TABLE_LINEAGE_SCHEMA,
    "column_lineage": COLUMN_LINEAGE_SCHEMA,
    "quarantine": QUARANTINE_SCHEMA,
    "lineage_runs": LINEAGE_RUNS_SCHEMA,
    "lineage_nodes": LINEAGE_NODES_SCHEMA,
    "lineage_paths": LINEAGE_PATHS_SCHEMA,
    "table_closure": TABLE_CLOSURE_SCHEMA,
    "column_closure": COLUMN_CLOSURE_SCHEMA,
    "graph_components": GRAPH_COMPONENTS_SCHEMA,
    "openlineage_emissions": OPENLINEAGE_EMISSIONS_SCHEMA,
}

TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "parsed_statements": ("fingerprint",),
    "queries": ("query_id",),
    "table_lineage": ("source_table", "target_table", "edge_kind", "fingerprint"),
    "column_lineage": (
        "source_table",
        "source_column",
        "target_table",
        "target_column",
        "transformation_type",
        "transformation_subtype",
        "edge_kind",
        "fingerprint",
    ),
    "quarantine": ("quarantine_id",),
    "lineage_runs": ("run_id",),
    "lineage_nodes": ("node",),
    "lineage_paths": ("root", "path"),
    "table_closure": ("ancestor", "descendant"),
    "column_closure": (
        "ancestor_table",
        "ancestor_column",
        "descendant_table",
        "descendant_column",
    ),
    "graph_components": ("component_id",),
    "openlineage_emissions": ("emission_id",),
}
"""Natural (MERGE) keys."""

CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
TABLE_PROPERTIES: dict[str, dict[str, str]] = {
    # Incremental OpenLineage emission reads what changed since its watermark from the change
    # data feed of these two tables (new / updated log rows, re-parsed statements) instead of
    # scanning all history. LineageTables.ensure() sets the property on new and existing tables.
    "queries": {CHANGE_DATA_FEED: "true"},
    "parsed_statements": {CHANGE_DATA_FEED: "true"},
}
"""Delta table properties, per table (applied on creation and to existing tables)."""

TABLE_COMMENTS: dict[str, str] = {
    "parsed_statements": "One row per distinct statement fingerprint: parse outcome and usage.",
    "queries": "One row per lineage-relevant log row: its metadata (never its text).",
    "table_lineage": "Table-level lineage edges, per statement fingerprint (query lineage "
    "accumulates; a view or procedure keeps only its newest definition's edges).",
    "column_lineage": "Column-level lineage edges with OpenLineage transformation type/subtype.",
    "quarantine": "Rows that could not be loaded or parsed, with the reason (insert-only).",
    "lineage_runs": "One row per extraction run: config, counts and timings.",
    "lineage_nodes": "One row per table, view or external dataset: degrees, root/leaf, cycle "
    "membership, connected component.",
    "lineage_paths": "Root-to-leaf table paths (simple paths, at most graph.max_depth hops, at "
    "most graph.max_paths_per_root per root).",
    "table_closure": "Every (ancestor, descendant) table pair within graph.max_depth hops: "
    "downstream of X is ancestor = X, upstream is descendant = X.",
    "column_closure": "Every (ancestor, descendant) column pair within graph.max_depth hops, "
    "with DIRECT-only reachability told apart.",
    "graph_components": "One row per connected component: signature of its edges (incremental "
    "runs recompute only components whose signature changed).",
    "openlineage_emissions": "One row per OpenLineage emission: the queries / parsed_statements "
    "versions it covered, scope and counts; the newest succeeded row is the incremental "
    "watermark.",
}

_COMMON_COMMENTS: dict[str, str] = {
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
    "on_cycle": "the node reaches itself within graph.max_depth hops (or has a self-loop)",
    "component_id": "connected component (its smallest node name)",
    "component_size": "number of nodes in the component",
    "root": "first node of the path (a root)",
    "leaf": "last node of the path (a leaf, or where a cycle or the depth limit stopped it)",
    "path": "node names from root to leaf",
    "depth": "number of edges on the path",
    "truncated": "the path was cut at max_depth, or its root had more paths than the cap",
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

_TABLE_COLUMN_COMMENTS: dict[str, dict[str, str]] = {
    "openlineage_emissions": {
        "started_at": "when the emission started (UTC)",
        "ended_at": "when the emission ended (UTC)",
        "reason": "why the emission was full (scope all, no watermark, options changed, change "
        "data unavailable) or why its queries watermark was held back",
        "status": "succeeded (watermark) / failed (events rejected or dropped: not a watermark)",
    },
}
"""Comments that differ from the common one for a column of the same name."""

COLUMN_COMMENTS: dict[str, dict[str, str]] = {
    table: {
        f.name: _TABLE_COLUMN_COMMENTS.get(table, {}).get(f.name)
        or _COMMON_COMMENTS.get(f.name, f.name.replace("_", " "))
        for f in schema
    }
    for table, schema in TABLE_SCHEMAS.items()
}
"""Per table, per column comment."""
