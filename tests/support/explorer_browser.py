"""Drive ``lineage serve`` as a user does: the server started and stopped by PID, the page in
headless Chromium through Selenium and Debian's ``chromium-driver``.

Used by the browser test (tests/spark/cli/test_explorer.py) and the explorer benchmark
(bench/explorer_bench.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LINEAGE = Path(sys.executable).parent / "lineage"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running ``lineage serve``: its process and base URL."""

    proc: subprocess.Popen[str]
    url: str
    log: Path

    def get(
        self, path: str, headers: dict[str, str] | None = None, method: str = "GET"
    ) -> tuple[int, Any, dict[str, str]]:
        """``method path``: the status, the JSON body (or text) and the response headers."""
        request = urllib.request.Request(self.url + path, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                status, body, got = response.status, response.read(), response.headers
        except urllib.error.HTTPError as exc:
            status, body, got = exc.code, exc.read(), exc.headers
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        return status, parsed, {k.lower(): v for k, v in got.items()}


@contextmanager
def lineage_server(
    args: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    env: dict[str, str] | None = None,
    host: str = "127.0.0.1",
    ready_timeout: float = 180.0,
) -> Iterator[Server]:
    """``lineage serve ARGS --host HOST --port <free>`` until its page answers; stopped (SIGTERM,
    then SIGKILL) by PID on exit."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(LINEAGE), "serve", *args, "--host", host, "--port", str(port)],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            text=True,
        )
    near = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # a wildcard bind: via loopback
    shown = f"[{near}]" if ":" in near else near
    server = Server(proc, f"http://{shown}:{port}", log)
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"lineage serve exited {proc.returncode}: {log.read_text()}")
            try:
                with socket.create_connection((near, port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"lineage serve did not listen: {log.read_text()}"
                    ) from None
                time.sleep(0.2)
        yield server
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


@contextmanager
def chromium(profile: Path, width: int = 1500, height: int = 900) -> Iterator[Any]:
    """Headless Chromium under Selenium, with Debian's driver (no download)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert browser and driver_path, (
        "the browser test needs Chromium and its driver: make test-deps "
        "(apt-get install chromium chromium-driver)"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--window-size={width},{height}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    service = Service(executable_path=driver_path, log_output=str(profile) + ".driver.log")
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_idle(driver: Any, after: int, timeout: float = 120.0) -> int:
    """Wait until the page finished an action numbered above ``after`` and is idle; the new
    action number (``body[data-seq]``)."""
    deadline = time.monotonic() + timeout
    while True:
        seq, busy = driver.execute_script(
            "return [Number(document.body.dataset.seq), document.body.dataset.busy]"
        )
        if seq > after and busy == "0":
            return int(seq)
        if time.monotonic() > deadline:
            raise AssertionError(f"the page stayed busy (seq {seq}, busy {busy})")
        time.sleep(0.05)


def drawn_tables(driver: Any) -> list[str]:
    """The tables drawn, in layout order (the page's hidden ``#labels`` list, read by
    ``textContent``: Selenium's ``.text`` of a hidden element is empty)."""
    return list(
        driver.execute_script(
            "return Array.from(document.querySelectorAll('#labels li')).map(li => li.textContent)"
        )
    )


def seq(driver: Any) -> int:
    return int(driver.execute_script("return Number(document.body.dataset.seq)"))


def timings(driver: Any) -> list[dict[str, Any]]:
    """``[{action, ms}]``: each action's time from its click to the drawn graph."""
    return list(driver.execute_script("return window.explorerTimings"))


def tap_node(driver: Any, node_id: str) -> None:
    """Click a graph node as a user does: a real mouse click at its rendered position."""
    from selenium.webdriver.common.action_chains import ActionChains

    x, y = driver.execute_script(
        "const n = cy.getElementById(arguments[0]); if (n.empty()) return [null, null];"
        "let p = n.renderedPosition();"
        # off screen (a tall layout is fitted at the page's least zoom): pan to it first,
        # as a user scrolls to a node before clicking it
        "if (p.x < 0 || p.y < 0 || p.x > cy.width() || p.y > cy.height()) {"
        "  cy.center(n); p = n.renderedPosition(); }"
        "return [p.x, p.y];",
        node_id,
    )
    assert x is not None, f"no node {node_id} drawn"
    box = driver.find_element("id", "cy")
    rect = box.rect
    ActionChains(driver).move_to_element_with_offset(
        box, int(x - rect["width"] / 2), int(y - rect["height"] / 2)
    ).click().perform()
