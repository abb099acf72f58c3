"""``spark-submit --deploy-mode cluster`` on a standalone master: refused for a Python
application, so the job runs in client mode there (docs/deploy.md, "Spark standalone")."""

from __future__ import annotations

from pathlib import Path

from .sample import EXTRACT
from .spark_submit import ROOT, submit
from .standalone import StandaloneCluster

REFUSAL = (
    "Cluster deploy mode is currently not supported for python applications on standalone clusters."
)


def test_cluster_deploy_mode_is_refused_for_the_job_on_standalone(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    """The job submitted as cluster mode would need it, conf/base.yaml shipped with
    ``--files``: spark-submit stops before any application reaches the master."""
    before = {a["id"] for a in cluster.state().get("completedapps", [])}
    refused = submit(
        cluster.master_url,
        EXTRACT,
        ["--config", str(ROOT / "conf" / "local.yaml")],
        cwd=tmp_path,
        options=["--deploy-mode", "cluster", "--files", str(ROOT / "conf" / "base.yaml")],
        timeout=120,
    )
    assert refused.returncode != 0
    assert REFUSAL in refused.output, refused.output[-3000:]
    state = cluster.state()
    assert state.get("activeapps", []) == [] and state.get("activedrivers", []) == []
    assert {a["id"] for a in state.get("completedapps", [])} == before
