"""Marquez round trip: the extract job's sample lineage, emitted over http, read back from
Marquez's REST API and compared set to set with the Delta tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expected import Sample, identity, options_of, transformation_text, with_openlineage
from marquez_api import MarquezApi
from services import Marquez

from lineage_udfs.spark.openlineage.emission import emit_openlineage

_STATE = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED"}


def _dataset_node(node_id: str) -> tuple[str, str]:
    """``dataset:<namespace>:<name>`` -> (namespace, name); namespaces may hold ``://``."""
    body = node_id.removeprefix("dataset:")
    namespace, _, name = body.rpartition(":")
    return namespace, name


def _triples(graph: list[dict[str, Any]]) -> set[tuple[tuple[str, str], str, tuple[str, str]]]:
    """(input dataset, job name, output dataset) for every job node of a lineage graph."""
    found = set()
    for node in graph:
        if node["type"] != "JOB":
            continue
        job = node["data"]["name"]
        inputs = [e["origin"] for e in node["inEdges"] if e["origin"].startswith("dataset:")]
        outputs = [
            e["destination"] for e in node["outEdges"] if e["destination"].startswith("dataset:")
        ]
        for source in inputs:
            for target in outputs:
                found.add((_dataset_node(source), job, _dataset_node(target)))
    return found


def _column_edges(graph: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """(source ds, source field, target ds, target field, transformation) from Marquez's
    column lineage: each input's transformations read from the field's description."""
    found = set()
    for node in graph:
        data = node["data"]
        target = (data["namespace"], data["dataset"])
        for source in data.get("inputFields") or ():
            prefix = f"{source['dataset']}.{source['field']}: "
            described = [
                part.removeprefix(prefix)
                for part in (source.get("transformationDescription") or "").split("; ")
                if part.startswith(prefix)
            ]
            for text in described[0].split(", ") if described else ["<none>"]:
                found.add(
                    (
                        (source["namespace"], source["dataset"]),
                        source["field"],
                        target,
                        data["field"],
                        text,
                    )
                )
    return found


def test_marquez_round_trip_matches_delta_lineage(
    spark: Any, sample_settings: Any, marquez: Marquez, tmp_path: Path
) -> None:
    settings = with_openlineage(
        sample_settings,
        transport={"type": "http", "url": marquez.url, "timeout": 30, "retries": 2},
        indirect_lineage="fields",
        scope="all",
        spool={"path": str(tmp_path / "spool")},
    )
    summary = emit_openlineage(spark, settings)
    counts = summary.counts
    assert (counts.failed, counts.spooled, counts.overflowed) == (0, 0, 0), summary
    assert counts.emitted > 0 and summary.status == "succeeded"

    options = options_of(settings)
    sample = Sample.read(spark, settings)
    api = MarquezApi(marquez.url)
    job_namespace = settings.openlineage.job_namespace

    # jobs: every emitted statement is a job of the namespace
    jobs = {j["name"]: j for j in api.jobs(job_namespace)}
    by_fingerprint = sample.jobs_by_fingerprint(options)
    expected_jobs = set().union(*by_fingerprint.values())
    assert expected_jobs <= jobs.keys()

    # datasets: every table of table_lineage is a dataset of its namespace
    tables = {
        identity(t, e["source_system"], options)
        for e in sample.table_lineage
        for t in (e["source_table"], e["target_table"])
    }
    datasets = {(ns, d["name"]) for ns in {ns for ns, _ in tables} for d in api.datasets(ns)}
    assert tables <= datasets

    # table lineage: every edge is dataset -> job -> dataset in Marquez's lineage graph
    expected_triples = {
        (
            identity(e["source_table"], e["source_system"], options),
            job,
            identity(e["target_table"], e["source_system"], options),
        )
        for e in sample.table_lineage
        for job in by_fingerprint[e["fingerprint"]]
    }
    # a MERGE also reads its target (ON clause): column edges from it make it an input too
    read_triples = {
        (
            identity(e["source_table"], e["source_system"], options),
            job,
            identity(e["target_table"], e["source_system"], options),
        )
        for e in sample.column_lineage
        for job in by_fingerprint[e["fingerprint"]]
    }
    marquez_triples: set[Any] = set()
    for namespace, name in sorted({t for _, _, t in expected_triples}):
        marquez_triples |= _triples(api.lineage(namespace, name))
    ours = {t for t in marquez_triples if t[1] in expected_jobs}
    assert expected_triples <= ours, sorted(expected_triples - ours)
    assert ours == expected_triples | read_triples, sorted(ours - expected_triples - read_triples)

    # column lineage: every column_lineage edge with its transformation, and nothing else
    expected_columns = {
        (
            identity(e["source_table"], e["source_system"], options),
            e["source_column"],
            identity(e["target_table"], e["source_system"], options),
            e["target_column"],
            transformation_text(e["transformation_type"], e["transformation_subtype"]),
        )
        for e in sample.column_lineage
    }
    marquez_columns: set[Any] = set()
    for namespace, name in sorted({e[2] for e in expected_columns}):
        graph = api.column_lineage(namespace, name)
        marquez_columns |= {e for e in _column_edges(graph) if e[2] == (namespace, name)}
    assert marquez_columns == expected_columns, (
        sorted(expected_columns - marquez_columns)[:10],
        sorted(marquez_columns - expected_columns)[:10],
    )

    # runs: each log row's run is COMPLETED or FAILED as the log says
    expected_states = {run: _STATE[kind] for run, kind in sample.run_states(options).items()}
    marquez_states = {
        run["id"]: run["state"] for job in expected_jobs for run in api.runs(job_namespace, job)
    }
    assert {r: marquez_states.get(r) for r in expected_states} == expected_states

    # the sql facet holds the masked statement only
    sql = {
        name: (jobs[name].get("facets") or {}).get("sql", {}).get("query") for name in expected_jobs
    }
    masked = {p["masked_sql"] for p in sample.parsed.values()}
    assert set(sql.values()) <= masked
    leaked = {lit for lit in sample.literals() for text in sql.values() if text and lit in text}
    assert not leaked

    print(
        "\nMarquez round trip (sample): "
        f"events sent={counts.emitted} runs={len(expected_states)} "
        f"(COMPLETED={sum(s == 'COMPLETED' for s in expected_states.values())}, "
        f"FAILED={sum(s == 'FAILED' for s in expected_states.values())}) "
        f"jobs={len(expected_jobs)} datasets={len(tables)} "
        f"table edges={len(sample.table_lineage)} -> dataset->job->dataset={len(expected_triples)} "
        f"(+{len(ours - expected_triples)} from column edges of a MERGE reading its target) "
        f"column edges={len(sample.column_lineage)} -> Marquez column edges={len(marquez_columns)} "
        f"sql facets masked={sum(1 for v in sql.values() if v)}"
    )
