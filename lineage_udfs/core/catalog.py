"""Schema awareness: an index over the optional ``{table: {column: type}}`` catalog.

Names are matched the way a session resolves them: a catalog key ``sales.orders`` answers for
``orders``, ``sales.orders`` and ``main.sales.orders`` (unique dotted-suffix match).
"""

from __future__ import annotations

from collections.abc import Mapping


class CatalogIndex:
    """Column lists of known tables, looked up by canonical name or unique dotted suffix.

    Args:
        catalog: ``{table name: {column: type}}`` with columns in declared order, or
            ``{db: {table: {column: type}}}`` (nested form, as in the benchmark's schema file).

    Examples:
        >>> idx = CatalogIndex({"sales.orders": {"ID": "int", "amount": None}})
        >>> idx.columns("main.sales.orders"), idx.columns("orders"), idx.columns("x")
        (('id', 'amount'), ('id', 'amount'), None)
        >>> idx.columns("crm.orders") is None  # another schema's table of the same name
        True
    """

    __slots__ = ("_by_name", "_by_suffix")

    def __init__(self, catalog: Mapping[str, Mapping[str, object]] | None = None) -> None:
        self._by_name: dict[str, tuple[str, ...]] = {}
        self._by_suffix: dict[str, set[str]] = {}
        for key, value in _flatten(catalog or {}):
            name = ".".join(p.strip('`"[]').lower() for p in key.split("."))
            self._by_name[name] = tuple(str(c).lower() for c in value)
            parts = name.split(".")
            for i in range(len(parts)):
                self._by_suffix.setdefault(".".join(parts[i:]), set()).add(name)

    def __bool__(self) -> bool:
        return bool(self._by_name)

    def with_table(self, table: str, columns: tuple[str, ...]) -> CatalogIndex:
        """A copy that also knows ``table`` (e.g. created earlier in the same script)."""
        copy = CatalogIndex()
        copy._by_name = dict(self._by_name)
        copy._by_suffix = {k: set(v) for k, v in self._by_suffix.items()}
        name = table.lower()
        copy._by_name[name] = tuple(columns)
        parts = name.split(".")
        for i in range(len(parts)):
            copy._by_suffix.setdefault(".".join(parts[i:]), set()).add(name)
        return copy

    def columns(self, table: str) -> tuple[str, ...] | None:
        """Ordered column names of ``table``, or None when the catalog does not know it."""
        if not self._by_name:
            return None
        key = table.lower()
        found = self._by_name.get(key)
        if found is not None:
            return found
        parts = key.split(".")
        for i in range(1, len(parts)):  # the name is more qualified than the catalog key
            found = self._by_name.get(".".join(parts[i:]))
            if found is not None:
                return found
        names = self._by_suffix.get(key)  # the catalog key is more qualified than the name
        if names and len(names) == 1:
            return self._by_name[next(iter(names))]
        return None


def _flatten(
    catalog: Mapping[str, object], prefix: str = ""
) -> list[tuple[str, Mapping[str, object]]]:
    out: list[tuple[str, Mapping[str, object]]] = []
    for key, value in catalog.items():
        if not isinstance(value, Mapping):
            continue
        name = f"{prefix}{key}"
        if value and all(isinstance(v, Mapping) for v in value.values()):
            out.extend(_flatten(value, f"{name}."))
        else:
            out.append((name, value))
    return out
