"""Event building: golden JSON, schema validity, stable run ids, masking, naming, options."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from cases import (
    CTAS_CATALOG,
    CTAS_EDGES,
    CTAS_PARSED,
    CTAS_QUERY,
    FAILED_PARSED,
    FAILED_QUERY,
    MERGE_EDGES,
    MERGE_PARSED,
    MERGE_QUERY,
    OPTIONS,
    PROC_EDGES,
    PROC_PARSED,
    PROC_QUERY,
    SECRET_LITERALS,
)
from openlineage.client.serde import Serde
from support.ol_schemas import validate_event

from lineage_udfs.emit.events import (
    ParsedStatement,
    build_run_events,
    column_edges_from_dicts,
    parsed_statement_from_dict,
    query_run_from_dict,
    run_id_for,
)
from lineage_udfs.emit.naming import NamingContext, dataset_identity
from lineage_udfs.sources.openlineage import event_row

GOLDENS = Path(__file__).parent / "goldens"
CASES = {
    "ctas": (CTAS_QUERY, CTAS_PARSED, CTAS_EDGES, CTAS_CATALOG),
    "merge": (MERGE_QUERY, MERGE_PARSED, MERGE_EDGES, None),
    "failed_parse": (FAILED_QUERY, FAILED_PARSED, (), None),
    "procedure": (PROC_QUERY, PROC_PARSED, PROC_EDGES, None),
}


def _events(name: str) -> list[dict]:
    query, parsed, edges, catalog = CASES[name]
    built = build_run_events(query, parsed, edges, options=OPTIONS, catalog=catalog)
    return [json.loads(Serde.to_json(e)) for e in built]


@pytest.mark.parametrize("name", sorted(CASES))
def test_build_run_events_matches_golden(name: str) -> None:
    actual = json.dumps(_events(name), indent=2, sort_keys=True) + "\n"
    golden = GOLDENS / f"{name}.json"
    if not golden.exists():
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual)
        pytest.fail(f"golden {golden.name} created; review it and re-run")
    assert actual == golden.read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_build_run_events_validate_against_openlineage_schemas(name: str) -> None:
    checked = set()
    for event in _events(name):
        checked.update(validate_event(event))
    assert {"sql", "jobType"} <= checked


def test_build_run_events_facets_cover_every_stored_schema() -> None:
    checked = set()
    for name in CASES:
        for event in _events(name):
            checked.update(validate_event(event))
    assert checked == {"sql", "jobType", "columnLineage", "schema", "extractionError", "parent"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_build_run_events_contain_no_raw_literal(name: str) -> None:
    text = json.dumps(_events(name))
    for literal in SECRET_LITERALS:
        assert literal not in text


def test_build_run_events_ctas_is_start_then_complete_with_stable_run_id() -> None:
    first, second = _events("ctas"), _events("ctas")
    assert [e["eventType"] for e in first] == ["START", "COMPLETE"]
    assert first[0]["eventTime"] == "2026-03-02T08:00:00.000Z"
    assert first[1]["eventTime"] == "2026-03-02T08:00:42.123Z"
    assert first[0]["run"]["runId"] == first[1]["run"]["runId"] == second[0]["run"]["runId"]
    assert first[0]["job"]["name"] == "ctas.analytics.mart.daily.fp_ctas_0001"
    assert first[1]["outputs"][0]["name"] == "ANALYTICS.MART.DAILY"
    assert first[1]["outputs"][0]["namespace"] == "snowflake://acme-prod"


def test_build_run_events_merge_masked_and_indirect_edges() -> None:
    complete = _events("merge")[-1]
    assert complete["eventType"] == "FAIL"  # the log said FAILED
    facet = complete["outputs"][0]["facets"]["columnLineage"]
    email = facet["fields"]["email_hash"]["inputFields"]
    assert email[0]["transformations"] == [
        {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True}
    ]
    wide = {(f["field"], f["transformations"][0]["subtype"]) for f in facet["dataset"]}
    assert wide == {("id", "JOIN"), ("tier", "FILTER")}
    tier_subtypes = {
        t["subtype"] for f in facet["fields"]["tier"]["inputFields"] for t in f["transformations"]
    }
    assert tier_subtypes == {"IDENTITY", "CONDITIONAL"}  # CONDITIONAL stays per field


def test_build_run_events_failed_parse_has_extraction_error() -> None:
    complete = _events("failed_parse")[-1]
    error = complete["run"]["facets"]["extractionError"]
    assert error["failedTasks"] == 1
    assert error["errors"][0]["errorMessage"].startswith("SYNTAX: ")
    assert complete["eventType"] == "COMPLETE"


def test_build_run_events_procedure_children_link_to_parent_run() -> None:
    events = _events("procedure")
    parent_id = events[0]["run"]["runId"]
    assert events[0]["job"]["name"] == events[-1]["job"]["name"] == "main.etl.load_sales"
    children = events[1:-1]
    assert len(children) == 6
    for child in children:
        parent = child["run"]["facets"]["parent"]
        assert parent["run"]["runId"] == parent_id
        assert parent["job"]["name"] == "main.etl.load_sales"
        assert child["run"]["runId"] != parent_id
    assert children[0]["job"]["name"] == "main.etl.load_sales.000_create_view"
    assert "extractionError" in children[-1]["run"]["facets"]


def test_build_run_events_select_only_when_configured() -> None:
    select = ParsedStatement(
        fingerprint="fp_sel",
        statement_type="SELECT",
        masked_sql="SELECT a FROM t WHERE b = ?",
        status="ok",
        sources=("t",),
    )
    assert build_run_events(CTAS_QUERY, select, options=OPTIONS) == []
    included = build_run_events(CTAS_QUERY, select, options=replace(OPTIONS, include_selects=True))
    assert [e.eventType.value for e in included] == ["START", "COMPLETE"]


def test_run_id_for_per_statement_day_ignores_time_of_day() -> None:
    day_a = replace(CTAS_QUERY, query_id="fp_ctas_0001@2026-03-02")
    day_b = replace(day_a, start_time=CTAS_QUERY.end_time)
    assert run_id_for(day_a, "per_statement_day") == run_id_for(day_b, "per_statement_day")
    assert run_id_for(day_a) != run_id_for(replace(day_a, query_id="other"))


def test_dict_adapters_round_trip_delta_shaped_rows() -> None:
    query = query_run_from_dict(
        {
            **CTAS_QUERY.__class__.__dict__.get("x", {}),
            **{
                "query_id": "q",
                "fingerprint": "f",
                "start_time": None,
                "end_time": None,
                "extra": 1,
            },
        }
    )
    assert query.query_id == "q"
    parsed = parsed_statement_from_dict(
        {
            "fingerprint": "f",
            "statement_type": "SCRIPT",
            "masked_sql": "x",
            "status": "ok",
            "sources": ["a", None],
            "targets": ["b"],
            "statements": [
                {
                    "index": 1,
                    "statement_type": "INSERT",
                    "status": "ok",
                    "sources": ["a"],
                    "targets": ["b"],
                },
                {"index": 0, "statement_type": "DELETE", "status": "ok"},
            ],
        }
    )
    assert parsed.sources == ("a",)
    assert [s.index for s in parsed.statements] == [0, 1]
    edges = column_edges_from_dicts(
        [
            {
                "source_table": "a",
                "source_column": "x",
                "target_table": "b",
                "target_column": "y",
                "transformation_type": "DIRECT",
                "transformation_subtype": "IDENTITY",
            }
        ]
        * 2
    )
    assert len(edges) == 1


@pytest.mark.parametrize(
    ("table", "source", "expected"),
    [
        ("sales.orders", "snowflake://acme-prod", ("snowflake://acme-prod", "DB.SALES.ORDERS")),
        ("orders", "postgres://db1:5432", ("postgres://db1:5432", "db.sch.orders")),
        ("orders", "postgres://db1", ("postgres://db1:5432", "db.sch.orders")),
        ("p.d.t", "bigquery", ("bigquery", "p.d.t")),
        ("t", "hive://meta:9083", ("hive://meta:9083", "sch.t")),
        ("main.s.t", "databricks://adb-1.net", ("databricks://adb-1.net", "main.s.t")),
        ("s3://bucket/raw/a.csv", "snowflake://acme-prod", ("s3://bucket", "raw/a.csv")),
        ("/data/in.parquet", None, ("file", "/data/in.parquet")),
        ("@stage/path", "snowflake://acme-prod", ("snowflake://acme-prod", "@stage/path")),
        ("x.y", None, ("default-ns", "x.y")),
    ],
)
def test_dataset_identity_follows_naming_spec(
    table: str, source: str | None, expected: tuple[str, str]
) -> None:
    ctx = NamingContext(source, "default-ns", "db", "sch")
    assert dataset_identity(table, ctx) == expected


def test_build_run_events_indirect_lineage_fields_puts_every_edge_under_its_column() -> None:
    query, parsed, edges, _ = CASES["merge"]
    options = replace(OPTIONS, indirect_lineage="fields")
    built = build_run_events(query, parsed, edges, options=options)
    facet = json.loads(Serde.to_json(built[-1]))["outputs"][0]["facets"]["columnLineage"]
    per_field = {
        (column, f["field"], t["type"], t["subtype"])
        for column, spec in facet["fields"].items()
        for f in spec["inputFields"]
        for t in f["transformations"]
    }
    expected = {
        (e.target_column, e.source_column, e.transformation_type, e.transformation_subtype)
        for e in edges
    }
    masked = {(c, s, k, "TRANSFORMATION") for c, s, k, sub in expected if sub == "MASKED"}
    assert per_field == {x for x in expected if x[3] != "MASKED"} | masked
    assert facet["dataset"] == []
    # the deprecated field-level summary Marquez reads names every input's transformations
    for spec in facet["fields"].values():
        described = spec["transformationDescription"].split("; ")
        assert len(described) == len(spec["inputFields"])
    # and the output declares the columns the edges write (Marquez needs them for the edges)
    output = json.loads(Serde.to_json(built[-1]))["outputs"][0]
    assert {f["name"] for f in output["facets"]["schema"]["fields"]} == set(facet["fields"])


def test_build_run_events_list_each_datasets_other_names_as_symlinks() -> None:
    symlinks = {
        "analytics.raw.orders": ("s3://lake/raw/orders", "raw.orders", "RAW.ORDERS"),
        "analytics.mart.daily": ("file:/wh/mart/daily",),
        "elsewhere.t": ("file:/x",),  # not named by the statement
    }
    built = build_run_events(
        CTAS_QUERY, CTAS_PARSED, CTAS_EDGES, options=OPTIONS, catalog=CTAS_CATALOG,
        symlinks=symlinks,
    )  # fmt: skip
    complete = json.loads(Serde.to_json(built[-1]))
    assert "symlinks" in validate_event(complete)
    facets = {
        d["name"]: [
            (i["namespace"], i["name"], i["type"]) for i in d["facets"]["symlinks"]["identifiers"]
        ]
        for d in complete["inputs"] + complete["outputs"]
    }
    # raw.orders and RAW.ORDERS are the dataset's own name once qualified: left out
    assert facets == {
        "ANALYTICS.RAW.ORDERS": [("s3://lake", "raw/orders", "LOCATION")],
        "ANALYTICS.MART.DAILY": [("file", "/wh/mart/daily", "LOCATION")],
    }
    # what the openlineage source reads back: the same links
    row = event_row(json.dumps(complete))
    assert row["reason"] is None
    assert sorted((s["node"], s["alias"], s["type"]) for s in row["symlinks"]) == sorted(
        [
            ("ANALYTICS.RAW.ORDERS", "s3://lake/raw/orders", "LOCATION"),
            ("ANALYTICS.MART.DAILY", "file:/wh/mart/daily", "LOCATION"),
        ]
    )
    # nothing else changes
    for event in (json.loads(Serde.to_json(e)) for e in built):
        for named in event["inputs"] + event["outputs"]:
            named["facets"].pop("symlinks", None)
        assert event in _events("ctas")
