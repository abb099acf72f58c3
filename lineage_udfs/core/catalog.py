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

    __slots__ = ("_by_name", "_by_suffix", "_types")

    def __init__(self, catalog: Mapping[str, Mapping[str, object]] | None = None) -> None:
        self._by_name: dict[str, tuple[str, ...]] = {}
        self._by_suffix: dict[str, set[str]] = {}
        self._types: dict[str, dict[str, str]] = {}
        for key, value in _flatten(catalog or {}):
            name = ".".join(p.strip('`"[]').lower() for p in key.split("."))
            self._by_name[name] = tuple(str(c).lower() for c in value)
            types = {str(c).lower(): t for c, t in value.items() if isinstance(t, str) and t}
            if types:
                self._types[name] = types
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
        copy._types = {k: v for k, v in self._types.items() if k != table.lower()}
        name = table.lower()
        copy._by_name[name] = tuple(columns)
        parts = name.split(".")
        for i in range(len(parts)):
            copy._by_suffix.setdefault(".".join(parts[i:]), set()).add(name)
        return copy

    def columns(self, table: str) -> tuple[str, ...] | None:
        """Ordered column names of ``table``, or None when the catalog does not know it."""
        key = self._key(table)
        return None if key is None else self._by_name[key]

    def column_type(self, table: str, column: str) -> str | None:
        """The declared type of ``table.column`` as the catalog gives it, or None.

        Examples:
            >>> idx = CatalogIndex({"sales.orders": {"id": "BIGINT", "note": None}})
            >>> idx.column_type("orders", "ID"), idx.column_type("orders", "note")
            ('BIGINT', None)
        """
        key = self._key(table)
        return None if key is None else self._types.get(key, {}).get(column.lower())

    def _key(self, table: str) -> str | None:
        """The catalog's name for ``table`` (exact, less or more qualified), or None."""
        if not self._by_name:
            return None
        key = table.lower()
        if key in self._by_name:
            return key
        parts = key.split(".")
        for i in range(1, len(parts)):  # the name is more qualified than the catalog key
            shorter = ".".join(parts[i:])
            if shorter in self._by_name:
                return shorter
        names = self._by_suffix.get(key)  # the catalog key is more qualified than the name
        if names and len(names) == 1:
            return next(iter(names))
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
