"""The engine harness's pure parts: statement splitting, kinds, event reading (no Spark)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import engine_diff


def test_split_respects_strings_and_comments() -> None:
    sql = "CREATE TEMP VIEW v AS SELECT 'a;b' AS x; -- c;d\nINSERT INTO t SELECT x FROM v;"
    assert engine_diff.split_statements(sql) == [
        "CREATE TEMP VIEW v AS SELECT 'a;b' AS x",
        "-- c;d\nINSERT INTO t SELECT x FROM v",
    ]


def test_kinds() -> None:
    k = engine_diff.kind_of
    assert k("CREATE TABLE a.b AS SELECT 1 AS x") == "CTAS"
    assert k("INSERT OVERWRITE TABLE t SELECT 1") == "INSERT_OVERWRITE"
    assert k("WITH c AS (SELECT 1 x) INSERT INTO t SELECT x FROM c") == "INSERT"
    assert k("CREATE OR REPLACE VIEW v AS SELECT 1 x") == "CREATE_VIEW"
    assert k("/* job */ CACHE TABLE c AS SELECT 1") == "CACHE"
    assert k("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE") == "MERGE"
    assert k("SELECT 1; SELECT 2") == "SCRIPT"


def _ds(name: str, table: str | None = None, **facets: object) -> dict[str, object]:
    f = dict(facets)
    if table:
        f["symlinks"] = {"identifiers": [{"namespace": "file:/w", "name": table, "type": "TABLE"}]}
    return {"namespace": "file", "name": name, "facets": f}


def test_engine_lineage_maps_paths_to_tables() -> None:
    cl = {
        "fields": {
            "total": {
                "inputFields": [
                    {
                        "namespace": "file",
                        "name": "/w/raw.db/orders",
                        "field": "Amount",
                        "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}],
                    },
                    {
                        "namespace": "file",
                        "name": "/w/other",
                        "field": "k",
                        "transformations": [{"type": "INDIRECT", "subtype": "WINDOW"}],
                    },
                ]
            }
        },
        "dataset": [
            {
                "namespace": "file",
                "name": "/w/raw.db/orders",
                "field": "status",
                "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
            }
        ],
    }
    event = {
        "eventType": "COMPLETE",
        "inputs": [_ds("/w/raw.db/orders", "raw.orders")],
        "outputs": [_ds("/w/mart.db/daily", "mart.daily", columnLineage=cl)],
    }
    lineage, facet = engine_diff.engine_lineage([event], "default", "/w")
    assert facet
    assert lineage.sources == {"raw.orders"}
    assert lineage.targets == {"mart.daily"}
    assert lineage.direct == {("raw.orders", "amount", "mart.daily", "total"): {"AGGREGATION"}}
    assert lineage.indirect == {
        ("default.other", "k", "mart.daily", "WINDOW"),  # warehouse layout, default database
        ("raw.orders", "status", "mart.daily", "FILTER"),
    }


def test_no_event_no_lineage() -> None:
    lineage, facet = engine_diff.engine_lineage([], "default", "/w")
    assert not facet
    assert not lineage.sources and not lineage.targets and not lineage.direct


def test_qualify() -> None:
    assert engine_diff.qualify("T", "tpc") == "tpc.t"
    assert engine_diff.qualify("spark_catalog.Db.t", "x") == "db.t"
    assert engine_diff.qualify("`a`.`b`", "x") == "a.b"
