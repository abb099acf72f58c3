"""The job shipped as users ship it (docs/deploy.md): the project's wheel inside a venv-pack
archive (``make dist``, scripts/pack_env.sh), passed with ``--archives <archive>#environment``
and ``spark.pyspark.python=./environment/bin/python``; the executors unpack it and run their
Python workers from it, with the pyspark of the Spark that runs them.

The driver runs in client mode from the same archive, unpacked next to the submit
(``spark.pyspark.driver.python``), so neither side imports the repository's sources or its
development venv: the archive alone runs the job.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

from .sample import SampleRun, sample_overlay
from .spark_submit import ROOT, Submitted, submit
from .standalone import SPARK_HOME, StandaloneCluster

PACK = ROOT / "scripts" / "pack_env.sh"
EXTRACT = ROOT / "jobs" / "extract.py"
PROBE = Path(__file__).resolve().parent / "env_probe.py"
ENVIRONMENT = "environment"
"""The archive's link name in each executor's working directory (``#environment``)."""
LINEAGE = Path("warehouse") / "lineage"
"""conf/local.yaml's sink, relative to the driver's working directory."""
EXTRACT_TABLES = (
    "parsed_statements",
    "queries",
    "table_lineage",
    "column_lineage",
    "quarantine",
    "lineage_runs",
    "openlineage_emissions",
)
"""The tables an extract writes with the graph stage off."""
SAME_ROWS = ("table_lineage", "column_lineage")
"""Tables with no column of the run itself (ids, times): equal row for row across two runs."""


@dataclass(frozen=True)
class Packed:
    """What ``scripts/pack_env.sh`` built, and the archive unpacked for the driver."""

    wheel: Path
    archive: Path
    driver_env: Path
    seconds: float

    def submit_options(self) -> tuple[list[str], dict[str, str]]:
        """The spark-submit options of docs/deploy.md's standalone section (client mode)."""
        return (
            ["--archives", f"{self.archive}#{ENVIRONMENT}"],
            {
                "spark.pyspark.python": f"./{ENVIRONMENT}/bin/python",
                "spark.pyspark.driver.python": str(self.driver_env / "bin" / "python"),
            },
        )


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Packed:
    root = tmp_path_factory.mktemp("packed")
    started = time.monotonic()
    subprocess.run(
        [str(PACK), "--venv", sys.prefix, "--out", str(root / "dist"), "--work", str(root)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    (wheel,) = (root / "dist").glob("lineage_warehouse-*.whl")
    archive = root / "dist" / "lineage-warehouse-env.tar.gz"
    driver_env = root / "driver" / ENVIRONMENT
    driver_env.mkdir(parents=True)
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(driver_env)], check=True)
    return Packed(wheel, archive, driver_env, seconds)


def _submit_packed(
    packed: Packed, master: str, application: Path, arguments: list[str], cwd: Path
) -> Submitted:
    options, confs = packed.submit_options()
    return submit(
        master,
        application,
        arguments,
        cwd=cwd,
        options=options,
        # scheduling starts once both executors are registered
        confs={
            **confs,
            "spark.cores.max": "2",
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        },
    ).check()


def _site_packages(prefix: Path) -> Path:
    return prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def test_packed_environment_runs_the_driver_and_every_executor_task(
    packed: Packed, cluster: StandaloneCluster, tmp_path: Path
) -> None:
    """From inside each task: its Python is ``<executor dir>/environment/bin/python`` (the
    unpacked archive, one per executor, on both workers), the project and sqlglot come from that
    environment's site-packages, pyspark from Spark's own ``python/lib/pyspark.zip``; nothing
    from the repository or its venv. The driver's Python is the archive unpacked for it."""
    out = tmp_path / "probe.json"
    _submit_packed(packed, cluster.master_url, PROBE, [str(out)], tmp_path)
    report = json.loads(out.read_text("utf-8"))
    driver, rows = report["driver"], report["rows"]
    pyspark_zip = SPARK_HOME / "python" / "lib" / "pyspark.zip"

    assert driver["master"] == cluster.master_url
    assert Path(driver["prefix"]) == packed.driver_env
    assert Path(driver["lineage_udfs"]).is_relative_to(_site_packages(packed.driver_env))
    assert Path(driver["pyspark"]).is_relative_to(pyspark_zip), driver["pyspark"]

    assert sorted(r["row"] for r in rows) == list(range(len(rows)))
    workers = {cluster.work_dir(i) / driver["app_id"]: i for i in range(cluster.workers)}
    seen_workers = set()
    for row in rows:
        executor_dir = Path(row["cwd"])
        assert executor_dir.parent in workers and executor_dir.name.isdigit(), row["cwd"]
        seen_workers.add(workers[executor_dir.parent])
        environment = executor_dir / ENVIRONMENT
        assert Path(row["executable"]) == environment / "bin" / "python", row
        assert Path(row["prefix"]) == environment, row
        for module in ("lineage_udfs", "sqlglot"):
            assert Path(row[module]).is_relative_to(_site_packages(environment)), row
            assert not Path(row[module]).is_relative_to(ROOT), row
        assert Path(row["pyspark"]).is_relative_to(pyspark_zip), row
        assert row["pid"] != driver["pid"]
        expected = LineageParser(ParserOptions()).parse(
            f"INSERT INTO t{row['row']} SELECT a FROM s{row['row']}", dialect="spark"
        )
        assert tuple(row["targets"]) == expected.targets
    assert seen_workers == set(range(cluster.workers))


def _table(run: Path, table: str) -> list[str]:
    """Every row of ``table`` as sorted canonical JSON (read with delta-rs' query engine, which
    applies deletion vectors)."""
    delta = DeltaTable(str(run / LINEAGE / table))
    data = pa.table(QueryBuilder().register("t", delta).execute("SELECT * FROM t").read_all())
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in data.to_pylist())


def test_packed_extract_on_the_cluster_equals_a_local_run(
    packed: Packed, cluster: StandaloneCluster, sample_local: SampleRun, tmp_path: Path
) -> None:
    """``jobs/extract.py`` on the sample, submitted to the cluster with the packed environment,
    against the session's ``local[2]`` run of the same job (submitted as ``make run`` does, the
    development venv): the extraction's tables with as many rows each, the edges row for row,
    the same OpenLineage events. The graph stage is off here (the cheapest real run: the
    packed environment's part is the parse and the emission in the executors; the graph stage
    on the cluster is test_sample_on_cluster's)."""
    overlay = sample_overlay(tmp_path, graph={"enabled": False})
    arguments = ["--config", str(ROOT / "conf" / "local.yaml"), "--config", str(overlay)]
    ran = _submit_packed(packed, cluster.master_url, EXTRACT, arguments, tmp_path)
    assert f"master {cluster.master_url})" in ran.output
    shipped = SampleRun(tmp_path, ran)

    tables = sorted(p.name for p in shipped.lineage.iterdir())
    assert set(EXTRACT_TABLES) <= set(tables)
    assert set(tables) <= {p.name for p in sample_local.lineage.iterdir()}
    for table in EXTRACT_TABLES:
        assert len(_table(tmp_path, table)) == len(_table(sample_local.cwd, table)), table
    for table in SAME_ROWS:
        assert _table(tmp_path, table) == _table(sample_local.cwd, table), table
    assert _table(tmp_path, "column_lineage"), "the sample gives column lineage"
    events = sorted(json.dumps(e, sort_keys=True) for e in shipped.events())
    assert events == sorted(json.dumps(e, sort_keys=True) for e in sample_local.events())
    assert events
