"""The command-line jobs fail with one readable line and a non-zero exit (no Spark needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lineage_udfs.emit.spool import Spool

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "jobs" / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_config_error_is_one_line_naming_the_key(tmp_path: Path) -> None:
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("parser:\n  timeout_seconds: soon\nsink:\n  bse_path: x\n")
    done = _run("extract.py", "--config", str(overlay), cwd=tmp_path)
    assert done.returncode == 2
    lines = _lines(done.stderr + done.stdout)
    assert len(lines) == 1, lines
    assert "timeout_seconds" in lines[0]
    assert "sink.bse_path" in lines[0]
    assert "conf/base.yaml" in lines[0]


def test_yaml_syntax_error_is_one_line(tmp_path: Path) -> None:
    overlay = tmp_path / "broken.yaml"
    overlay.write_text("parser: [unclosed\n")
    done = _run("extract.py", "--config", str(overlay), cwd=tmp_path)
    assert done.returncode == 2
    lines = _lines(done.stderr + done.stdout)
    assert len(lines) == 1 and "not valid YAML" in lines[0], lines


def test_replay_that_cannot_deliver_exits_non_zero(tmp_path: Path) -> None:
    spool_dir = tmp_path / "spool"
    writer = Spool(spool_dir, 1 << 20).writer("test")
    writer.append(json.dumps({"eventType": "COMPLETE", "eventTime": "2024-01-01T00:00:00Z"}))
    writer.close()
    overlay = tmp_path / "ol.yaml"
    overlay.write_text(
        "openlineage:\n"
        "  enabled: true\n"
        "  transport: {type: http, url: 'http://127.0.0.1:9', timeout: 0.5, retries: 0}\n"
        f"  spool: {{path: '{spool_dir}'}}\n"
    )
    base = ROOT / "conf" / "base.yaml"
    done = _run(
        "emit_openlineage.py",
        "--config",
        str(base),
        "--config",
        str(overlay),
        "--replay",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "could not deliver 1 spooled events" in done.stderr
    assert "Traceback" not in done.stderr
