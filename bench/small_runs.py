"""The fixed cost of a run: small and no-op runs of extract → graph → emit, end to end.

Every scenario is one ``spark-submit jobs/extract.py`` (what ``make run`` does: one application,
JVM start included) with the graph stage and the OpenLineage emission (file transport) on:

* ``default-cold`` / ``default-warm``: the embedded default (conf/local.yaml, the sample logs)
  into an empty warehouse, twice in a row (the second with the OS caches warm);
* ``default-noop``: the embedded default again onto the warehouse of ``default-warm``;
* ``inc-1k`` / ``inc-10k``: 1,000 / 10,000 new log rows onto a copy of a warehouse that holds
  the lineage of a 1M-row log (``build`` makes it once; it is reused);
* ``noop-1m``: 10,000 rows of the 1M log again (an export delivered twice: nothing new).

For each: wall seconds, seconds per stage (the extraction's own stages from its summary, the
graph stage and the emission, which run at once, each from the end of the extraction to its
log line, and both together to the job's last line; *start* the rest: JVM, session,
settings), the Spark jobs the application ran (its event log) and the Delta commits per table
(new ``_delta_log`` versions), with the load average before and after.

``loop`` runs many small increments in one application and times the last runs against the
first ones (the update and a lookup query), to show whether the tables slow down as commits pile
up. ``graph-sizes`` times the graph stage incremental against a full refresh on warehouses of
growing size (the figures behind ``graph.incremental_min_edges``).

    .venv/bin/python bench/small_runs.py build                       # once: the 1M warehouse
    .venv/bin/python bench/small_runs.py scenarios --label after     # bench/data/small/after.json
    .venv/bin/python bench/small_runs.py loop --runs 100 --rows 100 --label after
    .venv/bin/python bench/small_runs.py loop --runs 1000 --rows 100 --label long --max-runs 200
    .venv/bin/python bench/small_runs.py loop --runs 1000 --rows 100 --label long --resume
    .venv/bin/python bench/small_runs.py graph-sizes --rows 75000 300000
    .venv/bin/python bench/small_runs.py report --out bench/results/small_runs.md

``--code DIR`` runs another checkout's jobs and package (e.g. a ``git archive`` of the base
branch) with this script's virtualenv, for before/after figures from one machine and session.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
SMALL = DATA / "small"
VENV = ROOT / ".venv"
LOG_1M = DATA / "log_1000000.parquet"
INCREMENTS = {
    "inc-1k": (DATA / "inc_1k.parquet", 1000, 101),
    "inc-10k": (DATA / "inc_10k.parquet", 10000, 102),
}
WAREHOUSE_1M = SMALL / "warehouse-1m"
REPLAY_10K = DATA / "replay_10k.parquet"
"""The 1M log's first 10,000 rows: an export delivered again, already in the warehouse."""
SCENARIOS = ("default-cold", "default-warm", "default-noop", "inc-1k", "inc-10k", "noop-1m")

_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (\w+) ([\w.]+): (.*)$")
_STAGES = re.compile(r"seconds per stage\s+(.*)$")


def load_average() -> str:
    return " / ".join(Path("/proc/loadavg").read_text().split()[:3])


def _generate(path: Path, rows: int, seed: int) -> None:
    if path.exists():
        return
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate_log.py"), "--rows", str(rows),
         "--seed", str(seed), "--repetition", "20", "--format", "parquet", "--out", str(path)],
        check=True,
    )  # fmt: skip


def delta_versions(base: Path) -> dict[str, int]:
    """Latest version per Delta table under ``base`` (-1: no commit yet)."""
    out = {}
    if not base.exists():
        return out
    for table in sorted(p for p in base.iterdir() if (p / "_delta_log").is_dir()):
        versions = [int(f.stem) for f in (table / "_delta_log").glob("*.json") if f.stem.isdigit()]
        out[table.name] = max(versions, default=-1)
    return out


def spark_jobs(events: Path) -> int:
    """Spark jobs the application ran, from its event log."""
    n = 0
    for path in events.rglob("events_*"):  # rolling event logs: a folder per application
        with path.open(errors="replace") as fh:
            n += sum(1 for line in fh if '"Event":"SparkListenerJobStart"' in line[:60])
    return n


def _timestamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def parse_output(output: str) -> dict[str, Any]:
    """Stage seconds from the job's log: the extraction's own summary, then the graph stage and
    the emission (which run at once after the extraction) each from the end of the extraction
    to the line that ends it, and both together to the job's last line."""
    stages: dict[str, float] = {}
    t_extract = t_graph = t_emit = t_end = None
    summary = ""
    for line in output.splitlines():
        m = _STAGES.search(line)
        if m:
            for part in m.group(1).split(", "):
                if "=" in part:
                    k, v = part.split("=")
                    stages[k] = float(v.rstrip("s"))
        m = _LOG_LINE.match(line)
        if not m:
            continue
        at, _level, name, message = m.groups()
        if message.startswith("extraction summary"):
            t_extract = _timestamp(at)
        elif name.endswith("graph_stage") and message.startswith("graph"):
            t_graph = _timestamp(at)
        elif name.endswith("openlineage") and message.startswith("OpenLineage emit"):
            t_emit = _timestamp(at)
        elif name.endswith("pipeline") and message.startswith("extract "):
            t_end, summary = _timestamp(at), message
    result: dict[str, Any] = {"extract_stages": stages, "summary": summary}
    result["extract"] = stages.get("total", 0.0)
    if t_extract:
        for key, at in (("graph", t_graph), ("emit", t_emit), ("graph_and_emit", t_end)):
            if at:
                result[key] = round(at - t_extract, 1)
    return result


def spark_submit(code: Path) -> tuple[list[str], dict[str, str]]:
    """``spark-submit`` (this virtualenv's) and its environment for running ``code``'s jobs:
    its conf/ (the packages), its package on the path, GraphFrames' mirror where make exports
    one (``LINEAGE_MAVEN_REPOSITORIES``)."""
    env = dict(os.environ)
    python = str(VENV / "bin" / "python")
    env.update(
        SPARK_CONF_DIR=str(code / "conf"),
        PYSPARK_PYTHON=python,
        PYSPARK_DRIVER_PYTHON=python,
        PYTHONPATH=str(code),
    )
    cmd = [str(VENV / "bin" / "spark-submit")]
    repositories = env.get("LINEAGE_MAVEN_REPOSITORIES")
    if repositories:
        cmd += ["--repositories", repositories]
    return cmd, env


def run_job(code: Path, work: Path, overlay: dict[str, Any], name: str) -> dict[str, Any]:
    """One ``spark-submit jobs/extract.py`` of ``code`` with conf/local.yaml and ``overlay``."""
    work.mkdir(parents=True, exist_ok=True)
    events = work / f"events-{name}"
    shutil.rmtree(events, ignore_errors=True)
    events.mkdir()
    config = work / f"{name}.yaml"
    config.write_text(json.dumps(overlay, indent=2))  # JSON is YAML
    base = Path(overlay["sink"]["base_path"])
    before = delta_versions(base)
    cmd, env = spark_submit(code)
    cmd += [
        "--conf", "spark.eventLog.enabled=true",
        "--conf", f"spark.eventLog.dir={events.as_uri()}",
        "--conf", "spark.eventLog.compress=false",
        "jobs/extract.py", "--config", "conf/local.yaml", "--config", str(config),
    ]  # fmt: skip
    load_before = load_average()
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    output = proc.stdout + proc.stderr
    (work / f"{name}.log").write_text(output)
    if proc.returncode != 0:
        sys.stderr.write(output[-4000:])
        raise SystemExit(f"{name}: the job failed (exit {proc.returncode})")
    after = delta_versions(base)
    commits = {t: v - before.get(t, -1) for t, v in after.items() if v != before.get(t, -1)}
    result = parse_output(output)
    # the graph stage and the emission run at once: together they take graph_and_emit (older
    # code ran them one after the other: graph then emit)
    after_extract = result.get("graph_and_emit", result.get("graph", 0.0) + result.get("emit", 0.0))
    known = result.get("extract", 0.0) + after_extract
    result.update(
        scenario=name,
        wall=round(wall, 1),
        start=round(wall - known, 1),
        spark_jobs=spark_jobs(events),
        commits=commits,
        commits_total=sum(commits.values()),
        load_before=load_before,
        load_after=load_average(),
    )
    print(
        f"{name}: wall {result['wall']} s (start {result['start']}, extract {result['extract']},"
        f" graph {result.get('graph')}, emit {result.get('emit')}, graph and emit together"
        f" {result.get('graph_and_emit')}), {result['spark_jobs']} Spark"
        f" jobs, {result['commits_total']} Delta commits {commits}, load {load_before}"
        f" -> {result['load_after']}",
        flush=True,
    )
    return result


def _overlay(work: Path, sources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    overlay: dict[str, Any] = {
        "sink": {"base_path": str(work / "lineage")},
        "openlineage": {
            "transport": {
                "type": "file",
                "log_file_path": str(work / "openlineage" / "events.jsonl"),
                "append": True,
            },
            "spool": {"path": str(work / "openlineage" / "spool")},
        },
    }
    if sources is not None:
        overlay["sources"] = sources
    return overlay


def _parquet_source(path: Path) -> list[dict[str, Any]]:
    return [{"name": "bench", "format": "parquet", "path": str(path)}]


def build(args: argparse.Namespace) -> None:
    """The 1M-row warehouse (extract + graph), once; then an emission watermark at its
    versions, as if its history had been emitted, so the increments' emissions are
    incremental (emitting the history itself is not what this benchmark measures)."""
    if (WAREHOUSE_1M / "lineage" / "lineage_runs").exists():
        print(f"{WAREHOUSE_1M} exists; remove it to rebuild")
    else:
        _generate(LOG_1M, 1_000_000, 7)
        overlay = _overlay(WAREHOUSE_1M, _parquet_source(LOG_1M))
        overlay["openlineage"]["enabled"] = False
        run_job(args.code, WAREHOUSE_1M, overlay, "build")
    if not list((WAREHOUSE_1M / "lineage" / "openlineage_emissions").glob("*.parquet")):
        env = dict(os.environ, PYTHONPATH=str(args.code), SPARK_CONF_DIR=str(args.code / "conf"))
        subprocess.run(
            [str(VENV / "bin" / "python"), str(Path(__file__).resolve()), "watermark"],
            cwd=args.code,
            env=env,
            check=True,
        )


def watermark(args: argparse.Namespace) -> None:
    """Record a succeeded emission of the 1M warehouse at its current versions."""
    from lineage_udfs.emit.spool import EmitCounts, ReplaySummary
    from lineage_udfs.settings import load_settings
    from lineage_udfs.spark.openlineage.emission import _options
    from lineage_udfs.spark.openlineage.scope import (
        EMISSIONS_TABLE,
        EmissionScope,
        options_digest,
        record_emission,
    )
    from lineage_udfs.spark.pipeline import start_session
    from lineage_udfs.spark.runtime.session import DELTA
    from lineage_udfs.spark.storage.tables import LineageTables

    overlay = SMALL / "watermark.yaml"
    overlay.write_text(json.dumps(_overlay(WAREHOUSE_1M)))
    settings = load_settings([Path("conf/base.yaml"), Path("conf/local.yaml"), overlay])
    spark = start_session(settings, [DELTA])
    tables = LineageTables(spark, settings.sink)
    tables.ensure(EMISSIONS_TABLE)
    vq, vp = tables.latest_version("queries"), tables.latest_version("parsed_statements")
    scope = EmissionScope(
        kind="full",
        reason="benchmark fixture: the history counts as emitted",
        queries_version=vq,
        parsed_statements_version=vp,
        queries_watermark=vq,
    )
    now = datetime.now(UTC)
    record_emission(
        tables,
        scope,
        emit_mode=settings.openlineage.emit_mode,
        digest=options_digest(_options(settings.openlineage)),
        counts=EmitCounts(),
        replayed=ReplaySummary(),
        started_at=now,
        ended_at=now,
    )
    print(f"watermark at queries v{vq}, parsed_statements v{vp}")
    spark.stop()


def scenarios(args: argparse.Namespace) -> None:
    for path, rows, seed in INCREMENTS.values():
        _generate(path, rows, seed)
    if not REPLAY_10K.exists():
        import pyarrow.parquet as pq

        pq.write_table(pq.read_table(LOG_1M).slice(0, 10_000), REPLAY_10K)
    if not (WAREHOUSE_1M / "lineage" / "lineage_runs").exists():
        raise SystemExit("no 1M warehouse: run `bench/small_runs.py build` first")
    work = SMALL / f"runs-{args.label}"
    out = SMALL / f"{args.label}.json"
    for name in args.only or SCENARIOS:
        if name in ("default-cold", "default-warm"):
            scratch = work / "default"
            shutil.rmtree(scratch, ignore_errors=True)
            result = run_job(args.code, scratch, _overlay(scratch), name)
        elif name == "default-noop":
            scratch = work / "default"
            result = run_job(args.code, scratch, _overlay(scratch), name)
        else:
            scratch = work / "1m"
            log = REPLAY_10K if name == "noop-1m" else INCREMENTS[name][0]
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(WAREHOUSE_1M / "lineage", scratch / "lineage")
            overlay = _overlay(scratch, _parquet_source(log))
            result = run_job(args.code, scratch, overlay, name)
        save(out, args.label, args.code, result)


def save(out: Path, label: str, code: Path, result: dict[str, Any]) -> None:
    """Add (or replace) one scenario's result in the label's JSON file."""
    doc = json.loads(out.read_text()) if out.exists() else {"label": label, "runs": []}
    doc["runs"] = [r for r in doc["runs"] if r["scenario"] != result["scenario"]] + [result]
    doc.update(code=str(code), date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    out.write_text(json.dumps(doc, indent=1))


# --- many small runs in one application ------------------------------------------------------


def loop(args: argparse.Namespace) -> None:
    """``--runs`` increments of ``--rows`` new rows each, in one application; the update's and
    a lookup query's seconds per run, and the tables' files and versions at the end.

    The results are saved after every run (``loop-LABEL.json``). ``--resume`` continues a loop
    of the same label, runs and rows on its warehouse from the run after its last saved one;
    ``--max-runs`` stops after that many runs of this invocation: a long loop in parts.
    """
    import pyarrow.parquet as pq

    from lineage_udfs.settings import load_settings
    from lineage_udfs.spark.pipeline import run_extract, start_session
    from lineage_udfs.spark.runtime.session import DELTA
    from lineage_udfs.spark.storage.tables import LineageTables

    work = SMALL / f"loop-{args.label}"
    out = SMALL / f"loop-{args.label}.json"
    doc: dict[str, Any] = {"label": args.label, "runs": args.runs, "rows": args.rows}
    if args.resume:
        doc = json.loads(out.read_text())
        if (doc["runs"], doc["rows"]) != (args.runs, args.rows):
            raise SystemExit(f"{out}: a loop of {doc['runs']} x {doc['rows']}, not this one")
    else:
        shutil.rmtree(work, ignore_errors=True)
        (work / "parts").mkdir(parents=True)
        log = DATA / f"loop_{args.runs}x{args.rows}.parquet"
        _generate(log, args.runs * args.rows, 103)
        table = pq.read_table(log)
        for i in range(args.runs):
            pq.write_table(
                table.slice(i * args.rows, args.rows), work / "parts" / f"part-{i:05d}.parquet"
            )
        doc.update(per_run=[], parts=[])
    overlay = work / "overlay.yaml"
    spec = _overlay(work)
    spec["spark"] = {"confs": {"spark.ui.enabled": "false"}}
    overlay.write_text(json.dumps(spec))
    base = [ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml", overlay]
    settings = load_settings(base)
    spark = start_session(settings, [DELTA])
    spark.sparkContext.setLogLevel("ERROR")
    tables = LineageTables(spark, settings.sink)
    lookup = (
        "SELECT count(*) FROM table_lineage t JOIN column_lineage c"
        " ON t.target_table = c.target_table WHERE t.target_table LIKE '%_v1'"
    )
    first = len(doc["per_run"])
    last = min(args.runs, first + args.max_runs) if args.max_runs else args.runs
    doc["parts"].append(
        {
            "runs": [first + 1, last],
            "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "code": _commit(ROOT),
            "load_start": load_average(),
        }
    )
    for i in range(first, last):
        part = work / "parts" / f"part-{i:05d}.parquet"
        source = work / "source.yaml"
        source.write_text(json.dumps({"sources": _parquet_source(part)}))
        run_settings = load_settings([*base, source])
        started = time.perf_counter()
        outcome = run_extract(spark, run_settings)
        update = time.perf_counter() - started
        started = time.perf_counter()
        for name in ("table_lineage", "column_lineage"):
            tables.read(name).createOrReplaceTempView(name)
        spark.sql(lookup).collect()
        query = time.perf_counter() - started
        graph = outcome.graph
        doc["per_run"].append(
            {
                "run": i + 1,
                "update": round(update, 2),
                "query": round(query, 2),
                "graph": round(graph.seconds, 2) if graph else None,
                "graph_recomputed": graph.components_recomputed if graph else None,
            }
        )
        print(f"run {i + 1}: update {update:.1f} s, query {query:.2f} s", flush=True)
        if (i + 1) % 10 == 0 or i + 1 == last:
            files = {}
            for name in ("queries", "parsed_statements", "table_lineage", "column_lineage"):
                detail = tables.delta_table(name).detail().select("numFiles").first()
                files[name] = int(detail[0]) if detail else 0
            doc.update(
                date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                load_end=load_average(),
                files=files,
                versions=delta_versions(work / "lineage"),
            )
        out.write_text(json.dumps(doc, indent=1))
    spark.stop()


def _commit(code: Path) -> str | None:
    """The checkout's commit (None outside git)."""
    proc = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True
    )
    return proc.stdout.strip() or None


# --- incremental or full: the graph stage by size ---------------------------------------------


def graph_sizes(args: argparse.Namespace) -> None:
    """For each ``--rows``: a warehouse of that many log rows (extract + graph, once), then 100
    new rows with the graph stage incremental (``incremental_min_edges: 0``), then two full
    refreshes; the edges and the graph stage's seconds of each (``graph-sizes.json``)."""
    from lineage_udfs.settings import load_settings
    from lineage_udfs.spark.pipeline import run_extract, run_graph, start_session
    from lineage_udfs.spark.runtime.session import DELTA
    from lineage_udfs.spark.storage.tables import LineageTables

    results = []
    for rows in args.rows:
        work = SMALL / f"graph-size-{rows}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        log, increment = DATA / f"graph_size_{rows}.parquet", DATA / "graph_size_inc_100.parquet"
        _generate(log, rows, 105)
        _generate(increment, 100, 106)
        spec = _overlay(work)
        spec["openlineage"]["enabled"] = False
        spec["graph"] = {"incremental_min_edges": 0}
        spec["spark"] = {"confs": {"spark.ui.enabled": "false"}}
        overlay = work / "overlay.yaml"
        overlay.write_text(json.dumps(spec))
        base = [ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml", overlay]

        def settings_for(path: Path, base: list[Path] = base, work: Path = work) -> Any:
            source = work / "source.yaml"
            source.write_text(json.dumps({"sources": _parquet_source(path)}))
            return load_settings([*base, source])

        spark = start_session(load_settings(base), [DELTA])
        spark.sparkContext.setLogLevel("ERROR")
        run_extract(spark, settings_for(log))
        tables = LineageTables(spark, load_settings(base).sink)
        edges = {t: tables.read(t).count() for t in ("table_lineage", "column_lineage")}
        outcome = run_extract(spark, settings_for(increment))
        assert outcome.graph is not None and not outcome.graph.full_refresh
        full = [run_graph(spark, load_settings(base), full_refresh=True).seconds for _ in range(2)]
        result = {
            "rows": rows,
            "edges": edges,
            "incremental": round(outcome.graph.seconds, 1),
            "full": [round(x, 1) for x in full],
        }
        print(f"graph-sizes: {json.dumps(result)}", flush=True)
        results.append(result)
        spark.stop()
    doc = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "results": results}
    (SMALL / "graph-sizes.json").write_text(json.dumps(doc, indent=1))


# --- the report --------------------------------------------------------------------------------


def _machine() -> str:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    return f"{os.cpu_count()} cores ({cpu}), {mem:.1f} GiB, {platform.platform()}"


def _cell(run: dict[str, Any] | None, key: str) -> str:
    if run is None:
        return "-"
    value = run.get(key)
    return "-" if value is None else f"{value}"


def report(args: argparse.Namespace) -> None:
    docs = {label: json.loads((SMALL / f"{label}.json").read_text()) for label in args.labels}
    lines = ["| scenario | " + " | ".join(args.labels) + " |", "|---|" + "---|" * len(args.labels)]
    for name in SCENARIOS:
        cells = []
        for label in args.labels:
            run = next((r for r in docs[label]["runs"] if r["scenario"] == name), None)
            if run is None:
                cells.append("-")
                continue
            stages = ", ".join(
                f"{k} {_cell(run, k)}" for k in ("start", "extract", "graph", "emit")
            )
            cells.append(
                f"**{run['wall']} s** ({stages}); {run['spark_jobs']} jobs;"
                f" {run['commits_total']} commits; load {run['load_before']}"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    commits = ["", "Delta commits per table:", ""]
    for label in args.labels:
        for run in docs[label]["runs"]:
            commits.append(f"- {label} {run['scenario']}: {run['commits'] or 'none'}")
    text = "\n".join([f"machine: {_machine()}", "", *lines, *commits, ""])
    if args.out:
        args.out.write_text(text)
    print(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("watermark")
    for name in ("build", "scenarios"):
        p = sub.add_parser(name)
        p.add_argument("--code", type=Path, default=ROOT, help="checkout whose jobs run")
        if name == "scenarios":
            p.add_argument("--label", default="after")
            p.add_argument("--only", nargs="*", choices=SCENARIOS)
    p = sub.add_parser("loop")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--rows", type=int, default=100)
    p.add_argument("--label", default="after")
    p.add_argument("--resume", action="store_true", help="continue the saved loop of --label")
    p.add_argument("--max-runs", type=int, default=0, help="stop after this many runs (0: all)")
    p = sub.add_parser("graph-sizes")
    p.add_argument("--rows", type=int, nargs="+", default=[75_000, 300_000])
    p = sub.add_parser("report")
    p.add_argument("--labels", nargs="+", default=["before", "after"])
    p.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if getattr(args, "code", None) is not None:
        args.code = args.code.resolve()
    {
        "build": build,
        "watermark": watermark,
        "scenarios": scenarios,
        "loop": loop,
        "report": report,
        "graph-sizes": graph_sizes,
    }[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
