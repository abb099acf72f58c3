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
    .venv/bin/python bench/small_runs.py scenarios --label now       # bench/data/small/now.json
    .venv/bin/python bench/small_runs.py loop --runs 100 --rows 100 --label now
    .venv/bin/python bench/small_runs.py loop --runs 1000 --rows 100 --label long --max-runs 200
    .venv/bin/python bench/small_runs.py loop --runs 1000 --rows 100 --label long --resume
    .venv/bin/python bench/small_runs.py graph-sizes --rows 75000 300000

``--code DIR`` runs another checkout's jobs and package (e.g. a ``git archive`` of the base
branch) with this script's virtualenv, for before/after figures from one machine and session.

The results: the commands above keep their raw results under bench/data/small (not tracked);
``record SECTION`` copies one section's figures, with their commands, commits, machine and UTC
times, into ``bench/results/small_runs.json`` (tracked), replacing that section and the notes
written about it; ``report`` renders ``bench/results/small_runs.md`` from that JSON alone:

    .venv/bin/python bench/small_runs.py record scenarios --labels before now   # side by side
    .venv/bin/python bench/small_runs.py record floor          # every bench/floor.py result
    .venv/bin/python bench/small_runs.py record graph-sizes
    .venv/bin/python bench/small_runs.py record loop --label long
    .venv/bin/python bench/small_runs.py report

Notes (a person's reading of a section's figures) are kept in the JSON as lists of lines; the
1M-row throughput section comes from ``bench/run_bench.py`` runs and has no ``record`` step.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import textwrap
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
_BUILT = re.compile(r"(\d+) distinct statements .*?(\d+) table and (\d+) column edges in scope")


def load_average() -> str:
    return " / ".join(Path("/proc/loadavg").read_text().split()[:3])


def utc_now() -> str:
    """Now, UTC, to the second (``YYYY-MM-DD HH:MM:SS``)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def command_line(script: str, argv: list[str]) -> str:
    """``script`` and its arguments as run from the repository root; a path outside the
    repository shown as ``<dir>`` (no machine's paths in the results)."""
    shown = []
    for arg in argv:
        path = Path(arg)
        if path.is_absolute():
            arg = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else "<dir>"
        shown.append(arg)
    return " ".join([script, *shown])


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
    started_at = utc_now()
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    ended_at = utc_now()
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
        started=started_at,
        ended=ended_at,
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
        result = run_job(args.code, WAREHOUSE_1M, overlay, "build")
        m = _BUILT.search(result["summary"])
        if m:
            statements, table_edges, column_edges = (int(x) for x in m.groups())
            (SMALL / "build.json").write_text(
                json.dumps(
                    {
                        "statements": statements,
                        "table_edges": table_edges,
                        "column_edges": column_edges,
                        "date": result["ended"],
                    }
                )
            )
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
    if not args.only:  # every scenario anew: none left from an earlier session
        out.unlink(missing_ok=True)
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
        save(out, args.label, args.code, result, args.command_line)


def save(out: Path, label: str, code: Path, result: dict[str, Any], command: str) -> None:
    """Add (or replace) one scenario's result in the label's JSON file, with the checkout's
    commit, the machine and the command."""
    doc = json.loads(out.read_text()) if out.exists() else {"label": label, "runs": []}
    doc["runs"] = [r for r in doc["runs"] if r["scenario"] != result["scenario"]] + [result]
    doc.update(
        code=str(code),
        commit=git_commit(code),
        other_checkout=code != ROOT,
        machine=machine(),
        command=command,
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
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
            "started": utc_now(),
            "code": git_commit(ROOT),
            "command": args.command_line,
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
                ended=utc_now(),
                date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                load_end=load_average(),
                files=files,
                versions=delta_versions(work / "lineage"),
            )
        out.write_text(json.dumps(doc, indent=1))
    spark.stop()


def git_commit(code: Path) -> str | None:
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
    started = utc_now()
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
    doc = {
        "command": args.command_line,
        "commit": git_commit(ROOT),
        "machine": machine(),
        "started": started,
        "ended": utc_now(),
        "results": results,
    }
    (SMALL / "graph-sizes.json").write_text(json.dumps(doc, indent=1))


# --- the results file --------------------------------------------------------------------------


def machine() -> str:
    """Cores, CPU, memory, OS; the pyspark, delta-spark and Java versions."""
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    first = (java.stderr.splitlines() or ["?"])[0]
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem:.1f} GiB, {platform.system()}"
        f" {platform.release()}; pyspark {importlib.metadata.version('pyspark')}, delta-spark"
        f" {importlib.metadata.version('delta-spark')}, Java"
        f" {first.split(chr(34))[1] if chr(34) in first else first}"
    )


# bench/results/small_runs.json holds the figures of each section with where they come from;
# ``record`` writes a section from the raw results under bench/data/small (replacing it, notes
# included: they read the figures they were written with), ``report`` renders the Markdown.

RESULTS_JSON = ROOT / "bench" / "results" / "small_runs.json"
RESULTS_MD = ROOT / "bench" / "results" / "small_runs.md"
TARGETS = {"default-warm": 45.0, "inc-10k": 60.0, "noop": 20.0}
"""Seconds of wall time: the embedded default warm, 10k rows onto the 1M warehouse, a rerun."""
SCENARIO_TEXT = {
    "default-cold": "empty warehouse, caches cold",
    "default-warm": "empty warehouse, caches warm",
    "default-noop": "the same input again",
    "inc-1k": "1,000 new log rows",
    "inc-10k": "10,000 new log rows",
    "noop-1m": "10,000 rows of the 1M log again",
}
FLOOR_MODES = {
    "default": {
        "merge": "CREATE + MERGE (what the job does)",
        "insert": "CREATE + insert-only MERGE",
        "append": "one append that creates each table",
    },
    "inc-10k": {"merge": "MERGE", "insert": "insert-only MERGE"},
}
FLOOR_SCENARIOS = {
    "default": "embedded default ({tables} tables with rows)",
    "inc-10k": "10k rows onto the 1M warehouse ({tables} tables; upserts and deletes)",
}


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, width=96, break_long_words=False, break_on_hyphens=False)


def _row(cells: list[str]) -> str:
    """A Markdown table row; an empty cell as ``| |``."""
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


def _s(values: list[float | None], unit: str = "") -> str:
    shown = ["-" if v is None else f"{v:.1f}" for v in values]
    return " / ".join(shown) + unit


def _g(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _paragraphs(notes: list[list[str]]) -> list[str]:
    lines: list[str] = []
    for paragraph in notes:
        lines += ["", *paragraph]
    return lines


def _python(command: str) -> str:
    return command if command.startswith(("PYTHONPATH", ".venv")) else f".venv/bin/python {command}"


def _scenario_table(sc: dict[str, Any], names: list[str], named: bool) -> list[str]:
    """Per scenario of ``names``: wall, stages, Spark jobs and commits for each label; the last
    label's wall in bold, and each of its stages that is at least 10 % below the first label's."""
    labels = list(sc["labels"])
    head = ["scenario", ""] if named else [""]
    lines = [
        _row(head + labels),
        "|" + "---|" * len(head) + "---:|" * len(labels),
    ]
    stages = ("start", "extract", "graph", "emit")
    for name in names:
        runs = [sc["labels"][label]["runs"].get(name) for label in labels]
        first = runs[0]
        walls, times, counts = [], [], []
        for i, run in enumerate(runs):
            if run is None:
                walls.append("-"), times.append("-"), counts.append("-")
                continue
            last = i == len(runs) - 1 and len(runs) > 1
            walls.append(f"**{run['wall']:.1f}**" if last else f"{run['wall']:.1f}")
            cells = []
            for k in stages:
                text = "-" if run.get(k) is None else f"{run[k]:.1f}"
                before = first.get(k) if first and last else None
                if before and run.get(k) is not None and run[k] <= 0.9 * before:
                    text = f"**{text}**"
                cells.append(text)
            times.append(" / ".join(cells))
            counts.append(f"{run['spark_jobs']} / {run['commits_total']}")
        title = [f"{name} ({SCENARIO_TEXT.get(name, name)})", "wall s"] if named else ["wall s"]
        blank = ["", ""] if named else []
        lines += [
            _row(title + walls),
            _row([*blank[:1], "start / extract / graph / emit s", *times]),
            _row([*blank[:1], "Spark jobs / Delta commits", *counts]),
        ]
    return lines


def _targets(doc: dict[str, Any]) -> list[str]:
    sc, floor = doc.get("scenarios") or {}, doc.get("floor") or {}
    labels = list(sc.get("labels", {}))

    def walls(name: str) -> tuple[str, str, float | None]:
        runs = [sc["labels"][label]["runs"].get(name) for label in labels]
        now = runs[-1]["wall"] if runs and runs[-1] else None
        before = runs[0]["wall"] if len(runs) > 1 and runs[0] else None
        return (
            "" if before is None else f"{before:.1f} s",
            "-" if now is None else f"**{now:.1f} s**",
            now,
        )

    def floor_walls(scenario: str) -> str:
        row = next(
            (r for r in floor.get("rows", []) if (r["scenario"], r["mode"]) == (scenario, "merge")),
            None,
        )
        return "" if row is None else _s([r["wall"] for r in row["runs"]], " s")

    def met(now: float | None, limit: float) -> str:
        return "-" if now is None else "yes" if now <= limit else "no"

    rows = []
    before, now, value = walls("default-warm")
    rows.append(
        [
            f"embedded default, warm: extract + graph + emit ≤ {TARGETS['default-warm']:g} s wall",
            before,
            now,
            floor_walls("default"),
            met(value, TARGETS["default-warm"]),
        ]
    )
    before, now, value = walls("inc-10k")
    rows.append(
        [
            f"10k new rows onto the 1M warehouse ≤ {TARGETS['inc-10k']:g} s",
            before,
            now,
            floor_walls("inc-10k"),
            met(value, TARGETS["inc-10k"]),
        ]
    )
    noop = doc.get("noop")
    if noop:
        runs = noop["runs"]
        commits = " / ".join(sorted({str(r["commits_total"]) for r in runs}))
        jobs = " / ".join(sorted({str(r["spark_jobs"]) for r in runs}))
        note = f"; {noop['note']}" if noop.get("note") else ""
        ok = all(r["wall"] <= TARGETS["noop"] and r["commits_total"] == 0 for r in runs)
        rows.append(
            [
                f"a rerun with nothing new ≤ {TARGETS['noop']:g} s, no new Delta version",
                "",
                f"**{_s([r['wall'] for r in runs])} s, {commits} commits, {jobs} Spark jobs**"
                f" (`{noop['code']}`, {noop['window']}{note})",
                "",
                "yes" if ok else "no",
            ]
        )
    tp = doc.get("throughput")
    if tp:
        first, last = tp["runs"][0], tp["runs"][-1]
        current = f"; {tp['current']}" if tp.get("current") else ""
        rows.append(
            [
                "the 1M-row throughput does not get worse",
                f"{first['total']:.1f} s (`{first['code']}`)",
                f"**{last['total']:.1f} s** (`{last['code']}`{current})",
                "",
                "yes" if last["total"] <= first["total"] else "no",
            ]
        )
    loop = doc.get("loop")
    if loop:
        medians = loop["medians"]
        shown = ", ".join(f"runs {_range(m['runs'])}: {m['update']:.1f} s" for m in medians[1:])
        done = loop["runs_done"] < loop["runs_planned"]
        rows.append(
            [
                f"{loop['runs_planned']:,} runs of {loop['rows']} rows: the last run against the"
                " first",
                "",
                f"{shown} ({loop['runs_done']} runs; *The loop*)",
                "",
                "see *The loop*" if not done else "not run to the end",
            ]
        )
    return [
        "| target | before | now | the engine's floor | met |",
        "|---|---:|---:|---:|---|",
        *(_row(row) for row in rows),
    ]


def _range(runs: list[int]) -> str:
    return str(runs[0]) if runs[0] == runs[1] else f"{runs[0]}-{runs[1]}"


def render(doc: dict[str, Any]) -> str:
    """``bench/results/small_runs.md`` from ``bench/results/small_runs.json``."""
    sc = doc.get("scenarios")
    commands = [
        ".venv/bin/python bench/small_runs.py build                                  # once: the"
        " 1M warehouse"
    ]
    for key in ("scenarios", "floor", "graph_sizes", "loop"):
        commands += [_python(c) for c in (doc.get(key) or {}).get("commands", [])]
    lines = [
        "# Small runs: the fixed cost of a run",
        "",
        "Each scenario is one `spark-submit jobs/extract.py --config conf/local.yaml --config"
        " <overlay>`",
        "(what `make run` starts: extraction, then the graph stage and the OpenLineage emission"
        " to a",
        "JSON-lines file, in one application, JVM start included), run by `bench/small_runs.py`;"
        " the",
        "engine's floor is `bench/floor.py`:",
        "",
        "```bash",
        *commands,
        "```",
    ]
    if sc:
        labels = list(sc["labels"].items())
        who = ", ".join(
            f"*{label}* is `{spec['code']}`" + (f" ({spec['via']})" if spec.get("via") else "")
            for label, spec in reversed(labels)
        )
        order = " one after the other" if len(labels) > 1 else ""
        text = f"{who}, measured{order} on {sc['date']} between {sc['from']} and {sc['to']} UTC"
        text += f", {sc['conditions']}." if sc.get("conditions") else "."
        if sc["notes"].get("comparison"):
            text += " " + sc["notes"]["comparison"]
        lines += ["", *_wrap(text)]
    lines += ["", "## Machine", "", *_wrap(doc["machine"] + "."), "", "## Targets", ""]
    lines += _targets(doc)
    floor = doc.get("floor")
    if floor:
        lines += [
            "",
            "## The engine's floor",
            "",
            "`bench/floor.py` runs one application with the job's settings and packages that does"
            " only what",
            "no run can skip: create the tables, write each table's final rows (those the"
            " scenario's",
            "finished run left, computed beforehand) with one MERGE per table, two at a time, and"
            " run",
            "GraphFrames' `connectedComponents` and `stronglyConnectedComponents` on the table"
            " graph. No log",
            f"is read, nothing parsed or derived, no closure, no emission. {floor['window']}:",
            "",
            "| scenario | mode | wall s | session | create | write | components | cycles |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        shown = set()
        for row in floor["rows"]:
            scenario = row["scenario"]
            title = (
                "" if scenario in shown else FLOOR_SCENARIOS[scenario].format(tables=row["tables"])
            )
            shown.add(scenario)
            runs = row["runs"]
            cells = [
                _s([r[k] for r in runs]) if any(r[k] is not None for r in runs) else "-"
                for k in ("wall", "session", "create", "write", "components", "cycles")
            ]
            mode = FLOOR_MODES[scenario][row["mode"]]
            lines.append(_row([title, mode, *cells]))
        lines += _paragraphs(floor.get("notes", []))
    if sc:
        defaults = [n for n in SCENARIOS if n.startswith("default") and _measured(sc, n)]
        ones = [n for n in SCENARIOS if not n.startswith("default") and _measured(sc, n)]
        if defaults:
            lines += [
                "",
                "## The embedded default (conf/local.yaml, the 286-row sample)",
                "",
                "Seconds are wall-clock. *start* is the JVM, session and settings; *graph* and"
                " *emit* run at",
                "once after the extraction, each timed from its end.",
                "",
                *_scenario_table(sc, defaults, named=True),
                *_paragraphs([sc["notes"]["default"]] if sc["notes"].get("default") else []),
            ]
        if ones:
            heading = (
                "10k new rows onto" if ones == ["inc-10k"] else "Small runs onto"
            ) + " a warehouse holding the lineage of a 1M-row log"
            text = "The 1M warehouse was built with `bench/small_runs.py build`"
            stats = sc.get("warehouse_1m")
            if stats:
                text += (
                    f" ({stats['statements']:,} statements, {stats['table_edges']:,} table"
                    f" and {stats['column_edges_millions']:.2f}M column edge rows)"
                )
            text += "."
            for name in ones:
                if name in INCREMENTS:
                    _, rows, seed = INCREMENTS[name]
                    text += (
                        f" `{name}`: {rows:,} new log rows (`bench/generate_log.py --rows"
                        f" {rows} --seed {seed}`) onto a copy of it."
                    )
                else:
                    text += f" `{name}`: the 1M log's first 10,000 rows again, onto a copy of it."
            lines += [
                "",
                f"## {heading}",
                "",
                *_wrap(text),
                "",
                *_scenario_table(sc, ones, named=len(ones) > 1),
                *_paragraphs([sc["notes"]["1m"]] if sc["notes"].get("1m") else []),
            ]
    gs = doc.get("graph_sizes")
    if gs:
        text = (
            "`bench/small_runs.py graph-sizes`: a warehouse of N log rows, then 100 new rows with"
            " the graph stage forced incremental (`incremental_min_edges: 0`), then two full"
            " refreshes, in one warm application."
        )
        if gs.get("provenance"):
            text += " " + gs["provenance"]
        lines += [
            "",
            "## The graph stage: incremental or a full refresh, by size",
            "",
            *_wrap(text),
            "",
            "| log rows | table + column edge rows | incremental s | full refresh s |",
            "|---:|---:|---:|---:|",
        ]
        for row in gs["rows"]:
            rows = f"{row['rows']:,}" + (f" ({row['rows_note']})" if row.get("rows_note") else "")
            edges = f"{row['table_edges']:,} + {row['column_edges']:,}"
            lines.append(
                f"| {rows} | {edges} | {_measurements(row['incremental'])}"
                f" | {_measurements(row['full'])} |"
            )
        lines += _paragraphs(gs.get("notes", []))
    loop = doc.get("loop")
    if loop:
        text = f"`{loop['commands'][0]}`, `{loop['code']}`, {loop['date']} {loop['window']}"
        if loop["runs_done"] < loop["runs_planned"]:
            text += (
                f", stopped after {loop['runs_done']} runs ({loop['stopped']}; `--resume`"
                f" continues it at run {loop['runs_done'] + 1})"
            )
        text += (
            f". Each run is extract + graph + emit (file transport) of {loop['rows']} new log"
            " rows in one warm application, then a lookup query joining both edge tables."
        )
        lines += [
            "",
            "## The loop",
            "",
            *_wrap(text),
            "",
            "| runs | update s (median) | of which graph s | lookup query s |",
            "|---|---:|---:|---:|",
        ]
        for m in loop["medians"]:
            runs = _range(m["runs"]) + (" (empty warehouse)" if m["runs"] == [1, 1] else "")
            cells = [_s([m["update"]]), _s([m["graph"]]), _g(m["query"])]
            lines.append(_row([runs, *cells]))
        lines += _paragraphs(loop.get("notes", []))
    tp = doc.get("throughput")
    if tp:
        windows = "; ".join(f"{r['label']}: {r['window']}" for r in reversed(tp["runs"]))
        text = f"`{tp['commands'][0]}`, run from a checkout of each, {tp['date']} ({windows}):"
        lines += [
            "",
            "## The 1M-row throughput (no worse)",
            "",
            *_wrap(text),
            "",
            "| code | wall s | read | prepare | parse | write | job total s | peak RSS JVM MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in tp["runs"]:
            stages = " | ".join(f"{r[k]:.1f}" for k in ("read", "prepare", "parse", "write"))
            lines.append(
                f"| {r['label']} (`{r['code']}`) | {r['wall']:.0f} | {stages} | {r['total']:.1f}"
                f" | {r['peak_rss_jvm_mb']:,} |"
            )
        lines += _paragraphs(tp.get("notes", []))
    if sc and sc["notes"].get("where_the_time_goes"):
        lines += ["", "## Where the time goes", ""]
        for bullet in sc["notes"]["where_the_time_goes"]:
            lines += bullet
    return "\n".join(lines) + "\n"


def _measured(sc: dict[str, Any], name: str) -> bool:
    return any(name in spec["runs"] for spec in sc["labels"].values())


def _measurements(items: list[dict[str, Any]]) -> str:
    """``a / b`` per measurement, ``; ``-separated; one made by the script itself in bold with
    its command (and time)."""
    shown = []
    for m in items:
        text = _s(m["seconds"])
        if m.get("by"):
            at = f", {m['at']}" if m.get("at") else ""
            text = f"**{text}** (`{m['by']}`{at})"
        shown.append(text)
    return "; ".join(shown)


def report(args: argparse.Namespace) -> None:
    """Render ``--out`` (the Markdown results file) from ``--json``."""
    text = render(json.loads(args.json.read_text()))
    args.out.write_text(text)
    print(f"{args.out}: rendered from {args.json}")


# --- recording a section of the results file ---------------------------------------------------


def _window(stamps: list[tuple[str, str]]) -> tuple[str, str, str]:
    """(date, from, to) over ``(started, ended)`` UTC stamps: ``HH:MM``, the end with its date
    when another day."""
    start, end = min(a for a, _ in stamps), max(b for _, b in stamps)
    to = end[11:16] if end[:10] == start[:10] else end[:16]
    return start[:10], start[11:16], to


def _median(values: list[float], digits: int) -> float | None:
    return round(statistics.median(values), digits) if values else None


def record_scenarios(doc: dict[str, Any], args: argparse.Namespace) -> None:
    """The scenarios of ``--labels`` (``scenarios --label L`` runs, measured side by side), the
    1M warehouse's size from ``build``, and the newest label's ``default-noop`` as the rerun."""
    labels: dict[str, Any] = {}
    stamps: list[tuple[str, str]] = []
    commands, loads = [], []
    raw: dict[str, Any] = {}
    for label in args.labels:
        raw = json.loads((SMALL / f"{label}.json").read_text())
        runs = {
            r["scenario"]: {
                k: r.get(k)
                for k in (
                    "wall",
                    "start",
                    "extract",
                    "graph",
                    "emit",
                    "spark_jobs",
                    "commits_total",
                )
            }
            for r in sorted(raw["runs"], key=lambda r: SCENARIOS.index(r["scenario"]))
        }
        labels[label] = {
            "code": raw.get("commit") or "not in git",
            "via": "another checkout, as `--code`" if raw.get("other_checkout") else None,
            "runs": runs,
        }
        stamps += [(r["started"], r["ended"]) for r in raw["runs"]]
        loads += [r["load_before"] for r in raw["runs"]]
        commands.append(raw["command"])
    date, start, end = _window(stamps)
    section: dict[str, Any] = {
        "commands": commands,
        "date": date,
        "from": start,
        "to": end,
        "conditions": f"load average {loads[0]} before the first run",
        "labels": labels,
        "notes": {},
    }
    built = SMALL / "build.json"
    if built.exists():
        stats = json.loads(built.read_text())
        section["warehouse_1m"] = {
            "statements": stats["statements"],
            "table_edges": stats["table_edges"],
            "column_edges_millions": round(stats["column_edges"] / 1e6, 2),
        }
    doc["scenarios"] = section
    doc["machine"] = raw["machine"]
    noop = next((r for r in raw["runs"] if r["scenario"] == "default-noop"), None)
    if noop:
        _, start, end = _window([(noop["started"], noop["ended"])])
        doc["noop"] = {
            "code": labels[args.labels[-1]]["code"],
            "window": f"{start}-{end} UTC",
            "runs": [{k: noop[k] for k in ("wall", "commits_total", "spark_jobs")}],
            "note": None,
        }


def record_floor(doc: dict[str, Any], args: argparse.Namespace) -> None:
    """Every ``bench/floor.py`` result under bench/data/small (each scenario and mode)."""
    rows, commands, stamps = [], [], []
    for scenario in FLOOR_MODES:
        for mode in FLOOR_MODES[scenario]:
            path = SMALL / f"floor-{scenario}" / f"result-{mode}.json"
            if not path.exists():
                continue
            raw = json.loads(path.read_text())
            runs = raw["runs"]
            rows.append(
                {
                    "scenario": scenario,
                    "tables": runs[0]["tables"],
                    "mode": mode,
                    "runs": [
                        {
                            "wall": r["wall"],
                            "session": r["laps"]["session"],
                            "create": None if mode == "append" else r["laps"]["create"],
                            "write": r["laps"]["merge"],
                            "components": r["laps"]["components"],
                            "cycles": r["laps"]["cycles"],
                        }
                        for r in runs
                    ],
                }
            )
            commands += [raw["command"]] if raw["command"] not in commands else []
            stamps += [(r["started"], r["ended"]) for r in runs]
    if not rows:
        raise SystemExit(f"no floor results under {SMALL}: run bench/floor.py first")
    date, start, end = _window(stamps)
    doc["floor"] = {
        "commands": commands,
        "window": f"{date} {start}-{end} UTC",
        "rows": rows,
        "notes": [],
    }


def record_graph_sizes(doc: dict[str, Any], args: argparse.Namespace) -> None:
    """The last ``graph-sizes`` run."""
    raw = json.loads((SMALL / "graph-sizes.json").read_text())
    date, start, end = _window([(raw["started"], raw["ended"])])
    doc["graph_sizes"] = {
        "commands": [raw["command"]],
        "provenance": f"Measured on {date}, {start}-{end} UTC, at `{raw['commit']}`.",
        "rows": [
            {
                "rows": r["rows"],
                "rows_note": None,
                "table_edges": r["edges"]["table_lineage"],
                "column_edges": r["edges"]["column_lineage"],
                "incremental": [{"seconds": [r["incremental"]]}],
                "full": [{"seconds": r["full"]}],
            }
            for r in raw["results"]
        ],
        "notes": [],
    }


def record_loop(doc: dict[str, Any], args: argparse.Namespace) -> None:
    """The loop of ``--label``: the medians of its first run, runs 2-11 and its last ten."""
    raw = json.loads((SMALL / f"loop-{args.label}.json").read_text())
    per_run = raw["per_run"]
    done = len(per_run)
    ranges = [[1, 1], [2, min(11, done)]] + ([[done - 9, done]] if done >= 21 else [])
    medians = []
    for first, last in ranges:
        if first > done:
            continue
        chosen = per_run[first - 1 : last]
        medians.append(
            {
                "runs": [first, last],
                "update": _median([r["update"] for r in chosen], 1),
                "graph": _median([r["graph"] for r in chosen if r["graph"] is not None], 1),
                "query": _median([r["query"] for r in chosen], 2),
            }
        )
    parts = raw["parts"]
    date, start, end = _window([(parts[0]["started"], raw["ended"])])
    doc["loop"] = {
        "commands": [parts[0]["command"]],
        "code": " / ".join(dict.fromkeys(str(p["code"]) for p in parts)),
        "date": date,
        "window": f"{start}-{end} UTC",
        "runs_planned": raw["runs"],
        "runs_done": done,
        "rows": raw["rows"],
        "stopped": "`--max-runs`",
        "medians": medians,
        "notes": [],
    }


RECORDERS = {
    "scenarios": record_scenarios,
    "floor": record_floor,
    "graph-sizes": record_graph_sizes,
    "loop": record_loop,
}


def record(args: argparse.Namespace) -> None:
    """Write one section of ``--json`` from the raw results under bench/data/small; the
    section's notes go with the figures they were written about."""
    doc = json.loads(args.json.read_text()) if args.json.exists() else {}
    RECORDERS[args.section](doc, args)
    args.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"{args.json}: {args.section} recorded")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("watermark")
    for name in ("build", "scenarios"):
        p = sub.add_parser(name)
        p.add_argument("--code", type=Path, default=ROOT, help="checkout whose jobs run")
        if name == "scenarios":
            p.add_argument("--label", default="now")
            p.add_argument("--only", nargs="*", choices=SCENARIOS)
    p = sub.add_parser("loop")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--rows", type=int, default=100)
    p.add_argument("--label", default="now")
    p.add_argument("--resume", action="store_true", help="continue the saved loop of --label")
    p.add_argument("--max-runs", type=int, default=0, help="stop after this many runs (0: all)")
    p = sub.add_parser("graph-sizes")
    p.add_argument("--rows", type=int, nargs="+", default=[75_000, 300_000])
    p = sub.add_parser("record", help="write a section of the results JSON from raw results")
    p.add_argument("section", choices=list(RECORDERS))
    p.add_argument("--labels", nargs="+", default=["now"], help="scenarios: the labels")
    p.add_argument("--label", default="long", help="loop: the label")
    p.add_argument("--json", type=Path, default=RESULTS_JSON)
    p = sub.add_parser("report", help="render the results Markdown from the results JSON")
    p.add_argument("--json", type=Path, default=RESULTS_JSON)
    p.add_argument("--out", type=Path, default=RESULTS_MD)
    args = parser.parse_args(argv)
    args.command_line = command_line("bench/small_runs.py", sys.argv[1:] if argv is None else argv)
    if getattr(args, "code", None) is not None:
        args.code = args.code.resolve()
    {
        "build": build,
        "watermark": watermark,
        "scenarios": scenarios,
        "loop": loop,
        "record": record,
        "report": report,
        "graph-sizes": graph_sizes,
    }[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
