"""Draw an answer's graph: one self-contained HTML page (Cytoscape.js and its dagre layout
inlined from package data: pan, zoom, click; no network when viewed) or SVG through Graphviz
``dot``. Both lay tables out left to right in layers, each table with its columns, edges
labelled with their transformation types, the asked table highlighted."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

from lineage_udfs.cli.queries import Graph
from lineage_udfs.cli.store import CliError

SCRIPTS = ("cytoscape.min.js", "cytoscape-dagre.min.js")
MAX_COLUMNS_SHOWN = 14
"""Columns listed inside a node; the rest are counted (all are in the click panel)."""

_STYLE = """
html, body { margin: 0; height: 100%; font: 13px system-ui, sans-serif; color: #1f2933; }
#bar { padding: 8px 12px; border-bottom: 1px solid #d9dee3; display: flex; gap: 16px;
       align-items: baseline; }
#bar h1 { font-size: 15px; margin: 0; }
#bar .hint { color: #66727f; }
#main { display: flex; height: calc(100% - 40px); }
#cy { flex: 1; min-width: 0; }
#panel { width: 320px; border-left: 1px solid #d9dee3; padding: 10px 12px; overflow: auto; }
#panel h2 { font-size: 14px; margin: 4px 0 8px; word-break: break-all; }
#panel table { border-collapse: collapse; width: 100%; font-size: 12px; }
#panel td, #panel th { border-bottom: 1px solid #eef1f4; padding: 2px 4px; text-align: left; }
#labels { display: none; }
#panel td.mark { color: #c92a2a; }
"""

_SCRIPT = """
const data = JSON.parse(document.getElementById('graph-data').textContent);
const panel = document.getElementById('panel');
function esc(s) { return String(s ?? '').replace(/[&<>"]/g,
  c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]); }
const elements = [];
for (const n of data.nodes) {
  elements.push({group: 'nodes', data: {id: n.id, label: n.label, kind: n.kind,
    w: n.width, h: n.height}, classes: n.classes});
}
data.edges.forEach((e, i) => elements.push({group: 'edges', data: {id: 'e' + i,
  source: e.source, target: e.target, label: e.label.split(' / ').join('\\n'), index: i}}));
const cy = cytoscape({
  container: document.getElementById('cy'), elements, wheelSensitivity: 0.3,
  style: [
    {selector: 'node', style: {shape: 'round-rectangle', 'background-color': '#f5f8fb',
      'border-width': 1, 'border-color': '#8a99a8', label: 'data(label)',
      'text-wrap': 'wrap', 'text-valign': 'center', 'text-halign': 'center',
      'font-family': 'monospace', 'font-size': 11, width: 'data(w)', height: 'data(h)',
      'text-justification': 'left'}},
    {selector: 'node.view', style: {'background-color': '#eef7ee'}},
    {selector: 'node.external', style: {'background-color': '#fbf5e9', 'border-style': 'dashed'}},
    {selector: 'node.late', style: {'background-color': '#fff4d6', 'border-color': '#d9480f',
      'border-width': 3, 'border-style': 'dashed'}},
    {selector: 'node.stopped', style: {'background-color': '#ffe3e3', 'border-color': '#c92a2a',
      'border-width': 3, 'border-style': 'dashed'}},
    {selector: 'node.marked', style: {'border-width': 3, 'border-color': '#c92a2a',
      'background-color': '#fff5f5'}},
    {selector: 'node.focus', style: {'border-width': 4, 'border-color': '#e8590c',
      'background-color': '#fff1e6'}},
    {selector: 'node:selected', style: {'border-color': '#1c7ed6', 'border-width': 4}},
    {selector: 'edge', style: {'curve-style': 'bezier', width: 1.5, 'line-color': '#8a99a8',
      'target-arrow-shape': 'triangle', 'target-arrow-color': '#8a99a8', label: 'data(label)',
      'font-size': 9, 'text-wrap': 'wrap', 'text-max-width': 200,
      'text-background-color': '#ffffff', 'text-background-opacity': 0.85,
      'text-background-padding': 2}},
    {selector: 'edge:selected', style: {'line-color': '#1c7ed6', 'target-arrow-color': '#1c7ed6',
      width: 3}},
  ],
  layout: {name: 'dagre', rankDir: 'LR', nodeSep: 30, rankSep: 230, edgeSep: 20,
    fit: true, padding: 30},
});
function showNode(n) {
  const node = data.nodes.find(x => x.id === n.id());
  const ins = data.edges.filter(e => e.target === node.id).map(e => e.source);
  const outs = data.edges.filter(e => e.source === node.id).map(e => e.target);
  panel.innerHTML = '<h2>' + esc(node.id) + '</h2><p>' + esc(node.kind) +
    (node.distance != null ? ', distance ' + node.distance : '') +
    (node.status ? ', <b>' + esc(node.status) + '</b>' : '') + '</p>' +
    '<p><b>from</b> ' + (ins.map(esc).join(', ') || '-') + '<br><b>to</b> ' +
    (outs.map(esc).join(', ') || '-') + '</p><table><tr><th>columns (' +
    node.columns.length + ')</th></tr>' +
    node.columns.map(c => '<tr><td' + (node.marks[c] ? ' class="mark"' : '') + '>' + esc(c) +
      (node.marks[c] ? ' <b>[' + esc(node.marks[c]) + ']</b>' : '') + '</td></tr>').join('') +
    '</table>';
}
function showEdge(e) {
  const edge = data.edges[e.data('index')];
  panel.innerHTML = '<h2>' + esc(edge.source) + ' &rarr; ' + esc(edge.target) + '</h2><p>' +
    esc(edge.edge_kinds.join(', ')) + '</p><table><tr><th>source</th><th>target</th>' +
    '<th>transformation</th></tr>' + edge.columns.map(c => '<tr><td>' +
    esc(c.source_column) + '</td><td>' + esc(c.target_column) + '</td><td>' +
    esc(c.transformation_type) + ' ' + esc(c.transformation_subtype) + '</td></tr>').join('') +
    '</table>';
}
cy.on('tap', 'node', ev => showNode(ev.target));
cy.on('tap', 'edge', ev => showEdge(ev.target));
const focus = data.focus ? cy.getElementById(data.focus) : null;
if (focus && focus.nonempty()) { showNode(focus); }
// What the page drew, in the DOM: node labels in layout order (left to right), for tests and
// for screen readers.
const list = document.getElementById('labels');
cy.nodes().sort((a, b) => a.position('x') - b.position('x') || a.position('y') - b.position('y'))
  .forEach(n => { const li = document.createElement('li'); li.textContent = n.id();
    li.dataset.x = Math.round(n.position('x')); li.dataset.kind = n.data('kind');
    for (const s of ['late', 'stopped']) if (n.hasClass(s)) li.dataset.status = s;
    if (n.hasClass('focus')) li.dataset.focus = 'true';
    const marks = data.nodes.find(x => x.id === n.id()).marks;
    if (Object.keys(marks).length) li.dataset.marks = Object.entries(marks)
      .map(([c, m]) => c + ':' + m).join(',');
    list.appendChild(li); });
document.body.dataset.rendered = String(cy.nodes().length);
"""


def graph_page_data(graph: Graph) -> dict[str, Any]:
    """The graph as the page's script reads it: nodes with label text and box size."""
    data = graph.to_dict()
    for node in data["nodes"]:
        columns = node["columns"]
        marks = node["marks"]
        # marked columns first, so a highlighted one is never among the "more"
        ordered = [c for c in columns if c in marks] + [c for c in columns if c not in marks]
        shown = [
            ("* " if graph.focus_column == c and node["id"] == graph.focus else "  ")
            + c
            + (f"  [{marks[c]}]" if c in marks else "")
            for c in ordered[:MAX_COLUMNS_SHOWN]
        ]
        if len(columns) > MAX_COLUMNS_SHOWN:
            shown.append(f"  ... {len(columns) - MAX_COLUMNS_SHOWN} more")
        lines = [node["id"], *(["-" * min(40, len(node["id"]))] if shown else []), *shown]
        node["label"] = "\n".join(lines)
        node["width"] = max(len(line) for line in lines) * 7 + 24
        node["height"] = len(lines) * 14 + 16
        node["classes"] = " ".join(
            c
            for c in (
                node["kind"],
                node.get("status"),
                "focus" if node["id"] == graph.focus else "",
                "marked" if marks else "",
            )
            if c
        )
    return data


def _inline_script(name: str) -> str:
    text = resources.files("lineage_udfs.cli").joinpath("static", name).read_text("utf-8")
    lines = [ln for ln in text.splitlines() if not ln.startswith("//# sourceMappingURL=")]
    return "\n".join(lines).replace("</script", "<\\/script")


def to_html(graph: Graph, title: str) -> str:
    """One self-contained HTML page drawing ``graph``."""
    payload = json.dumps(graph_page_data(graph), default=str).replace("</", "<\\/")
    scripts = "\n".join(f"<script>\n{_inline_script(name)}\n</script>" for name in SCRIPTS)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<div id='bar'><h1>{html.escape(title)}</h1><span class='hint'>"
        f"{len(graph.nodes)} tables, {len(graph.edges)} edges; drag to pan, wheel to zoom, "
        "click a table or an edge for its columns</span></div>"
        "<div id='main'><div id='cy'></div><div id='panel'></div></div>"
        "<ol id='labels'></ol>"
        f"<script type='application/json' id='graph-data'>{payload}</script>"
        f"{scripts}\n<script>{_SCRIPT}</script></body></html>\n"
    )


def to_dot(graph: Graph, title: str) -> str:
    """Graphviz source: left-to-right, each table a box listing its columns."""
    layers = graph.layers()
    ids = {name: f"n{i}" for i, name in enumerate(sorted(graph.nodes))}
    lines = [
        "digraph lineage {",
        "  rankdir=LR; ranksep=1.2; nodesep=0.4;",
        f'  label="{_dot_str(title)}"; labelloc=t; fontname="Helvetica";',
        '  node [shape=plaintext, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8, color="#6b7b8c"];',
    ]
    for name in sorted(graph.nodes, key=lambda n: (layers.get(n, 0), n)):
        node = graph.nodes[name]
        focus = name == graph.focus
        fill = (
            "#fff1e6"
            if focus
            else {"view": "#eef7ee", "external": "#fbf5e9"}.get(node.kind, "#f5f8fb")
        )
        border = "#e8590c" if focus else "#8a99a8"
        rows = [
            f'<tr><td bgcolor="{border if focus else "#dde4ea"}"><b>{html.escape(name)}</b>'
            f"</td></tr>"
        ]
        for column in node.columns[:MAX_COLUMNS_SHOWN]:
            mark = "<b>* </b>" if focus and column == graph.focus_column else ""
            tagged = graph.marks.get((name, column))
            text = html.escape(column) + (
                f' <font color="#c92a2a"><b>[{html.escape(tagged)}]</b></font>' if tagged else ""
            )
            rows.append(f'<tr><td align="left">{mark}{text}</td></tr>')
        if len(node.columns) > MAX_COLUMNS_SHOWN:
            rows.append(
                f'<tr><td align="left"><i>... {len(node.columns) - MAX_COLUMNS_SHOWN} more'
                "</i></td></tr>"
            )
        width = 3 if focus else 1
        lines.append(
            f'  {ids[name]} [tooltip="{_dot_str(name)}", label=<<table border="{width}" '
            f'cellborder="0" cellspacing="0" cellpadding="3" color="{border}" '
            f'bgcolor="{fill}">{"".join(rows)}</table>>];'
        )
    for (src, dst), edge in sorted(graph.edges.items()):
        label = edge.label.replace(" / ", "\n")
        lines.append(f'  {ids[src]} -> {ids[dst]} [label="{_dot_str(label)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_str(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_svg(graph: Graph, title: str) -> str:
    """SVG from Graphviz ``dot``.

    Raises:
        CliError: ``dot`` is not installed or fails.
    """
    dot = shutil.which("dot")
    if dot is None:
        raise CliError(
            "--svg needs Graphviz `dot` on PATH (Debian/Ubuntu: apt-get install graphviz)"
        )
    done = subprocess.run(
        [dot, "-Tsvg"], input=to_dot(graph, title), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise CliError(f"dot failed: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


def write(graph: Graph, title: str, path: Path, fmt: str) -> None:
    """Write the graph as ``fmt`` (html or svg) to ``path``."""
    text = to_html(graph, title) if fmt == "html" else to_svg(graph, title)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from None
