"""A small OpenLineage-compatible HTTP collector for tests (stands in for Marquez).

``POST /api/v1/lineage`` validates each event against the stored OpenLineage schemas, stores it
and answers 201 (Marquez answers 201 too); invalid events get 400. ``fail_with = 503`` makes it
answer that status without storing; ``stop()`` / ``start()`` take it down and bring it back on
the same port.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from jsonschema import ValidationError

from support.ol_schemas import validate_event


class Collector:
    """Thread-backed collector bound to 127.0.0.1 on an ephemeral port."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self.fail_with: int | None = None
        self.auth_headers: list[str | None] = []
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Collector:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/api/v1/lineage":
                    self._answer(404)
                    return
                if collector.fail_with is not None:
                    self._answer(collector.fail_with)
                    return
                try:
                    event = json.loads(body)
                    validate_event(event)
                except (ValueError, ValidationError, AssertionError) as exc:
                    with collector._lock:
                        collector.rejected.append(str(exc)[:500])
                    self._answer(400)
                    return
                with collector._lock:
                    collector.events.append(event)
                    collector.auth_headers.append(self.headers.get("Authorization"))
                self._answer(201)

            def _answer(self, status: int) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
