"""``lineage aliases <name>``: what a dataset name is linked to, on what evidence, and the node
the graph merges it into (``dataset_aliases``; ``lineage_udfs.core.identity``)."""

from __future__ import annotations

from lineage_udfs.cli.model import Answer
from lineage_udfs.cli.store import LineageStore
from lineage_udfs.core.identity import holds, resolve

ALIAS_COLUMNS = ["alias", "canonical", "evidence", "detail", "confidence", "status", "merged"]


def aliases(store: LineageStore, name: str, min_confidence: float = 0.9) -> Answer:
    """The links of ``name`` (as given, else lower-cased) and the class the graph merges it
    into: links accepted, or proposed with at least ``min_confidence``
    (``graph.alias_min_confidence``)."""
    links = store.alias_links()
    names = {x.alias for x in links} | {x.canonical for x in links}
    wanted = name if name in names else name.strip().lower()
    mine = sorted(
        (x for x in links if wanted in (x.alias, x.canonical)),
        key=lambda x: (-x.confidence, x.alias, x.canonical, x.evidence),
    )
    if not mine:
        return Answer(
            f"aliases of {name}", ALIAS_COLUMNS, [], message=f"no alias links name {name}",
            found=False,
        )  # fmt: skip
    rows = [
        {
            "alias": x.alias,
            "canonical": x.canonical,
            "evidence": x.evidence,
            "detail": x.detail,
            "confidence": x.confidence,
            "status": x.status,
            "merged": holds(x, min_confidence),
        }
        for x in mine
    ]
    classes = resolve(links, min_confidence)
    node = classes.get(wanted, wanted)
    members = sorted(n for n, c in classes.items() if c == node and n != wanted)
    if members:
        message = f"{wanted} is the graph node {node}, with {', '.join(members)}"
    else:
        message = f"{wanted} is a graph node of its own: no link of it holds"
    return Answer(f"aliases of {wanted}", ALIAS_COLUMNS, rows, message=message)
