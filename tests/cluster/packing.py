"""The job packed as users ship it (docs/deploy.md): ``scripts/pack_env.sh`` builds the project's
wheel and a venv-pack archive of a venv holding it; ``spark-submit --archives
<archive>#environment`` with ``spark.pyspark.python=./environment/bin/python`` ships it to the
executors, which unpack it and run their Python workers from it.

The driver runs in client mode from the same archive, unpacked next to the submit
(``spark.pyspark.driver.python``), so neither side imports the repository's sources or its
development venv.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .spark_submit import ROOT

PACK = ROOT / "scripts" / "pack_env.sh"
ENVIRONMENT = "environment"
"""The archive's link name in each executor's working directory (``#environment``)."""


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


def pack(root: Path) -> Packed:
    """Run ``scripts/pack_env.sh`` on this interpreter's venv into ``root/dist``, and unpack the
    archive into ``root/driver/environment`` for the driver."""
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
