"""Declared Spark schemas: the canonical query log, the parse UDF's return type and one
:class:`~lineage_udfs.spark.storage.table_spec.TableSpec` per Delta table (the governance
tables in ``governance_schemas``); :data:`TABLES` names them all.

The query log and the parse-result struct are derived from the records of
``lineage_udfs.core.records``; so are the parse-result columns of ``parsed_statements``. Writers
always ``select`` a spec's columns in its order; nothing relies on inference.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    TimestampType,
)

from lineage_udfs.core.records import ParseRecord, QueryLogRow
from lineage_udfs.sources.openlineage_fields import EVENT_FIELDS
from lineage_udfs.spark.storage.governance_schemas import (
    COLUMN_TAGS,
    DATASET_ACTIVITY,
    DATASET_EXPECTATIONS,
    DATASET_OWNERS,
    DATASET_USAGE,
    UPSTREAM_STALENESS,
)
from lineage_udfs.spark.storage.table_spec import (
    TableSpec,
    record_schema,
)
from lineage_udfs.spark.storage.table_spec import declare_table as _table

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

OPENLINEAGE_EVENTS = _table(
    "openlineage_events",
    "One row per OpenLineage RunEvent read from an openlineage source (lineage_udfs.sources."
    "openlineage): the lineage it gives; the edges of its job are derived from these rows.",
    ("event_id",),
    [("event_id", StringType()), ("source_name", StringType())]
    + [(n, t) for n, t in EVENT_FIELDS if n != "event_id"]
    + [("source_file", StringType()), ("run_id_read", StringType())],
    comments={
        "event_id": "sha256 of the event's run id, type, time and job",
        "source_name": "the openlineage source (sources[].name) the event was read from",
        "run_id": "the OpenLineage run id of the event",
        "job": "the job's namespace/name",
        "job_namespace": "the job's OpenLineage namespace",
        "job_name": "the job's OpenLineage name",
        "event_type": "START / RUNNING / COMPLETE / FAIL / ABORT / OTHER",
        "event_time": "the event's eventTime (UTC)",
        "producer": "the producer as edge_kind: openlineage:<integration> (spark, dbt, ...)",
        "table_edges": "table edges the event gives (COMPLETE only): every input to every output",
        "column_edges": "column edges of the outputs' columnLineage facets",
        "symlinks": "the datasets' symlinks facets: node is also known as alias",
        "datasets": "every dataset the event names, as graph nodes",
        "source_file": "the file the event was read from",
        "run_id_read": "the extraction run that read the event first",
    },
)

DATASET_ALIASES = _table(
    "dataset_aliases",
    "Names of one dataset: alias -> canonical, with the evidence, its confidence and the "
    "steward's decision (lineage_udfs.core.identity); the graph merges the nodes of accepted "
    "aliases.",
    ("alias", "canonical", "evidence"),
    [
        ("alias", StringType()),
        ("canonical", StringType()),
        ("evidence", StringType()),
        ("detail", StringType()),
        ("confidence", DoubleType()),
        ("status", StringType()),
        ("first_seen", TimestampType()),
    ],
    comments={
        "alias": "a name of the dataset as some producer or query spells it",
        "canonical": "the name the graph uses for it",
        "evidence": "why: symlink / catalog_location / case / default_schema / storage_scheme",
        "detail": "the evidence in words (which facet, table, rule or query default)",
        "confidence": "0..1: how sure the evidence makes the link",
        "status": "accepted (by the steward file) / rejected (by it) / proposed",
        "first_seen": "when the link was first derived (the run's start, UTC)",
    },
)

OPENLINEAGE_SYMLINKS = _table(
    "openlineage_symlinks",
    "The other names each dataset's emitted OpenLineage events listed in their symlinks facet "
    "(dataset_aliases links that hold); an emission re-emits the statements of a dataset whose "
    "names changed since.",
    ("dataset",),
    [
        ("dataset", StringType()),
        ("symlinks", _STR_ARRAY),
        ("emitted_at", TimestampType()),
    ],
    comments={
        "dataset": "a dataset as the lineage tables name it",
        "symlinks": "its other names, as the last successful emission listed them",
        "emitted_at": "when an emission first listed these names (UTC)",
    },
)

OPENLINEAGE_CLAIM = _table(
    "openlineage_claim",
    "The job sending events from the warehouse, or writing a batch into it, now (one row): an "
    "emission and an extraction's write stage claim it first, so that two emissions never send "
    "the same events twice and an emission never reads a half-written batch.",
    ("claim",),
    [
        ("claim", StringType()),
        ("holder", StringType()),
        ("purpose", StringType()),
        ("host", StringType()),
        ("application_id", StringType()),
        ("claimed_at", TimestampType()),
        ("expires_at", TimestampType()),
        ("released_at", TimestampType()),
    ],
    comments={
        "claim": "what is claimed: warehouse (one row)",
        "holder": "the id of the job holding (or last holding) the claim",
        "purpose": "emission / extraction write",
        "host": "the driver's host name",
        "application_id": "the Spark application of that driver",
        "claimed_at": "when the holder claimed it (UTC)",
        "expires_at": "when the claim lapses unless renewed (the holder renews it while working)",
        "released_at": "when the holder released it; null while held",
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
        OPENLINEAGE_EVENTS,
        DATASET_ALIASES,
        OPENLINEAGE_SYMLINKS,
        OPENLINEAGE_CLAIM,
    )
}
"""Every Delta table by name, in creation order."""
