"""The walkthrough of docs/freshness.md, answered by the product on the revenue sample
(data/freshness, conf/freshness.yaml): the whole job (extraction, graph stage, activity stage)
on a real SparkSession with Delta and GraphFrames, then the answers read back with Spark and
with the ``lineage`` command's readers (delta-rs, no JVM)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.cli import activity
from lineage_udfs.cli.store import LineageStore, table_locations
from lineage_udfs.core.errors import ConfigError
from lineage_udfs.settings import ActivitySettings, JobSettings, load_settings
from lineage_udfs.spark.activity.stage import (
    STATE_KEY,
    _still_valid,
    load_owner_rules,
    run_activity_stage,
)
from lineage_udfs.spark.pipeline import ExtractOutcome, run_extract
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]
REPORT = "reports.rpt_monthly_revenue"
FX = "raw.exchange_rates"
LINEAGE = Path(sys.executable).with_name("lineage")

pytestmark = pytest.mark.usefixtures("session_confs_restored")


def _settings(base_path: Path) -> JobSettings:
    settings = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "freshness.yaml"])
    sources = [s.model_copy(update={"path": str(ROOT / s.path)}) for s in settings.sources]
    sink = settings.sink.model_copy(update={"base_path": str(base_path)})
    activity_settings = settings.activity.model_copy(
        update={
            "owners_file": str(ROOT / "data" / "freshness" / "owners.yaml"),
            "catalog_owners": str(ROOT / "data" / "freshness" / "catalog_tables.csv"),
        }
    )
    return settings.model_copy(
        update={"sources": sources, "sink": sink, "activity": activity_settings}
    )


@pytest.fixture(scope="module")
def warehouse(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[JobSettings, ExtractOutcome]:
    settings = _settings(tmp_path_factory.mktemp("freshness"))
    return settings, run_extract(spark, settings)


@pytest.fixture(scope="module")
def store(warehouse: tuple[JobSettings, ExtractOutcome]) -> LineageStore:
    return LineageStore(table_locations(warehouse[0].sink))


@pytest.fixture
def session_confs_restored(spark: SparkSession) -> Iterator[None]:
    before = dict(spark.conf.getAll)
    yield
    for key, value in dict(spark.conf.getAll).items():
        if spark.conf.isModifiable(key) and before.get(key) != value:
            if key in before:
                spark.conf.set(key, before[key])
            else:
                spark.conf.unset(key)


def test_the_run_keeps_reads_and_reports_the_stopped_load(
    warehouse: tuple[JobSettings, ExtractOutcome],
) -> None:
    _, outcome = warehouse
    assert outcome.run.status == "succeeded"
    # the plain queries (BI tool, analysts) are kept and parsed for their reads: only the
    # SHOW TABLES rows are not relevant
    assert outcome.run.rows_not_relevant == 25
    assert outcome.activity is not None
    assert (outcome.activity.late, outcome.activity.stopped) == (0, 1)
    assert outcome.activity.as_of.startswith("2024-06-04 23:05:00")


Warehouse = tuple[JobSettings, ExtractOutcome]


def test_every_upstream_root_cause_of_the_report(spark: SparkSession, warehouse: Warehouse) -> None:
    tables = LineageTables(spark, warehouse[0].sink)
    upstream = {
        r["ancestor"]: r["min_distance"]
        for r in tables.read("table_closure").where(F.col("descendant") == REPORT).collect()
    }
    assert upstream == {
        "marts.fct_payments": 1,
        "marts.fct_deals": 1,
        "staging.stg_payments": 2,
        "staging.stg_exchange_rates": 2,
        "staging.stg_deals": 2,
        "raw.stripe_payments": 3,
        "raw.exchange_rates": 3,
        "raw.salesforce_deals": 3,
    }
    roots = {r["node"] for r in tables.read("lineage_nodes").where("is_root").collect()}
    assert roots == {"raw.stripe_payments", "raw.exchange_rates", "raw.salesforce_deals"}


def test_a_bug_in_stg_exchange_rates_reaches_amount_usd_only(
    spark: SparkSession, warehouse: Warehouse, store: LineageStore
) -> None:
    tables = LineageTables(spark, warehouse[0].sink)
    closure = tables.read("column_closure").where(
        F.col("ancestor_table") == "staging.stg_exchange_rates"
    )
    direct = {
        (r["descendant_table"], r["descendant_column"])
        for r in closure.where(F.col("direct_min_distance").isNotNull()).collect()
    }
    assert direct == {
        ("marts.fct_payments", "amount_usd"),
        ("reports.rpt_monthly_revenue", "payments_usd"),
    }
    # amount_local depends on the rates only through the join (INDIRECT), never by value
    indirect = {
        r["descendant_column"]
        for r in closure.where(F.col("descendant_table") == "marts.fct_payments").collect()
    }
    assert "amount_local" in indirect and ("marts.fct_payments", "amount_local") not in direct
    # who reads what the bug reaches
    fct_readers = {r["user_name"] for r in activity.readers_of(store, "marts.fct_payments", 7)}
    assert fct_readers == {"ana", "bo", "chen", "dbt_prod"}
    report_readers = activity.readers_of(store, REPORT, 7)
    assert [r["user_name"] for r in report_readers] == ["looker"]
    assert report_readers[0]["reads_in_window"] == 28 * 6


def test_failed_loads_are_failed_writes_never_freshness(store: LineageStore) -> None:
    row = next(
        r for r in store.rows("dataset_activity") if r["dataset"] == FX and r["column_name"] == ""
    )
    assert row["last_write_at"] == datetime(2024, 6, 1, 1, 5, 12, tzinfo=UTC)
    assert row["last_failed_write_at"] == datetime(2024, 6, 4, 1, 0, 12, tzinfo=UTC)
    assert (row["failed_writes"], row["last_write_user"]) == (3, "airflow_fx")
    assert row["last_read_user"] == "dbt_prod"  # stg_exchange_rates still reads the stale rates
    # a write that names columns gives its columns' activity too
    columns = {
        r["column_name"]
        for r in store.rows("dataset_activity")
        if r["dataset"] == "marts.fct_payments"
    }
    assert columns == {"", "payment_id", "paid_on", "currency", "amount_local", "amount_usd"}


def test_cadence_and_status(store: LineageStore) -> None:
    table_level = {
        r["dataset"]: r for r in store.rows("dataset_expectations") if r["fingerprint"] == ""
    }
    assert {d: r["status"] for d, r in table_level.items() if r["status"] != "on_time"} == {
        FX: "stopped"
    }
    fx = table_level[FX]
    assert fx["median_interval_s"] == pytest.approx(86_400, abs=600)
    assert fx["expected_next_at"].date().isoformat() == "2024-06-02"
    assert "3.9 d" in fx["reason"]
    stripe = table_level["raw.stripe_payments"]
    assert stripe["median_interval_s"] == pytest.approx(3600, abs=400)
    assert stripe["occurrences"] == 28 * 24
    # the recurring statement behind each load has its own row
    per_statement = [r for r in store.rows("dataset_expectations") if r["dataset"] == FX]
    assert {r["status"] for r in per_statement} == {"stopped"} and len(per_statement) == 2


def test_owners_say_which_rule_gave_them(store: LineageStore) -> None:
    rules = {
        name: (o["owner"], o["rule"])
        for name in (FX, "raw.salesforce_deals", "raw.stripe_payments", "staging.stg_deals")
        if (o := activity.owner_of(store, name)) is not None
    }
    assert rules == {
        FX: ("treasury-data", "explicit"),
        "raw.salesforce_deals": ("SALES_OPS", "catalog"),
        "raw.stripe_payments": ("payments-platform", "explicit"),  # the file wins over the catalog
        "staging.stg_deals": ("dbt_prod", "inferred"),
    }
    inferred = activity.owner_of(store, "staging.stg_deals")
    assert (
        inferred is not None
        and inferred["evidence"] == "dbt_prod: 28 of 28 successful writes in 28 days"
    )


def test_the_alert_that_would_have_caught_it(store: LineageStore) -> None:
    answer = activity.freshness(store, REPORT)
    asked, *late = answer.rows
    assert asked["status"] == "on_time" and asked["owner"] == "finance-analytics (explicit)"
    assert len(late) == 1 and late[0]["table"] == FX and late[0]["status"] == "stopped"
    assert late[0]["path"] == (
        "raw.exchange_rates -> staging.stg_exchange_rates -> marts.fct_payments -> " + REPORT
    )
    assert [(h["node"], h["owner"]) for h in late[0]["hops"]] == [
        (FX, "treasury-data"),
        ("staging.stg_exchange_rates", "dbt_prod"),
        ("marts.fct_payments", "dbt_prod"),
        (REPORT, "finance-analytics"),
    ]
    assert answer.graph is not None and answer.graph.nodes[FX].status == "stopped"
    assert answer.graph.nodes["raw.stripe_payments"].status is None
    alerts = activity.late_datasets(store)
    assert [(a["dataset"], a["owner"], a["contact"]) for a in alerts] == [
        (FX, "treasury-data", "#treasury-data")
    ]
    assert alerts[0]["downstream"] == ["staging.stg_exchange_rates", "marts.fct_payments", REPORT]


def test_the_commands_answer_without_a_jvm(
    warehouse: tuple[JobSettings, ExtractOutcome], tmp_path: Path
) -> None:
    base = warehouse[0].sink.base_path
    html = tmp_path / "freshness.html"
    timings = {}
    for args, code in (
        (["freshness", REPORT, "--json", "--html", str(html)], 0),
        (["owner", FX, "--json"], 0),
        (["usage", "marts.fct_payments", "--json"], 0),
        (["alerts", "--json"], 1),  # a stopped dataset: exit code 1 for cron and CI
    ):
        started = time.monotonic()
        done = subprocess.run(
            [str(LINEAGE), *args, "--warehouse", base],
            capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
        )  # fmt: skip
        timings[args[0]] = time.monotonic() - started
        assert done.returncode == code, done.stderr
        answer = json.loads(done.stdout)
        assert answer["rows"], args
    assert max(timings.values()) < 10, timings  # < 2 s unloaded; a shared machine is slower
    page = html.read_text(encoding="utf-8")
    assert '"status": "stopped"' in page and "node.stopped" in page
    unknown = subprocess.run(
        [str(LINEAGE), "owner", "raw.exchange_rate", "--warehouse", base],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert unknown.returncode == 2 and "did you mean raw.exchange_rates" in unknown.stderr


def test_a_broken_owners_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "owners.yaml"
    bad.write_text("owners:\n  - team: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="entry 1 needs a pattern and a team"):
        load_owner_rules(str(bad))
    with pytest.raises(ConfigError, match=r"activity\.owners_file"):
        load_owner_rules(str(tmp_path / "missing.yaml"))


def test_without_owners_file_or_catalog_every_owner_is_inferred(
    spark: SparkSession, warehouse: Warehouse
) -> None:
    """Runs last: it rewrites the activity tables of the module's warehouse."""
    settings = warehouse[0]
    bare = settings.activity.model_copy(update={"owners_file": None, "catalog_owners": None})
    summary = run_activity_stage(LineageTables(spark, settings.sink), bare)
    assert (summary.datasets, summary.stopped) == (9, 1)
    owners = {
        r["dataset"]: (r["owner"], r["rule"])
        for r in LineageTables(spark, settings.sink).read("dataset_owners").collect()
    }
    assert owners[FX] == ("airflow_fx", "inferred")
    assert owners["raw.salesforce_deals"] == ("fivetran_salesforce", "inferred")
    assert owners[REPORT] == ("dbt_prod", "inferred")


def test_a_rerun_with_unchanged_inputs_writes_nothing_until_a_status_is_due(
    spark: SparkSession, warehouse: Warehouse
) -> None:
    """Runs after the one above: same inputs, same settings, nothing written; ``as_of: now``
    recomputes once (the settings changed), then not again while no status is due."""
    settings = warehouse[0]
    tables = LineageTables(spark, settings.sink)
    bare = settings.activity.model_copy(update={"owners_file": None, "catalog_owners": None})
    before = tables.latest_version("dataset_expectations")
    again = run_activity_stage(tables, bare)
    assert again.unchanged and (again.datasets, again.stopped) == (9, 1)
    assert again.late_upstream_rows > 0
    assert tables.latest_version("dataset_expectations") == before

    now = bare.model_copy(update={"as_of": "now"})
    first = run_activity_stage(tables, now)
    assert not first.unchanged and first.as_of > "2026"
    assert tables.latest_version("dataset_expectations") == before + 1
    # the 2024 log is long silent: every late_after / stopped_after is behind, no event in
    # the window, so no change is due and a rerun now writes nothing
    assert first.due is None
    second = run_activity_stage(tables, now)
    assert second.unchanged and second.as_of == first.as_of
    assert tables.latest_version("dataset_expectations") == before + 1


def test_a_change_due_in_the_past_recomputes() -> None:
    inputs = {STATE_KEY: {"queries": 3}, "config": "c", "catalog": ""}
    now = ActivitySettings(as_of="now")
    recorded = {**inputs, "summary": {"due": "2020-01-01 00:00:00.000000"}}
    assert not _still_valid(recorded, inputs, now)
    assert _still_valid({**recorded, "summary": {"due": "2999-01-01 00:00:00.000000"}}, inputs, now)
    assert _still_valid(recorded, inputs, ActivitySettings(as_of="log_end"))
    assert not _still_valid(recorded, {**inputs, "config": "d"}, ActivitySettings(as_of="log_end"))
