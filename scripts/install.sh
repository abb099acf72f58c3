#!/usr/bin/env bash
# The one install script: `make venv` (a developer's .venv) and the Dockerfile (the image) both
# run it, so the two install the same way.
#
#   scripts/install.sh --system                 # as root, Debian/Ubuntu: Java 17 + Python 3.11 (apt)
#   scripts/install.sh --venv .venv --extras spark,emit,cli,dev --editable
#   scripts/install.sh --venv /opt/lineage/.venv --extras spark,emit,cli --resolve-jars
#
# --python PY      interpreter that creates the venv (default: python3.11, else python3)
# --venv DIR       create DIR (unless it exists) and install the project into it
# --extras LIST    pyproject extras to install (comma separated)
# --editable       pip install -e (development); otherwise a regular install
# --resolve-jars   start Spark once with conf/base.yaml's packages (the Delta jars), write and
#                  read a Delta table: the jars land in the Ivy cache now, not at first run
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python_bin="" venv="" extras="" editable=0 resolve=0 system=0
while [ $# -gt 0 ]; do
  case "$1" in
    --system) system=1 ;;
    --python) python_bin="$2"; shift ;;
    --venv) venv="$2"; shift ;;
    --extras) extras="$2"; shift ;;
    --editable) editable=1 ;;
    --resolve-jars) resolve=1 ;;
    *) echo "install.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ "$system" = 1 ]; then
  # Java 17 (Spark 4) and Python 3.11 (Debian bookworm's python3); procps: Spark's scripts use ps
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends \
    openjdk-17-jre-headless python3 python3-venv python3-pip procps ca-certificates
  rm -rf /var/lib/apt/lists/*
  java -version 2>&1 | head -1
  python3 --version
fi

if [ -n "$venv" ]; then
  if [ -z "$python_bin" ]; then
    python_bin="$(command -v python3.11 || command -v python3)"
  fi
  "$python_bin" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    || { echo "install.sh: Python 3.11 is required ($python_bin)" >&2; exit 1; }
  [ -x "$venv/bin/python" ] || "$python_bin" -m venv "$venv"
  target="$here"
  [ -n "$extras" ] && target="$here[$extras]"
  if [ "$editable" = 1 ]; then
    "$venv/bin/python" -m pip install --quiet -e "$target"
  else
    "$venv/bin/python" -m pip install --quiet --no-cache-dir "$target"
  fi
fi

if [ "$resolve" = 1 ]; then
  py="${venv:+$venv/bin/python}"
  py="${py:-python3}"
  # a build container's hostname need not resolve: bind the local driver to the loopback
  (cd "$here" && SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_HOSTNAME=localhost "$py" - <<'PY'
import tempfile
from pathlib import Path

from lineage_udfs.settings import load_settings
from lineage_udfs.spark.runtime.session import build_spark_session

settings = load_settings([Path("conf/base.yaml"), Path("conf/local.yaml")])
spark = build_spark_session(settings.spark)
with tempfile.TemporaryDirectory() as tmp:
    spark.range(3).write.format("delta").save(f"{tmp}/t")
    rows = spark.read.format("delta").load(f"{tmp}/t").count()
print(f"Spark {spark.version} with {settings.spark.packages}: Delta table of {rows} rows")
spark.stop()
PY
  )
fi
