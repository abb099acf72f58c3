"""Reading Marquez back: its REST API (``/api/v1``) as plain dicts and sets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests


@dataclass(frozen=True)
class MarquezApi:
    url: str

    def get(self, path: str, **params: Any) -> Any:
        response = requests.get(f"{self.url}/api/v1/{path}", params=params, timeout=30)
        response.raise_for_status()
        return response.json()

    def _paged(self, path: str, key: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        while True:
            page = self.get(path, limit=200, offset=len(found))[key]
            found.extend(page)
            if len(page) < 200:
                return found

    def jobs(self, namespace: str) -> list[dict[str, Any]]:
        return self._paged(f"namespaces/{quote(namespace, safe='')}/jobs", "jobs")

    def datasets(self, namespace: str) -> list[dict[str, Any]]:
        return self._paged(f"namespaces/{quote(namespace, safe='')}/datasets", "datasets")

    def runs(self, namespace: str, job: str) -> list[dict[str, Any]]:
        path = f"namespaces/{quote(namespace, safe='')}/jobs/{quote(job, safe='')}/runs"
        return self._paged(path, "runs")

    def lineage(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return self.get("lineage", nodeId=f"dataset:{namespace}:{name}", depth=1)["graph"]

    def column_lineage(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return self.get("column-lineage", nodeId=f"dataset:{namespace}:{name}", depth=1)["graph"]

    def raw_events(self) -> list[dict[str, Any]]:
        """Every OpenLineage event Marquez stored (``/api/v1/events/lineage``)."""
        found: list[dict[str, Any]] = []
        while True:
            page = self.get(
                "events/lineage",
                limit=500,
                offset=len(found),
                sortDirection="asc",
                before="2100-01-01T00:00:00Z",
            )["events"]
            found.extend(page)
            if len(page) < 500:
                return found
