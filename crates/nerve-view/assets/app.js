// nerve view: draws what /api/graph says once a second, and opens channels, a node's log and
// the transform tree on demand. Data is only ever set as text, never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 190, NODE_H = 58, COL = 380, ROW = 86, PAD = 16, LANE = 42;
const PLOT_POINTS = 200;
const COLORS = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e", "#ad1457"];

const $ = (id) => document.getElementById(id);
const view = {
  graph: null, channel: null, socket: null, node: null, tf: null, plot: null, logTimer: 0, drawn: new Map(),
  // The points shown last, and how they are looked at: turned about z, tilted from above, zoomed.
  points: null, camera: { yaw: 0, tilt: 0, zoom: 1 },
};

function el(tag, attrs = {}, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// What a node's state looks like: running, waiting, failed or done.
function stateClass(state) {
  if (state === "running" || state === "ready") return "ok";
  if (state === "finished") return "done";
  if (["starting", "restarting", "waiting", "stopping"].includes(state)) return "wait";
  return "bad";
}

const fmt = {
  rate: (r) => (r == null ? "–" : r >= 100 ? r.toFixed(0) : r.toFixed(1)) + " Hz",
  latency: (us) => (us == null ? "–" : us >= 1000 ? (us / 1000).toFixed(2) + " ms" : us.toFixed(0) + " µs"),
  bytes: (b) => (b == null ? "–" : (b / 1048576).toFixed(1) + " MiB"),
  cpu: (c) => (c == null ? "–" : c.toFixed(1) + "%"),
};

async function poll() {
  try {
    const r = await fetch("/api/graph", { cache: "no-store" });
    if (!r.ok) throw new Error(await r.text());
    view.graph = await r.json();
    render();
  } catch (e) {
    $("status").textContent = "cannot reach nerve view: " + e.message;
  }
  setTimeout(poll, 1000);
}

function render() {
  const g = view.graph;
  if (g.runs === null) { $("status").textContent = "measuring…"; return; }
  $("status").textContent = g.runs.length === 0 ? "no dataflow is running on this host"
    : `${g.runs.length} dataflow${g.runs.length > 1 ? "s" : ""} running · updated ${new Date().toLocaleTimeString()}`;
  // A run whose nodes and edges are those drawn is only updated in place, so what the user
  // points at or clicks stays where it is.
  const boxes = g.runs.map((run) => {
    const shape = JSON.stringify([run.nodes.map((n) => n.id), run.edges.map(edgeKey)]);
    let drawn = view.drawn.get(run.run_id);
    if (!drawn || drawn.shape !== shape) {
      drawn = drawRun(run, shape);
      view.drawn.set(run.run_id, drawn);
    }
    drawn.update(run);
    return drawn.box;
  });
  for (const id of view.drawn.keys()) if (!g.runs.some((r) => r.run_id === id)) view.drawn.delete(id);
  const graphs = $("graphs");
  if (boxes.length !== graphs.children.length || boxes.some((b, i) => graphs.children[i] !== b)) graphs.replaceChildren(...boxes);
  renderChannels(g.channels);
  if (view.node) renderNode();
}

const edgeKey = (e) => `${e.from}/${e.output}->${e.to}/${e.input}`;

// Columns by the longest path from a node nothing feeds (cycles are cut where met).
function layout(run) {
  const rank = new Map(run.nodes.map((n) => [n.id, 0]));
  for (let pass = 0; pass < run.nodes.length; pass++) {
    let moved = false;
    for (const e of run.edges) {
      if (e.from === e.to || !rank.has(e.from) || !rank.has(e.to)) continue;
      const want = rank.get(e.from) + 1;
      if (want > rank.get(e.to) && want < run.nodes.length) { rank.set(e.to, want); moved = true; }
    }
    if (!moved) break;
  }
  const rows = new Map(), at = new Map();
  for (const n of run.nodes) {
    const col = rank.get(n.id), row = rows.get(col) || 0;
    rows.set(col, row + 1);
    at.set(n.id, { x: PAD + col * COL, y: PAD + row * ROW });
  }
  const width = PAD * 2 + Math.max(...[...rank.values()]) * COL + NODE_W;
  const height = PAD * 2 + (Math.max(...rows.values()) - 1) * ROW + NODE_H;
  return { at, width, height };
}

// A run's box, and how to update it with a later look at the same nodes and edges.
function drawRun(run, shape) {
  const box = el("div", { class: "run", "data-run": run.run_id });
  const title = el("h2", {}, run.name || run.run_id), sub = el("small");
  title.append(sub);
  box.append(title);
  const updates = [];
  if (run.nodes.length > 0) {
    const { at, width, height } = layout(run);
    const svg = el("svg:svg", { width, height, viewBox: `0 0 ${width} ${height}` });
    // Edges between the same two nodes each get a lane of their own, so none hides another;
    // labels go on a layer above every line, so no line takes a label's click.
    const lanes = new Map(), labels = el("svg:g", { class: "labels" });
    for (const e of run.edges) {
      const a = at.get(e.from), b = at.get(e.to), pair = `${e.from}->${e.to}`, lane = lanes.get(pair) || 0;
      lanes.set(pair, lane + 1);
      if (a && b) updates.push(drawEdge(svg, labels, edgeKey(e), a, b, lane));
    }
    for (const n of run.nodes) updates.push(drawNode(svg, run.run_id, n.id, at.get(n.id)));
    svg.append(labels);
    const below = (Math.max(1, ...lanes.values()) - 1) * LANE;
    svg.setAttribute("height", height + below);
    svg.setAttribute("viewBox", `0 0 ${width} ${height + below}`);
    box.append(svg);
  }
  const update = (now) => {
    sub.textContent = `  ${now.dataflow} · ${now.state}`;
    for (const u of updates) u(now);
  };
  return { shape, box, update };
}

function drawNode(svg, runId, id, p) {
  const g = el("svg:g", { "data-node": id, transform: `translate(${p.x},${p.y})` });
  g.append(el("svg:rect", { width: NODE_W, height: NODE_H, rx: 6 }));
  g.append(el("svg:text", { x: 10, y: 18, class: "id" }, id));
  const state = el("svg:text", { x: 10, y: 34, class: "sub state" }), usage = el("svg:text", { x: 10, y: 50, class: "sub" });
  g.append(state, usage);
  g.addEventListener("click", () => openNode(runId, id));
  svg.append(g);
  return (run) => {
    const n = run.nodes.find((x) => x.id === id);
    g.setAttribute("class", `node ${stateClass(n.state)}`);
    g.dataset.state = n.state;
    state.textContent = n.state + (n.restarts ? ` · ${n.restarts} restart${n.restarts > 1 ? "s" : ""}` : "");
    usage.textContent = `cpu ${fmt.cpu(n.cpu_percent)} · ${fmt.bytes(n.memory_bytes)}`;
  };
}

function drawEdge(svg, labels, key, a, b, lane) {
  const g = el("svg:g", { "data-edge": key });
  const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
  const back = x2 <= x1, off = lane * LANE;
  const d = back
    ? `M${x1},${y1} C${x1 + 60},${y1 - 70 - off} ${x2 - 60},${y2 - 70 - off} ${x2},${y2}`
    : `M${x1},${y1} C${(x1 + x2) / 2},${y1 + off} ${(x1 + x2) / 2},${y2 + off} ${x2},${y2}`;
  // A wide invisible copy of the line takes the clicks a thin line would miss.
  g.append(el("svg:path", { d }), el("svg:path", { d, class: "hit" }));
  // Labels sit centred between the columns, above the line's middle (a lane's below the last).
  const mx = (x1 + x2) / 2, my = (y1 + y2) / 2 + (back ? -50 - off : off - 30);
  const [from, to] = key.split("->");
  const label = el("svg:g", { "data-edge": key, class: "edge-label" });
  const name = el("svg:text", { x: mx, y: my, class: "name" }, `${from.split("/")[1]} → ${to.split("/")[1]}`);
  const stats = el("svg:text", { x: mx, y: my + 13, class: "stats" }), drops = el("svg:text", { x: mx, y: my + 26, class: "drops" });
  const tip = el("svg:title");
  label.append(name, stats, drops, tip);
  labels.append(label);
  svg.insertBefore(g, svg.firstChild);
  let channel = null;
  for (const part of [g, label]) part.addEventListener("click", () => { if (channel) openChannel(channel); });
  return (run) => {
    const e = run.edges.find((x) => edgeKey(x) === key);
    channel = e.channel;
    const state = (e.dropped > 0 ? " dropping" : "") + (channel && channel === view.channel ? " selected" : "");
    g.setAttribute("class", "edge" + state);
    label.setAttribute("class", "edge-label" + state);
    g.dataset.rate = label.dataset.rate = e.received_per_sec ?? "";
    stats.textContent = `${fmt.rate(e.received_per_sec)} · ${fmt.latency(e.latency_us)} · q ${e.queued}/${e.capacity}`;
    drops.textContent = e.dropped > 0 ? `${e.dropped} dropped` : "";
    tip.textContent = `${key}\nmean latency ${fmt.latency(e.latency_us)}, worst ${fmt.latency(e.latency_max_us)}` +
      (channel ? "\nclick to see its messages" : "");
  };
}

function renderChannels(channels) {
  const list = $("channels");
  // Rebuilt only when the list changes, so a click is never on a replaced item.
  const shown = JSON.stringify([channels, view.channel]);
  if (list.dataset.shown === shown) return;
  list.dataset.shown = shown;
  list.replaceChildren(...channels.map((key) => {
    const li = el("li", { "data-channel": key, class: key === view.channel ? "selected" : "" }, key);
    li.addEventListener("click", () => openChannel(key));
    return li;
  }));
}

function showTab(name) {
  for (const b of document.querySelectorAll("#panel nav button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const t of ["channel", "node", "tf"]) $("tab-" + t).hidden = t !== name;
  if (name === "tf") openTransforms(); else closeTransforms();
}

// A channel: the server sends the next value when asked, so nothing queues here.
function openChannel(key) {
  if (view.socket) view.socket.close();
  view.channel = key;
  view.plot = null;
  showTab("channel");
  $("channel-title").textContent = key;
  $("channel-meta").textContent = "waiting for a message…";
  // What the canvases counted was of the last channel.
  for (const id of ["channel-image", "channel-plot", "channel-points"]) { $(id).hidden = true; delete $(id).dataset.frames; delete $(id).dataset.points; }
  view.points = null;
  Object.assign(view.camera, { yaw: 0, tilt: 0, zoom: 1 });
  $("channel-tree").replaceChildren();
  $("channel-legend").replaceChildren();
  const socket = new WebSocket(`ws://${location.host}/api/channel?key=${encodeURIComponent(key)}`);
  socket.binaryType = "arraybuffer";
  view.socket = socket;
  let pending = null;
  const next = () => requestAnimationFrame(() => { if (socket.readyState === WebSocket.OPEN) socket.send("next"); });
  socket.onopen = next;
  socket.onmessage = (m) => {
    if (view.socket !== socket) return;
    if (typeof m.data !== "string") {
      if (pending.kind === "image") drawImage(pending, m.data);
      else { view.points = { header: pending, xyz: new Float32Array(m.data) }; drawPoints(); }
      pending = null;
      next();
      return;
    }
    const header = JSON.parse(m.data);
    if (header.error) { $("channel-meta").textContent = header.error; $("channel-meta").className = "meta error"; return; }
    $("channel-meta").className = "meta";
    // Arrow's name of a message type spells every field: the start says enough, the tooltip all.
    const type = header.type.length > 80 ? header.type.slice(0, 77) + "…" : header.type;
    $("channel-meta").title = header.type;
    $("channel-meta").textContent = `${type} · ${header.rows} row${header.rows === 1 ? "" : "s"}` +
      (Object.keys(header.parameters).length ? " · " + JSON.stringify(header.parameters) : "") + (header.note ? ` · ${header.note}` : "");
    if (header.kind === "image" || header.kind === "points") { pending = header; return; }
    if (header.kind === "numbers") plot(header); else tree(header.value);
    next();
  };
  socket.onclose = () => { if (view.socket === socket) view.socket = null; };
  if (view.graph) render();
}

function drawImage(header, buffer) {
  const canvas = $("channel-image");
  canvas.hidden = false;
  canvas.width = header.width;
  canvas.height = header.height;
  canvas.dataset.encoding = header.encoding;
  canvas.getContext("2d").putImageData(new ImageData(new Uint8ClampedArray(buffer), header.width, header.height), 0, 0);
  canvas.dataset.frames = String(Number(canvas.dataset.frames || 0) + 1);
}

// Points in space, looked at orthographically: from above (x right, y up) until dragged.
// Coloured by height, blue (low) to red (high); a path is also drawn as a line to where it ends.
function drawPoints() {
  const { header, xyz } = view.points, canvas = $("channel-points"), ctx = canvas.getContext("2d");
  canvas.hidden = false;
  const n = xyz.length / 3, W = canvas.width, H = canvas.height;
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < xyz.length; i++) { const a = i % 3; if (xyz[i] < lo[a]) lo[a] = xyz[i]; if (xyz[i] > hi[a]) hi[a] = xyz[i]; }
  const mid = lo.map((l, a) => (n ? (l + hi[a]) / 2 : 0));
  const radius = Math.max(1e-3, ...hi.map((h, a) => (n ? (h - lo[a]) / 2 : 0)));
  const { yaw, tilt, zoom } = view.camera, cy = Math.cos(yaw), sy = Math.sin(yaw), ct = Math.cos(tilt), st = Math.sin(tilt);
  const scale = (0.45 * Math.min(W, H) / radius) * zoom;
  const project = (x, y, z) => {
    x -= mid[0]; y -= mid[1]; z -= mid[2];
    const u = cy * x - sy * y, v = sy * x + cy * y;
    return [W / 2 + scale * u, H / 2 - scale * (v * ct + z * st)];
  };
  const image = ctx.createImageData(W, H), px = new Uint32Array(image.data.buffer);
  px.fill(0xffffffff);
  const span = hi[2] - lo[2];
  for (let i = 0; i < n; i++) {
    const [u, v] = project(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
    const x = Math.round(u), y = Math.round(v);
    if (x < 0 || y < 0 || x >= W - 1 || y >= H - 1) continue;
    const t = span > 0 ? (xyz[3 * i + 2] - lo[2]) / span : 0.5;
    // Little-endian RGBA as one number: 0xAABBGGRR.
    const color = 0xff000000 | (Math.round(255 * (1 - t)) << 16) | (80 << 8) | Math.round(255 * t);
    px[y * W + x] = px[y * W + x + 1] = px[(y + 1) * W + x] = px[(y + 1) * W + x + 1] = color;
  }
  ctx.putImageData(image, 0, 0);
  if (header.shape === "path" && n > 0) {
    ctx.strokeStyle = "#263238";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let i = 0; i < n; i++) { const [u, v] = project(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]); if (i === 0) ctx.moveTo(u, v); else ctx.lineTo(u, v); }
    ctx.stroke();
    const [u, v] = project(xyz[3 * n - 3], xyz[3 * n - 2], xyz[3 * n - 1]);
    ctx.fillStyle = "#c62828";
    ctx.beginPath(); ctx.arc(u, v, 4, 0, 2 * Math.PI); ctx.fill();
  }
  // The frame's origin and axes (x red, y green, z blue), a fifth of the view long.
  const [ou, ov] = project(0, 0, 0), axis = radius / 5 / zoom;
  [[axis, 0, 0, "#c62828"], [0, axis, 0, "#2e7d32"], [0, 0, axis, "#1565c0"]].forEach(([x, y, z, color]) => {
    const [u, v] = project(x, y, z);
    ctx.strokeStyle = color; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(ou, ov); ctx.lineTo(u, v); ctx.stroke();
  });
  canvas.dataset.shape = header.shape;
  canvas.dataset.points = String(n);
  canvas.dataset.frames = String(Number(canvas.dataset.frames || 0) + 1);
  const sampled = header.total > header.count ? ` (a sample of ${header.total})` : "";
  const extent = n ? ` · ${(2 * radius).toFixed(2)} m across` : "";
  $("channel-legend").replaceChildren(el("span", {}, `${n} ${header.shape === "path" ? "poses" : "points"}${sampled}` +
    (header.frame ? ` in ${header.frame}` : "") + extent));
}

// Dragging turns the view (sideways about z, up and down from above to level), the wheel zooms.
function watchPointsCanvas() {
  const canvas = $("channel-points"), camera = view.camera;
  let from = null;
  const redraw = () => { if (view.points) drawPoints(); };
  canvas.addEventListener("pointerdown", (e) => { from = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); });
  canvas.addEventListener("pointerup", () => { from = null; });
  canvas.addEventListener("pointermove", (e) => {
    if (!from) return;
    camera.yaw += (e.clientX - from[0]) * 0.01;
    camera.tilt = Math.min(Math.PI / 2, Math.max(0, camera.tilt + (e.clientY - from[1]) * 0.01));
    from = [e.clientX, e.clientY];
    redraw();
  });
  canvas.addEventListener("wheel", (e) => { e.preventDefault(); camera.zoom *= Math.exp(-e.deltaY * 0.001); redraw(); }, { passive: false });
  canvas.addEventListener("dblclick", () => { Object.assign(camera, { yaw: 0, tilt: 0, zoom: 1 }); redraw(); });
}

function plot(header) {
  const canvas = $("channel-plot");
  canvas.hidden = false;
  if (!view.plot || view.plot.names.join() !== header.names.join()) view.plot = { names: header.names, rows: [] };
  view.plot.rows.push(header.values);
  if (view.plot.rows.length > PLOT_POINTS) view.plot.rows.shift();
  const rows = view.plot.rows, ctx = canvas.getContext("2d");
  const all = rows.flat().filter((v) => v !== null);
  let lo = Math.min(...all), hi = Math.max(...all);
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  header.names.forEach((name, s) => {
    ctx.strokeStyle = COLORS[s % COLORS.length];
    ctx.beginPath();
    rows.forEach((row, i) => {
      if (row[s] === null) return;
      const x = (i / (PLOT_POINTS - 1)) * canvas.width, y = canvas.height - ((row[s] - lo) / (hi - lo)) * (canvas.height - 10) - 5;
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  });
  canvas.dataset.points = String(rows.length);
  const texts = Object.entries(header.texts || {}).map(([name, text]) => el("span", { class: "text" }, `${name}: ${text}`));
  $("channel-legend").replaceChildren(...header.names.map((name, s) => {
    const value = header.values[s];
    const span = el("span", {}, `${name} = ${value === null ? "–" : +value.toPrecision(6)}`);
    span.style.color = COLORS[s % COLORS.length];
    return span;
  }), ...texts);
}

function tree(value) {
  const build = (v, label) => {
    if (v !== null && typeof v === "object") {
      const d = el("details");
      d.open = true;
      d.append(el("summary", {}, label + (Array.isArray(v) ? ` [${v.length}]` : "")));
      for (const [k, child] of Object.entries(v)) d.append(build(child, Array.isArray(v) ? `[${k}]` : k));
      return d;
    }
    return el("div", { class: "leaf" }, `${label}: ${JSON.stringify(v)}`);
  };
  const rows = Array.isArray(value) && value.length === 1 ? value[0] : value;
  $("channel-tree").replaceChildren(build(rows, "value"));
}

function openNode(run, id) {
  view.node = { run, id };
  showTab("node");
  renderNode();
  fetchLog();
}

function renderNode() {
  const { run, id } = view.node;
  const r = view.graph.runs.find((x) => x.run_id === run);
  const n = r && r.nodes.find((x) => x.id === id);
  $("node-title").textContent = `${id} (${r ? r.name || r.run_id : "ended"})`;
  const rows = n ? [
    ["state", n.state], ["pid", n.pid ?? "–"], ["restarts", n.restarts], ["machine", n.machine ?? "this one"],
    ["cpu", fmt.cpu(n.cpu_percent)], ["memory", fmt.bytes(n.memory_bytes)],
    ["received", fmt.rate(n.received_per_sec)], ["dropped", n.dropped],
    ["outputs", n.outputs.map((o) => o.id).join(", ") || "–"],
  ] : [["state", "its run has ended"]];
  $("node-table").replaceChildren(...rows.map(([k, v]) => {
    const tr = el("tr");
    tr.append(el("td", {}, k), el("td", {}, String(v)));
    return tr;
  }));
}

async function fetchLog() {
  clearTimeout(view.logTimer);
  if (!view.node || $("tab-node").hidden) return;
  const { run, id } = view.node;
  const r = await fetch(`/api/logs?run=${encodeURIComponent(run)}&node=${encodeURIComponent(id)}&lines=200`);
  const log = $("node-log");
  log.textContent = await r.text();
  log.className = r.ok ? "" : "error";
  log.scrollTop = log.scrollHeight;
  view.logTimer = setTimeout(fetchLog, 2000);
}

function openTransforms() {
  if (view.tf) return;
  const socket = new WebSocket(`ws://${location.host}/api/tf`);
  view.tf = socket;
  socket.onmessage = (m) => {
    const t = JSON.parse(m.data);
    if (t.error) { $("tf-tree").replaceChildren(el("li", { class: "error" }, t.error)); return; }
    drawTree(t);
  };
  socket.onclose = () => { if (view.tf === socket) view.tf = null; };
}

function closeTransforms() {
  if (view.tf) { view.tf.close(); view.tf = null; }
}

function drawTree(t) {
  const children = new Map();
  const isChild = new Set(t.edges.map((e) => e.child));
  for (const e of t.edges) (children.get(e.parent) || children.set(e.parent, []).get(e.parent)).push(e);
  const item = (frame, edge) => {
    let text = frame;
    if (edge) {
      const p = edge.translation ? edge.translation.map((v) => v.toFixed(2)).join(", ") : "?";
      const age = (t.now_ns - edge.latest_ns) / 1e9;
      text += edge.static ? `  static · (${p})` : `  ${fmt.rate(edge.rate_hz)} · ${age.toFixed(1)} s ago · (${p})`;
    }
    const li = el("li", { "data-frame": frame }, text);
    const kids = children.get(frame) || [];
    if (kids.length) { const ul = el("ul"); for (const k of kids) ul.append(item(k.child, k)); li.append(ul); }
    return li;
  };
  const roots = [...children.keys()].filter((f) => !isChild.has(f));
  $("tf-tree").replaceChildren(...(roots.length ? roots.map((r) => item(r)) : [el("li", {}, "no transform yet")]));
}

for (const b of document.querySelectorAll("#panel nav button")) {
  b.addEventListener("click", () => { showTab(b.dataset.tab); if (b.dataset.tab === "node" && view.node) fetchLog(); });
}
watchPointsCanvas();
poll();
