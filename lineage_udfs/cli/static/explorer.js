// The lineage explorer page (served by `lineage serve`): search, a graph centred on a table or
// column, upstream / downstream / both, expand on click, a column mode drawing column-to-column
// edges, and a side panel. The view lives in the URL's fragment, so every view can be shared.
'use strict';

const $ = id => document.getElementById(id);
const panel = $('panel');
const statusLine = $('status');
const MAX_COLUMNS_SHOWN = 14;
const MAX_COLUMN_NODES = 400;  // column mode: columns drawn at most (the nearest tables')
const READABLE_ZOOM = 0.35;  // a larger graph opens at this zoom on its centre, not fitted
const SEP = '\u0001';
const DEFAULTS = {node: '', dir: 'upstream', depth: '2', mode: 'tables', col: '', open: '',
  stmt: '', x: ''};
window.explorerTimings = [];

function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;',
    '"': '&quot;', "'": '&#39;'})[c]);
}

// --- the view in the URL -------------------------------------------------------------------

function readView() {
  const params = new URLSearchParams(location.hash.slice(1));
  const v = {...DEFAULTS};
  for (const k of Object.keys(DEFAULTS)) if (params.has(k)) v[k] = params.get(k);
  v.expanded = v.x ? v.x.split(',').filter(Boolean) : [];
  return v;
}
function hashOf(v) {
  const params = new URLSearchParams();
  for (const k of Object.keys(DEFAULTS)) {
    const value = k === 'x' ? v.expanded.join(',') : v[k];
    if (value && value !== DEFAULTS[k]) params.set(k, value);
  }
  return '#' + params.toString();
}
let view = readView();
function navigate(changes) {  // a new view: reload the graph
  const next = hashOf({...view, ...changes});
  if (next === location.hash || (next === '#' && !location.hash)) { load(); return; }
  location.hash = next;
}
function remember(changes) {  // the same graph, one more detail in the URL
  view = {...view, ...changes};
  history.replaceState(null, '', hashOf(view) === '#' ? location.pathname : hashOf(view));
}

// --- progress, timings ----------------------------------------------------------------------

let drawMs = 0;  // of the action under way: time spent laying out and drawing
function begin() { document.body.dataset.busy = '1'; drawMs = 0; return performance.now(); }
function finish(action, t0) {
  const ms = Math.round(performance.now() - t0);
  window.explorerTimings.push({action, ms, draw_ms: Math.round(drawMs)});
  if (!document.body.dataset.firstPaint && cy.nodes().length) {
    document.body.dataset.firstPaint = String(Math.round(performance.now()));
  }
  document.body.dataset.busy = '0';
  document.body.dataset.seq = String(Number(document.body.dataset.seq) + 1);
}
const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));

async function api(path, params) {
  const response = await fetch('api/' + path + '?' + new URLSearchParams(params),
    {credentials: 'same-origin'});
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// Graph answers are kept for a while: switching to column mode or back, or opening a shared
// view's parts again, redraws without asking the server (it re-reads the tables after a job run
// within its own refresh interval, so the page is at most this much behind).
const GRAPH_TTL_MS = 15000;
const graphCache = new Map();
function graphOf(params) {
  const key = JSON.stringify(params), now = performance.now();
  const hit = graphCache.get(key);
  if (hit && now - hit.at < GRAPH_TTL_MS) return hit.answer;
  const answer = api('graph', params);
  graphCache.set(key, {at: now, answer});
  answer.catch(() => graphCache.delete(key));
  return answer;
}

// --- the graph model: the answers merged (centre, then every expanded table) ----------------

let model = null;
let path = null;  // the highlighted column path: {nodes: Set, edges: Set}
function emptyModel() {
  return {nodes: new Map(), edges: new Map(), focus: null, truncated: 0, caps: []};
}
function merge(data) {
  for (const n of data.nodes) {
    const have = model.nodes.get(n.id);
    if (!have) { model.nodes.set(n.id, {...n, columns: [...n.columns]}); continue; }
    have.status = have.status || n.status;
    for (const c of n.columns) if (!have.columns.includes(c)) have.columns.push(c);
    have.columns.sort();
  }
  for (const e of data.edges) {
    const key = e.source + SEP + e.target;
    const have = model.edges.get(key);
    if (!have) { model.edges.set(key, {...e, columns: [...e.columns]}); continue; }
    const seen = new Set(have.columns.map(c => JSON.stringify(c)));
    for (const c of e.columns) if (!seen.has(JSON.stringify(c))) have.columns.push(c);
  }
  model.truncated += data.truncated || 0;
  for (const cap of data.caps || []) if (!model.caps.includes(cap)) model.caps.push(cap);
}
function pathOf(data) {
  const nodes = new Set(), edges = new Set();
  for (const n of data.nodes) for (const c of n.columns) nodes.add(n.id + SEP + c);
  for (const e of data.edges) for (const c of e.columns) {
    edges.add([e.source, c.source_column, e.target, c.target_column].join(SEP));
  }
  return {nodes, edges};
}

// --- drawing ------------------------------------------------------------------------------------

const cy = cytoscape({
  container: $('cy'), minZoom: 0.05, maxZoom: 3,
  style: [
    {selector: 'node', style: {shape: 'round-rectangle', 'background-color': '#f5f8fb',
      'border-width': 1, 'border-color': '#8a99a8', label: 'data(label)', 'text-wrap': 'wrap',
      'text-valign': 'center', 'text-halign': 'center', 'font-family': 'monospace',
      'font-size': 11, width: 'data(w)', height: 'data(h)', 'text-justification': 'left',
      'min-zoomed-font-size': 5,
      'line-height': 1.3}},
    {selector: 'node.view', style: {'background-color': '#eef7ee'}},
    {selector: 'node.external', style: {'background-color': '#fbf5e9', 'border-style': 'dashed'}},
    {selector: 'node.focus', style: {'border-width': 4, 'border-color': '#e8590c',
      'background-color': '#fff1e6'}},
    {selector: 'node:parent', style: {'text-valign': 'top', 'text-halign': 'center',
      'font-weight': 'bold', padding: 8, 'text-margin-y': -2}},
    {selector: 'node.late, node.stopped', style: {'border-color': '#c92a2a', 'border-width': 3,
      'background-color': '#ffe3e3'}},
    {selector: 'node.column', style: {'background-color': '#ffffff', 'font-size': 10}},
    {selector: 'node.collapsed', style: {'border-style': 'dotted', color: '#52606d'}},
    {selector: 'node.onpath', style: {'background-color': '#fff1e6', 'border-color': '#e8590c',
      'border-width': 2}},
    {selector: 'node.focuscol', style: {'border-width': 4}},
    {selector: '.faded', style: {opacity: 0.3}},
    {selector: 'node:selected', style: {'border-color': '#1c7ed6', 'border-width': 4}},
    {selector: 'edge', style: {'curve-style': 'bezier', width: 1.5, 'line-color': '#8a99a8',
      'target-arrow-shape': 'triangle', 'target-arrow-color': '#8a99a8', label: 'data(label)',
      'font-size': 9, 'text-wrap': 'wrap', 'text-max-width': 200, 'min-zoomed-font-size': 5,
      'text-background-color': '#ffffff', 'text-background-opacity': 0.85,
      'text-background-padding': 2}},
    {selector: 'edge.indirect', style: {'line-style': 'dashed'}},
    {selector: 'edge.tableedge', style: {'line-style': 'dotted', label: ''}},
    {selector: 'edge.onpath', style: {'line-color': '#e8590c', 'target-arrow-color': '#e8590c',
      width: 3}},
    {selector: 'edge:selected', style: {'line-color': '#1c7ed6', 'target-arrow-color': '#1c7ed6',
      width: 3}},
  ],
});

function tableElements() {
  const out = [];
  for (const n of model.nodes.values()) {
    const shown = n.columns.slice(0, MAX_COLUMNS_SHOWN);
    const lines = [n.id, ...(shown.length ? ['-'.repeat(Math.min(40, n.id.length))] : []),
      ...shown.map(c => '  ' + c)];
    if (n.columns.length > MAX_COLUMNS_SHOWN) {
      lines.push(`  ... ${n.columns.length - MAX_COLUMNS_SHOWN} more`);
    }
    out.push({group: 'nodes', data: {id: 't:' + n.id, table: n.id, label: lines.join('\n'),
      w: Math.max(...lines.map(l => l.length)) * 7 + 24, h: lines.length * 15 + 16},
      classes: [n.kind, n.status || '', n.id === model.focus ? 'focus' : ''].join(' ')});
  }
  for (const [key, e] of model.edges) {
    if (e.source === e.target) continue;  // a table feeding itself: listed in the panel
    out.push({group: 'edges', data: {id: 'e:' + key, source: 't:' + e.source,
      target: 't:' + e.target, label: e.label.split(' / ').join('\n'), key}});
  }
  return out;
}

// Column mode draws the columns of the tables nearest the view's centre (the centre, the
// opened and expanded tables first) up to MAX_COLUMN_NODES columns; the other tables are drawn
// as plain boxes joined by table edges, and a click on one draws its columns.
function columnTables() {
  const first = new Set([model.focus, view.open, splitColumn(view.col)[0], ...view.expanded]);
  const order = [...model.nodes.values()].sort((a, b) =>
    (first.has(b.id) - first.has(a.id)) || ((a.distance ?? 1e9) - (b.distance ?? 1e9)) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const drawn = new Set();
  let budget = MAX_COLUMN_NODES;
  for (const n of order) {
    if (n.columns.length <= budget || first.has(n.id)) {
      drawn.add(n.id);
      budget -= n.columns.length;
    }
  }
  return drawn;
}

function columnElements() {
  const out = [], ids = new Set(), withColumns = columnTables();
  const add = element => {
    if (!ids.has(element.data.id)) { ids.add(element.data.id); out.push(element); }
    return element.data.id;
  };
  const column = (table, name) => add({group: 'nodes', data: {id: 'c:' + table + SEP + name,
    parent: 't:' + table, table, column: name, label: name, w: name.length * 7 + 16, h: 18},
    classes: 'column'});
  for (const n of model.nodes.values()) {
    const open = withColumns.has(n.id);
    const label = open ? n.id : `${n.id}\n(${n.columns.length} columns: click)`;
    add({group: 'nodes', data: {id: 't:' + n.id, table: n.id, label,
      w: Math.max(n.id.length, 14) * 7 + 24, h: open ? 20 : 40},
      classes: [n.kind, n.status || '', open ? '' : 'collapsed',
        n.id === model.focus ? 'focus' : ''].join(' ')});
    if (open) for (const c of n.columns) column(n.id, c);
  }
  for (const [key, e] of model.edges) {
    const both = withColumns.has(e.source) && withColumns.has(e.target);
    const mapped = both ? e.columns.filter(c => c.source_column && c.target_column) : [];
    if (!mapped.length) {
      if (e.source !== e.target) {
        add({group: 'edges', data: {id: 'e:' + key, source: 't:' + e.source,
          target: 't:' + e.target, label: '', key}, classes: 'tableedge'});
      }
      continue;
    }
    for (const c of mapped) {
      const ckey = [e.source, c.source_column, e.target, c.target_column].join(SEP);
      add({group: 'edges', data: {id: 'ce:' + ckey + SEP + c.transformation_type + SEP +
        c.transformation_subtype, source: column(e.source, c.source_column),
        target: column(e.target, c.target_column), ckey, key,
        label: c.transformation_subtype || c.transformation_type},
        classes: (c.transformation_type || '').toLowerCase()});
    }
  }
  model.columnTables = withColumns.size;
  return out;
}

// Layers left to right: a table's layer is the longest chain of edges into it (cycles broken at
// the first revisit), as the --html page's; within a layer, tables follow the mean position of
// what feeds them. Linear in the graph: used for column mode and for graphs too large for dagre.
function layeredPositions(gapX, gapY) {
  const incoming = new Map();
  for (const e of model.edges.values()) {
    if (e.source === e.target || !model.nodes.has(e.source)) continue;
    if (!incoming.has(e.target)) incoming.set(e.target, []);
    incoming.get(e.target).push(e.source);
  }
  const layer = new Map(), visiting = new Set();
  const depth = name => {
    if (layer.has(name)) return layer.get(name);
    if (visiting.has(name)) return 0;
    visiting.add(name);
    let d = 0;
    for (const p of incoming.get(name) || []) d = Math.max(d, depth(p) + 1);
    visiting.delete(name);
    layer.set(name, d);
    return d;
  };
  const byLayer = [];
  for (const name of [...model.nodes.keys()].sort()) {
    const d = depth(name);
    (byLayer[d] = byLayer[d] || []).push(name);
  }
  const size = name => {
    const box = cy.getElementById('t:' + name);
    const kids = box.children();
    if (kids.nonempty()) {
      return {w: Math.max(box.data('w'), ...kids.map(k => k.data('w'))) + 20,
        h: kids.length * (gapY + 18) + 30};
    }
    return {w: box.data('w'), h: box.data('h')};
  };
  const at = new Map();  // table -> {x, y (top), order}
  let x = 0;
  for (const names of byLayer) {
    if (!names) continue;
    const mean = name => {
      const ys = (incoming.get(name) || []).filter(p => at.has(p)).map(p => at.get(p).order);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : Infinity;
    };
    const ordered = names.map(n => [mean(n), n]).sort((a, b) => a[0] - b[0] ||
      (a[1] < b[1] ? -1 : 1)).map(p => p[1]);
    const sizes = ordered.map(size);
    const width = Math.max(...sizes.map(z => z.w));
    let y = 0;
    ordered.forEach((name, i) => {
      at.set(name, {x: x + width / 2, y, w: sizes[i].w, h: sizes[i].h, order: i});
      y += sizes[i].h + gapY * 2;
    });
    x += width + gapX;
  }
  const positions = {}, bounds = {x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity};
  for (const [name, p] of at) {
    const box = cy.getElementById('t:' + name);
    const kids = box.children();
    if (kids.empty()) positions[box.id()] = {x: p.x, y: p.y + p.h / 2};
    kids.forEach((k, i) => { positions[k.id()] = {x: p.x, y: p.y + 30 + i * (gapY + 18)}; });
    bounds.x1 = Math.min(bounds.x1, p.x - p.w / 2);
    bounds.x2 = Math.max(bounds.x2, p.x + p.w / 2);
    bounds.y1 = Math.min(bounds.y1, p.y);
    bounds.y2 = Math.max(bounds.y2, p.y + p.h);
  }
  return {positions, bounds};
}

// The viewport on ``bounds`` (model coordinates), as cy.fit does without measuring every
// label (which costs more than the whole layout on a large graph).
function fitTo(bounds, padding) {
  const w = cy.width() - 2 * padding, h = cy.height() - 2 * padding;
  const zoom = Math.min(1.5, Math.max(cy.minZoom(),
    Math.min(w / Math.max(1, bounds.x2 - bounds.x1), h / Math.max(1, bounds.y2 - bounds.y1))));
  cy.viewport({zoom, pan: {x: cy.width() / 2 - zoom * (bounds.x1 + bounds.x2) / 2,
    y: cy.height() / 2 - zoom * (bounds.y1 + bounds.y2) / 2}});
}

const DAGRE_MAX_NODES = 150;  // dagre (fewer crossings) up to this many boxes, else layers

async function draw(target) {
  const t0 = performance.now();
  cy.batch(() => {
    cy.elements().remove();
    cy.add(view.mode === 'columns' ? columnElements() : tableElements());
    highlight();
  });
  const columns = view.mode === 'columns';
  if (cy.nodes().length > DAGRE_MAX_NODES) {
    const {positions, bounds} = layeredPositions(columns ? 220 : 160, columns ? 6 : 12);
    cy.batch(() => cy.nodes().filter(n => positions[n.id()]).positions(n => positions[n.id()]));
    fitTo(bounds, 30);
  } else {
    const layout = cy.layout({name: 'dagre', rankDir: 'LR', nodeSep: columns ? 10 : 30,
      rankSep: columns ? 160 : 230, edgeSep: 20, fit: true, padding: 30});
    const stopped = new Promise(r => layout.one('layoutstop', r));
    layout.run();
    await stopped;
  }
  if (cy.zoom() < READABLE_ZOOM) {  // too many to read at once: show the centre, pan for more
    const at = cy.getElementById('t:' + (target || model.focus));
    const p = at.nonempty() ? at.position() : {x: 0, y: 0};
    cy.viewport({zoom: READABLE_ZOOM, pan: {x: cy.width() / 2 - READABLE_ZOOM * p.x,
      y: cy.height() / 2 - READABLE_ZOOM * p.y}});
  }
  listLabels();
  await frame();
  drawMs += performance.now() - t0;
}

function highlight() {
  cy.elements().removeClass('onpath faded focuscol');
  if (view.mode !== 'columns' || !path) return;
  cy.nodes('.column').forEach(n => n.addClass(
    path.nodes.has(n.data('table') + SEP + n.data('column')) ? 'onpath' : 'faded'));
  cy.edges().forEach(e => e.addClass(path.edges.has(e.data('ckey')) ? 'onpath' : 'faded'));
  const [table, col] = splitColumn(view.col);
  cy.getElementById('c:' + table + SEP + col).addClass('focuscol');
}

// What the page drew, in the DOM (tests, screen readers): tables in layout order.
function listLabels() {
  const list = $('labels');
  list.textContent = '';
  cy.nodes().filter(n => n.id().startsWith('t:'))
    .sort((a, b) => a.position('x') - b.position('x') || a.position('y') - b.position('y'))
    .forEach(n => {
      const li = document.createElement('li');
      li.textContent = n.data('table');
      li.dataset.x = Math.round(n.position('x'));
      if (n.hasClass('focus')) li.dataset.focus = 'true';
      const status = model.nodes.get(n.data('table'))?.status;
      if (status) li.dataset.status = status;
      list.appendChild(li);
    });
  const body = document.body.dataset;
  body.rendered = String(model.nodes.size);
  body.columns = String(cy.nodes('.column').length);
  body.columnEdges = String(cy.edges().filter(e => e.id().startsWith('ce:')).length);
  body.onpath = String(cy.elements('.onpath').length);
  body.mode = view.mode;
  let more = model.truncated ? `, ${model.truncated} more not drawn (the nearest are)` : '';
  if (view.mode === 'columns' && model.columnTables < model.nodes.size) {
    more += `; columns of ${model.columnTables} tables drawn (click a table for its own)`;
  }
  statusLine.textContent = `${view.dir} of ${view.node}: ${model.nodes.size} tables, ` +
    `${model.edges.size} edges${more}; click a table to expand it` +
    (model.caps.length ? '. ' + model.caps.join(' ') : '');
}

function splitColumn(name) {
  const at = name.lastIndexOf('.');
  return [name.slice(0, at), name.slice(at + 1)];
}

// --- loading a view -----------------------------------------------------------------------------

async function load() {
  const t0 = begin();
  view = readView();
  $('direction').value = view.dir;
  $('depth').value = view.depth;
  $('mode-tables').classList.toggle('on', view.mode === 'tables');
  $('mode-columns').classList.toggle('on', view.mode === 'columns');
  try {
    if (!view.node) { finish('empty', t0); return; }
    model = emptyModel();
    const centre = await graphOf({name: view.node, direction: view.dir, depth: view.depth});
    merge(centre);
    model.focus = centre.focus;
    const more = await Promise.all(view.expanded.map(name =>
      graphOf({name, direction: view.dir, depth: 1})));
    more.forEach(merge);
    path = null;
    if (view.mode === 'columns' && view.col) {
      path = pathOf(await graphOf({name: view.col, direction: 'both',
        depth: view.depth}));
    }
    await draw();
    if (view.stmt) await showStatement(view.stmt);
    else await showNode(view.open || centre.focus);
    finish('load', t0);
  } catch (err) {
    showError(err);
    finish('error', t0);
  }
}

function showError(err) {
  panel.innerHTML = '<p class="error" id="error">' + esc(err.message) + '</p>';
  statusLine.textContent = err.message;
}

// --- clicks -------------------------------------------------------------------------------------

async function expand(table) {
  const t0 = begin();
  try {
    const panelShown = showNode(table);
    if (table !== model.focus && !view.expanded.includes(table)) {
      merge(await graphOf({name: table, direction: view.dir, depth: 1}));
      remember({expanded: [...view.expanded, table], open: table, stmt: ''});
      await draw(table);
      cy.getElementById('t:' + table).select();
    } else {
      remember({open: table, stmt: ''});
    }
    await panelShown;
    finish('expand', t0);
  } catch (err) {
    showError(err);
    finish('error', t0);
  }
}

async function choosePath(table, column) {
  const t0 = begin();
  try {
    const name = table + '.' + column;
    path = pathOf(await graphOf({name, direction: 'both', depth: view.depth}));
    remember({col: name, open: table, stmt: ''});
    highlight();
    listLabels();
    showColumnPath(name);
    await frame();
    finish('column', t0);
  } catch (err) {
    showError(err);
    finish('error', t0);
  }
}

cy.on('tap', 'node', ev => {
  const n = ev.target;
  if (n.hasClass('column')) choosePath(n.data('table'), n.data('column'));
  else expand(n.data('table'));
});
cy.on('tap', 'edge', ev => showEdge(model.edges.get(ev.target.data('key'))));

// --- the side panel -----------------------------------------------------------------------------

function htmlTable(headers, rows) {
  if (!rows.length) return '<p class="hint">none</p>';
  return '<table><tr>' + headers.map(h => '<th>' + esc(h) + '</th>').join('') + '</tr>' +
    rows.map(r => '<tr>' + r.map(c => '<td>' + c + '</td>').join('') + '</tr>').join('') +
    '</table>';
}

function badge(key, text, cls) {
  return `<span class="badge ${esc(cls || '')}" data-badge="${esc(key)}">${esc(text)}</span>`;
}

// Freshness and ownership (the activity stage's tables, as `lineage freshness` and
// `lineage owner` answer): status, last write, owner, and every late upstream dataset.
function freshnessBadges(f) {
  if (!f) return '';
  const when = t => t ? String(t).replace('T', ' ').slice(0, 16) + ' UTC' : 'never';
  const late = f.late_upstream || [];
  const out = [
    badge('status', f.status, f.status),
    badge('last-write', `last write ${when(f.last_write_at)}` +
      (f.last_write_user ? ` by ${f.last_write_user}` : '')),
    badge('owner', f.owner ? `owner ${f.owner} (${f.owner_rule})` : 'no owner', f.owner ? '' :
      'none'),
    badge('late-upstream', late.length ? `${late.length} late upstream` : 'upstream on time',
      late.length ? 'late' : 'on_time'),
  ];
  if (f.last_failed_write_at) {
    out.push(badge('failed-write', `failed write ${when(f.last_failed_write_at)}`, 'failed'));
  }
  let html = '<div id="badges">' + out.join('') + '</div>';
  if (late.length) {
    html += '<table id="late-upstream"><tr><th>late upstream</th><th>status</th><th>hops</th>' +
      '<th>owner</th></tr>' + late.map(u => `<tr data-table="${esc(u.table)}" ` +
      `title="${esc(u.path)}"><td><a class="centre" data-name="${esc(u.table)}">` +
      `${esc(u.table)}</a></td><td>${badge('late-status', u.status, u.status)}</td>` +
      `<td>${esc(u.hops)}</td><td>${esc(u.owner || '-')}</td></tr>`).join('') + '</table>';
  }
  return html;
}

async function showNode(name) {
  const info = await api('node', {name});
  const degrees = info.upstream != null ?
    ` · ${info.upstream} upstream · ${info.downstream} downstream` : '';
  panel.innerHTML = `<h2 id="panel-title">${esc(info.name)}</h2>` +
    `<p>${esc(info.kind)}${degrees}${info.on_cycle ? ' · on a cycle' : ''}` +
    `${info.freshness?.reason ? ' · ' + esc(info.freshness.reason) : ''}</p>` +
    freshnessBadges(info.freshness) +
    `<button type="button" class="centre" data-name="${esc(info.name)}">centre the graph ` +
    'here</button>' +
    `<h3>columns (${info.columns.length})</h3>` +
    htmlTable(['column'], info.columns.map(c => [`<a class="col" data-table="${esc(info.name)}" ` +
      `data-column="${esc(c)}">${esc(c)}</a>`])) +
    `<h3>statements (${info.statements_total})</h3>` +
    htmlTable(['fingerprint', 'kind', 'role', 'status', 'runs'], info.statements.map(s => [
      `<a class="stmt" data-fp="${esc(s.fingerprint)}">${esc(s.fingerprint.slice(0, 12))}</a>`,
      esc(s.statement_type), esc(s.role), esc(s.status), esc(s.occurrences)])) +
    `<h3>quarantine (${info.quarantine.length})</h3>` +
    htmlTable(['stage', 'reason', 'statement'], info.quarantine.map(q => [esc(q.stage),
      esc(q.reason), q.fingerprint ? `<a class="stmt" data-fp="${esc(q.fingerprint)}">` +
      `${esc(q.fingerprint.slice(0, 12))}</a>` : '-'])) +
    '<h3>recent runs</h3>' +
    htmlTable(['run', 'started', 'status', 'edges'], info.runs.map(r => [
      esc(String(r.run_id).slice(0, 8)), esc(String(r.started_at).slice(0, 19)), esc(r.status),
      esc(r.table_edges)]));
}

function showColumnPath(name) {
  const [table, column] = splitColumn(name);
  const members = [...path.nodes].map(m => m.split(SEP)).filter(([t, c]) =>
    !(t === table && c === column));
  panel.innerHTML = `<h2 id="panel-title">${esc(name)}</h2>` +
    `<p>${members.length} columns on its path (upstream and downstream, depth ` +
    `${esc(view.depth)})</p>` +
    `<button type="button" class="centre" data-name="${esc(table)}">open ${esc(table)}</button>` +
    htmlTable(['table', 'column'], members.map(([t, c]) => [esc(t), esc(c)]));
}

function showEdge(edge) {
  if (!edge) return;
  panel.innerHTML = `<h2 id="panel-title">${esc(edge.source)} &rarr; ${esc(edge.target)}</h2>` +
    `<p>${esc(edge.edge_kinds.join(', '))}</p>` +
    htmlTable(['source', 'target', 'transformation'], edge.columns.map(c => [esc(c.source_column),
      esc(c.target_column), esc(c.transformation_type + ' ' + c.transformation_subtype)]));
}

async function showStatement(fingerprint) {
  const s = await api('statement', {fingerprint});
  const rows = ['statement_type', 'parser', 'status', 'error_kind', 'error', 'occurrences',
    'log_rows', 'first_seen', 'last_seen', 'sources', 'targets']
    .map(k => [esc(k), esc(Array.isArray(s[k]) ? s[k].join(', ') : s[k] ?? '-')]);
  panel.innerHTML = `<h2 id="panel-title">statement ${esc(s.fingerprint)}</h2>` +
    htmlTable(['', ''], rows) + '<h3>masked SQL</h3>' +
    `<pre id="sql">${esc(s.masked_sql)}</pre>` +
    `<a class="back" data-name="${esc(view.open || model.focus)}">back to the table</a>`;
}

panel.addEventListener('click', async ev => {
  const el = ev.target.closest('a, button');
  if (!el) return;
  if (el.classList.contains('centre')) {
    navigate({node: el.dataset.name, expanded: [], col: '', open: '', stmt: ''});
  } else if (el.classList.contains('stmt')) {
    const t0 = begin();
    try {
      await showStatement(el.dataset.fp);
      remember({stmt: el.dataset.fp});
    } catch (err) { showError(err); }
    finish('statement', t0);
  } else if (el.classList.contains('back')) {
    remember({stmt: ''});
    await showNode(el.dataset.name);
  } else if (el.classList.contains('col')) {
    if (view.mode !== 'columns') {
      navigate({mode: 'columns', col: el.dataset.table + '.' + el.dataset.column});
    } else {
      choosePath(el.dataset.table, el.dataset.column);
    }
  }
});

// --- the bar: search, direction, depth, mode ------------------------------------------------

const search = $('search'), results = $('results');
let searchTimer = null, searchSeq = 0;
search.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(runSearch, 150);
});
search.addEventListener('keydown', ev => {
  if (ev.key === 'Escape') results.hidden = true;
  if (ev.key === 'Enter') {
    clearTimeout(searchTimer);
    runSearch().then(() => { const first = results.querySelector('li[data-name]');
      if (first) pick(first.dataset.name, first.dataset.kind); });
  }
});
async function runSearch() {
  const q = search.value.trim(), mine = ++searchSeq, t0 = performance.now();
  if (!q) { results.hidden = true; return; }
  try {
    const found = await api('search', {q});
    if (mine !== searchSeq) return;
    results.innerHTML = found.rows.map(r => `<li data-name="${esc(r.name)}" ` +
      `data-kind="${esc(r.kind)}"><span>${esc(r.name)}</span><span class="kind">` +
      `${esc(r.kind)}</span></li>`).join('') || `<li>nothing matches ${esc(q)}</li>`;
    if (found.total > found.rows.length) {
      results.insertAdjacentHTML('beforeend', `<li>${found.total - found.rows.length} more: ` +
        'narrow the search</li>');
    }
    results.dataset.q = q;
    results.hidden = false;
    window.explorerTimings.push({action: 'search', ms: Math.round(performance.now() - t0)});
  } catch (err) {
    results.innerHTML = `<li class="error">${esc(err.message)}</li>`;
    results.hidden = false;
  }
}
results.addEventListener('click', ev => {
  const li = ev.target.closest('li[data-name]');
  if (li) pick(li.dataset.name, li.dataset.kind);
});
function pick(name, kind) {
  results.hidden = true;
  if (kind === 'column') {
    navigate({node: splitColumn(name)[0], mode: 'columns', col: name, expanded: [], open: '',
      stmt: ''});
  } else {
    navigate({node: name, col: '', expanded: [], open: '', stmt: ''});
  }
}
$('direction').addEventListener('change', ev => navigate({dir: ev.target.value, expanded: []}));
$('depth').addEventListener('change', ev => navigate({depth: ev.target.value}));
$('mode-tables').addEventListener('click', () => navigate({mode: 'tables'}));
$('mode-columns').addEventListener('click', () => navigate({mode: 'columns'}));
document.addEventListener('click', ev => {
  if (!ev.target.closest('#searchbox')) results.hidden = true;
});

window.addEventListener('hashchange', load);
api('info', {}).then(info => {
  if (info.as_of) $('asof').textContent = 'as of ' + info.as_of;
}).catch(() => {}).finally(load);
