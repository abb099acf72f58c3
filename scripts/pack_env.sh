#!/usr/bin/env bash
# The job as users ship it to a cluster (docs/deploy.md): the project's wheel, and a packed
# Python environment for spark-submit --archives <archive>#environment with
# spark.pyspark.python=./environment/bin/python.
#
#   scripts/pack_env.sh [--venv .venv] [--out dist] [--work build] [--python-prefix /usr]
#
# make dist runs it. --work holds the staging venv (pack-env/) and the build logs;
# --python-prefix (venv-pack's option) makes the packed bin/python link to PREFIX/bin/python3.11
# instead of this machine's interpreter: the prefix of Python 3.11 on the nodes (an image's /usr).
#
# Writes into --out (git-ignored):
#   lineage_warehouse-<version>-py3-none-any.whl   python -m build --wheel
#   lineage-warehouse-env.tar.gz                   venv-pack of a venv holding the wheel and its
#                                                  runtime requirements (extras spark, emit)
#
# The packed venv holds no pyspark (nor py4j): the driver and the executors import the one of
# the Spark that runs them ($SPARK_HOME/python/lib/pyspark.zip, on the Python workers' path), so
# the Python side always matches the JVM. Every other package has the exact version installed in
# --venv (the development venv the tests ran with): the requirements of the wheel's extras spark
# and emit are walked through --venv's installed metadata and installed with --no-deps.
#
# The packed venv's bin/python links to the interpreter that created it (Python 3.11 at the same
# path): a node that unpacks the archive needs that interpreter at that path (venv-pack's
# documented limit; docs/deploy.md says what to do on YARN and Kubernetes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv=".venv" out="dist" work="build" python_prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift ;;
    --out) out="$2"; shift ;;
    --work) work="$2"; shift ;;
    --python-prefix) python_prefix="$2"; shift ;;
    *) echo "pack_env.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
cd "$here"
py="$venv/bin/python"
[ -x "$py" ] || { echo "pack_env.sh: no $py (make venv)" >&2; exit 1; }
stage="$work/pack-env"
archive="$out/lineage-warehouse-env.tar.gz"
started=$(date +%s)

rm -rf "$stage" "$archive" "$out"/lineage_warehouse-*.whl
mkdir -p "$out" "$work"
"$py" -m build --wheel --outdir "$out" . >"$work"/pack-wheel.log 2>&1 \
  || { tail -30 "$work"/pack-wheel.log >&2; exit 1; }
wheel="$(ls "$out"/lineage_warehouse-*.whl)"

# name==version of every runtime requirement of the wheel (extras spark, emit), transitively,
# as installed in $venv; pyspark and what only it needs are left out
"$py" - "$wheel" >"$work"/pack-env-requirements.txt <<'PY'
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

FROM_SPARK = {"pyspark", "py4j"}
EXTRAS = ("spark", "emit")

with zipfile.ZipFile(sys.argv[1]) as wheel:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    metadata = wheel.read(name).decode("utf-8")
wanted = [
    Requirement(line.split(":", 1)[1].strip())
    for line in metadata.splitlines()
    if line.startswith("Requires-Dist:")
]
pending = [r for r in wanted if any(not r.marker or r.marker.evaluate({"extra": e}) for e in EXTRAS)]
pins: dict[str, str] = {}
while pending:
    requirement = pending.pop()
    key = canonicalize_name(requirement.name)
    if key in FROM_SPARK or key in pins:
        continue
    try:
        installed = distribution(requirement.name)
    except PackageNotFoundError:
        sys.exit(f"pack_env.sh: {requirement} is not installed in the venv (make venv)")
    if not requirement.specifier.contains(installed.version, prereleases=True):
        sys.exit(f"pack_env.sh: {requirement} but the venv has {installed.version}")
    pins[key] = installed.version
    for dependency in map(Requirement, installed.requires or []):
        extras = [""] + sorted(requirement.extras)
        if not dependency.marker or any(dependency.marker.evaluate({"extra": e}) for e in extras):
            pending.append(dependency)
print("\n".join(f"{n}=={v}" for n, v in sorted(pins.items())))
PY

"$py" -m venv --without-pip "$stage"
"$py" -m pip --python "$stage/bin/python" install --quiet --no-deps \
  -r "$work"/pack-env-requirements.txt "$wheel"

# the environment with Spark's own pyspark on the path, as a Python worker has it: the job's
# modules (driver and executor side) import
spark_home="$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
spark_path="$(ls "$spark_home"/python/lib/pyspark.zip "$spark_home"/python/lib/py4j-*-src.zip | paste -sd:)"
PYTHONPATH="$spark_path" "$stage/bin/python" -c '
import lineage_udfs.spark.pipeline, lineage_udfs.spark.parse.udfs, lineage_udfs.workflow
import pyspark, sys
assert not pyspark.__file__.startswith(sys.prefix), pyspark.__file__
'

"$venv/bin/venv-pack" --prefix "$stage" --output "$archive" --quiet \
  ${python_prefix:+--python-prefix "$python_prefix"}
chmod 644 "$archive"  # venv-pack writes it 0600; a shared upload location needs it readable
echo "$wheel"
echo "$archive: $(du -h "$archive" | cut -f1), $(wc -l <"$work"/pack-env-requirements.txt)" \
  "packages besides the wheel, $(($(date +%s) - started)) s"
