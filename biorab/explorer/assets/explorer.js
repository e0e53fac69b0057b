// The BioRAB explorer: an instance list with filters and live counts, the cells chosen by their axes, a
// matrix of instances × cells, one instance's every cell (side by side, or one table row per cell), and a
// pinned baseline cell the others are compared with. Data come from local script files that call
// BIORAB_EXPLORER.manifest/index/detail (written by biorab/explorer/build.py). Every text from the data is
// put into the page with textContent, never parsed as HTML: a generation may hold "<script>". The view's
// state (filters, chosen cells, view, open instance, sort, group, baseline) lives in the URL's "#" part, so
// a copied link reopens the same view.
"use strict";

(function () {
  // The row code (biorab/explorer/entries.py): flags, verdict, flip and probe answer in one integer.
  const PARSE_FAILED = 1, MISLED = 2, HAS_CORRUPTED = 4, LEAKED = 8, COPIED = 16, GEN_ERROR = 32,
    ATTRIBUTED = 64;
  const verdictOf = (code) => (code >> 8) & 3;
  const flipOf = (code) => (code >> 10) & 3;
  const probeOf = (code) => (code >> 12) & 3;
  const VERDICTS = ["unknown", "right", "wrong"];
  const FLIPS = ["no twin", "helped", "hurt", "unchanged"];
  const LIST_ROW = 50;  // px per list item: only the items in view are drawn
  const SIDE_BY_SIDE_MAX = 6;  // an instance with more cells shows as a table, one row per cell
  const MATRIX_ROW = 18;  // px per matrix row: only the rows in view are drawn
  // The pinned baseline's statistics (explorer-stats.js; biorab/explorer/compare.py computes the same).
  const { N_BOOT, BOOT_SEED, EXACT_BELOW, bootstrapDelta, mcnemarP } = window.BIORAB_STATS;
  const NONE = "—";  // an axis a cell does not have (no rate, no retriever)

  const state = {
    manifest: null, indexLoaded: 0, indexParts: [], detailWaiters: {}, details: {}, detailLoaded: {},
    instances: [], rInst: null, rCell: null, rCode: null, instStart: null,
    selected: {}, axisSel: {}, cellOn: null, matched: [], matchCells: null, listFirst: -1, filtersKey: null,
    view: "list", open: null, sort: null, desc: false, group: "", layout: "auto", base: null, mx: "",
    expanded: new Set(), unfolded: new Set(), baseJob: 0, baseKey: null, matrixKey: null,
  };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function setStatus(text) { document.getElementById("status").textContent = text; }

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = src;
      s.onload = () => resolve();
      s.onerror = () => reject(new Error("could not load " + src));
      document.body.appendChild(s);
    });
  }

  const pad = (n) => String(n).padStart(5, "0");
  const axisValue = (cell, axis) => {
    const v = cell.axes ? cell.axes[axis] : undefined;
    return v === null || v === undefined ? NONE : String(v);
  };
  const cellName = (c) => (state.manifest.runs.length > 1 ? c.run + " · " : "") + c.label;
  // numbers compare as numbers, "—" (absent) last, the rest as text
  function compareValues(a, b) {
    if (a === b) return 0;
    if (a === NONE) return 1;
    if (b === NONE) return -1;
    const x = Number(a), y = Number(b);
    if (a !== "" && b !== "" && !Number.isNaN(x) && !Number.isNaN(y)) return x - y;
    return a < b ? -1 : 1;
  }

  // ---- data registration (called by the data files) ----
  const api = {
    manifest(m) {
      state.manifest = m;
      document.getElementById("title").textContent = "BioRAB explorer: " + m.source;
      setStatus("loading " + m.rows + " rows…");
      const t0 = performance.now();
      const loads = [];
      for (let k = 0; k < m.index_chunks; k++) loads.push(loadScript("data/index-" + pad(k) + ".js"));
      Promise.all(loads).then(() => { ready(performance.now() - t0); }, (e) => setStatus(String(e)));
    },
    index(k, payload) { state.indexParts[k] = payload; state.indexLoaded++; },
    detail(k, instances) {
      for (const inst of instances) state.details[inst.instance] = inst;
      const waiter = state.detailWaiters[k];
      if (waiter) waiter.forEach((f) => f());
      delete state.detailWaiters[k];
    },
  };
  window.BIORAB_EXPLORER = api;

  function ready(loadMs) {
    const m = state.manifest;
    const n = m.rows;
    m.axes = m.axes || [];
    state.rInst = new Int32Array(n);
    state.rCell = new Int32Array(n);
    state.rCode = new Int32Array(n);
    let r = 0;
    for (const part of state.indexParts) {
      for (const entry of part.instances) {
        state.instances.push({ dataset: entry[0], id: entry[1], snippet: entry[2], chunk: entry[3] });
      }
      const rows = part.rows;
      for (let j = 0; j < rows.length; j += 3, r++) {
        state.rInst[r] = rows[j]; state.rCell[r] = rows[j + 1]; state.rCode[r] = rows[j + 2];
      }
    }
    state.indexParts = [];
    // an instance's rows are contiguous (the builder writes them together): rows of i are
    // instStart[i] .. instStart[i + 1] - 1
    const nInst = state.instances.length;
    state.instStart = new Int32Array(nInst + 1);
    for (let k = 0, i = 0; i <= nInst; i++) {
      while (k < n && state.rInst[k] < i) k++;
      state.instStart[i] = k;
    }
    state.cellOn = new Uint8Array(m.cells.length).fill(1);
    const attributed = m.cells.filter((c) => c.attributed).length;
    if (attributed < m.cells.length) {
      const note = document.getElementById("note");
      note.hidden = false;
      note.textContent = attributed === 0
        ? "No evidence attribution found (attribution.parquet beside each cell's rows, written by biorab run):" +
          " the right/wrong, misled, helped/hurt, leaked and corrupted-evidence filters are disabled and" +
          " those columns are blank."
        : "Evidence attribution found for " + attributed + " of " + m.cells.length + " cells: rows of the" +
          " other cells count as unknown in its filters.";
    }
    buildAxes();
    buildFilters(attributed > 0);
    buildToolbar();
    readHash();
    setStatus(m.instances + " instances, " + n + " rows in " + m.cells.length + " cells; loaded in " +
      Math.round(loadMs) + " ms");
    document.body.dataset.readyMs = performance.now().toFixed(1);  // since navigation started
    document.body.dataset.ready = "1";
    window.addEventListener("hashchange", readHash);
  }

  // ---- the view's state in the URL ("#" part) ----
  // keys: i (open instance), v=matrix, f.<filter>, a.<axis> (repeated: the chosen values), sort, desc,
  // group, layout, base (baseline cell), mx (the matrix's column axis). Cells are named by their index in
  // the manifest.
  function hashFor(over) {
    const s = Object.assign({ i: state.open, v: state.view }, over || {});
    const p = new URLSearchParams();
    if (s.i !== null && s.i !== undefined) p.set("i", String(s.i));
    if (s.v === "matrix") p.set("v", "matrix");
    for (const f of state.facets) if (state.selected[f.id] !== undefined) p.set("f." + f.id, String(state.selected[f.id]));
    for (const axis of state.manifest.axes) {
      const chosen = state.axisSel[axis];
      if (chosen && !chosen.size) p.append("a." + axis, "");  // every value unticked: no cell
      else if (chosen) for (const v of [...chosen].sort(compareValues)) p.append("a." + axis, v);
    }
    if (state.sort) p.set("sort", state.sort);
    if (state.desc) p.set("desc", "1");
    if (state.group) p.set("group", state.group);
    if (state.layout !== "auto") p.set("layout", state.layout);
    if (state.base !== null) p.set("base", String(state.base));
    if (state.mx) p.set("mx", state.mx);
    return "#" + p.toString();
  }

  function writeHash() {
    const h = hashFor();
    if (location.hash !== h) history.replaceState(null, "", h === "#" ? location.pathname + location.search : h);
  }

  function readHash() {
    const m = state.manifest;
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    const i = p.has("i") ? Number(p.get("i")) : NaN;
    state.open = Number.isInteger(i) && i >= 0 && i < state.instances.length ? i : null;
    state.view = p.get("v") === "matrix" ? "matrix" : "list";
    state.selected = {};
    for (const f of state.facets) {
      const raw = p.get("f." + f.id);
      const value = raw === null ? NaN : Number(raw);
      const known = f.kind === "check" ? value === 1 : f.options.some(([v]) => v === value);
      if (known && !f.disabled) state.selected[f.id] = value;
      if (f.kind === "select") f.input.value = known && !f.disabled ? String(value) : "";
      else f.input.checked = Boolean(known && !f.disabled);
    }
    state.axisSel = {};
    for (const axis of m.axes) {
      const values = p.getAll("a." + axis);
      if (values.length) state.axisSel[axis] = new Set(values);
      for (const box of document.querySelectorAll("#axes input[data-axis='" + axis + "']")) {
        box.checked = !values.length || values.includes(box.value);
      }
    }
    const base = p.has("base") ? Number(p.get("base")) : NaN;
    state.base = Number.isInteger(base) && base >= 0 && base < m.cells.length ? base : null;
    const sort = p.get("sort");
    state.sort = sort && tableColumns().some((c) => c.key === sort) ? sort : null;
    state.desc = p.get("desc") === "1";
    const group = p.get("group") || "";
    state.group = m.axes.includes(group) ? group : "";
    const layout = p.get("layout");
    state.layout = layout === "table" || layout === "columns" ? layout : "auto";
    const mx = p.get("mx") || "";
    state.mx = m.axes.includes(mx) ? mx : "";
    document.getElementById("baseline").value = state.base === null ? "" : String(state.base);
    document.getElementById("matrix-axis").value = state.mx;
    document.getElementById("group").value = state.group;
    refresh();
  }

  // Apply the filters when they changed, then draw the view the state asks for.
  function refresh() {
    const key = JSON.stringify([state.selected, state.manifest.axes.map((a) =>
      state.axisSel[a] ? [...state.axisSel[a]].sort() : null)]);
    if (key !== state.filtersKey) {
      state.filtersKey = key;
      applyFilters();
    }
    if (state.baseKey !== key + "|" + state.base) {
      state.baseKey = key + "|" + state.base;
      computeBaseline();
    }
    render();
  }

  function commit() { refresh(); writeHash(); }

  function render() {
    const list = document.getElementById("list-view");
    const matrix = document.getElementById("matrix-view");
    const view = document.getElementById("instance-view");
    const instance = state.open !== null;
    view.hidden = !instance;
    list.hidden = instance || state.view !== "list";
    matrix.hidden = instance || state.view !== "matrix";
    document.getElementById("choose").hidden = instance;
    document.getElementById("show-list").classList.toggle("on", state.view === "list");
    document.getElementById("show-matrix").classList.toggle("on", state.view === "matrix");
    if (instance) openInstance(state.open);
    else if (state.view === "matrix") drawMatrix();
    else drawList(true);
  }

  // ---- cells chosen by their axes ----
  function buildAxes() {
    const m = state.manifest;
    const box = document.getElementById("axes");
    for (const axis of m.axes) {
      const counts = new Map();
      for (const c of m.cells) counts.set(axisValue(c, axis), (counts.get(axisValue(c, axis)) || 0) + 1);
      if (counts.size < 2) continue;  // an axis with one value chooses nothing
      const set = el("fieldset", "axis");
      set.dataset.axis = axis;
      set.appendChild(el("legend", null, axis));
      for (const value of [...counts.keys()].sort(compareValues)) {
        const label = el("label", "axis-value");
        const input = el("input");
        input.type = "checkbox";
        input.checked = true;
        input.value = value;
        input.dataset.axis = axis;
        input.addEventListener("change", () => {
          const all = [...set.querySelectorAll("input")];
          const on = all.filter((x) => x.checked).map((x) => x.value);
          if (on.length === all.length) delete state.axisSel[axis]; else state.axisSel[axis] = new Set(on);
          commit();
        });
        label.appendChild(input);
        label.appendChild(el("span", null, value + " (" + counts.get(value) + ")"));
        set.appendChild(label);
      }
      box.appendChild(set);
    }
  }

  function chooseCells() {
    const m = state.manifest;
    let on = 0;
    for (let c = 0; c < m.cells.length; c++) {
      let ok = 1;
      for (const axis in state.axisSel) {
        if (!state.axisSel[axis].has(axisValue(m.cells[c], axis))) { ok = 0; break; }
      }
      state.cellOn[c] = ok;
      on += ok;
    }
    document.getElementById("chosen").textContent = on + " of " + m.cells.length + " cells chosen";
  }

  // ---- filters ----
  function facets(withAttribution) {
    const m = state.manifest;
    const cellDataset = m.cells.map((c) => m.datasets.indexOf(c.dataset));
    const probeNames = ["not asked"].concat(m.probe_labels, ["unparsable"]);
    return [
      { id: "dataset", label: "dataset", kind: "select", value: (r) => cellDataset[state.rCell[r]],
        options: m.datasets.map((d, i) => [i, d]) },
      { id: "cell", label: "cell", kind: "select", value: (r) => state.rCell[r],
        options: m.cells.map((c, i) => [i, cellName(c)]) },
      { id: "verdict", label: "verdict", kind: "select", value: (r) => verdictOf(state.rCode[r]),
        options: [[1, "right"], [2, "wrong"], [0, "unknown"]], attribution: true },
      { id: "flip", label: "vs. no retrieval", kind: "select", value: (r) => flipOf(state.rCode[r]),
        options: [[1, "helped"], [2, "hurt"], [3, "unchanged"], [0, "no twin"]], attribution: true },
      { id: "probe", label: "probe's verdict", kind: "select", value: (r) => probeOf(state.rCode[r]),
        options: probeNames.map((p, i) => [i, p]) },
      { id: "misled", label: "misled (followed a corrupted item)", kind: "check",
        value: (r) => (state.rCode[r] & MISLED ? 1 : 0), attribution: true },
      { id: "corrupted", label: "evidence holds a corrupted item", kind: "check",
        value: (r) => (state.rCode[r] & HAS_CORRUPTED ? 1 : 0), attribution: true },
      { id: "copied", label: "copied a retrieved label", kind: "check",
        value: (r) => (state.rCode[r] & COPIED ? 1 : 0), attribution: true },
      { id: "leaked", label: "leaked evidence (a hit is a test duplicate)", kind: "check",
        value: (r) => (state.rCode[r] & LEAKED ? 1 : 0), attribution: true },
      { id: "parse", label: "parse failure", kind: "check", value: (r) => (state.rCode[r] & PARSE_FAILED ? 1 : 0) },
      { id: "error", label: "generation failed", kind: "check", value: (r) => (state.rCode[r] & GEN_ERROR ? 1 : 0) },
    ].map((f) => Object.assign(f, { disabled: Boolean(f.attribution) && !withAttribution }));
  }

  function buildFilters(withAttribution) {
    const form = document.getElementById("filters");
    state.facets = facets(withAttribution);
    for (const f of state.facets) {
      const box = el("label", "filter " + f.kind);
      box.dataset.filter = f.id;
      if (f.kind === "select") {
        box.appendChild(el("span", "name", f.label));
        const select = el("select");
        select.name = f.id;
        select.appendChild(el("option", null, "all"));
        select.firstChild.value = "";
        for (const [value, name] of f.options) {
          const o = el("option", null, name);
          o.value = String(value);
          o.dataset.name = name;
          select.appendChild(o);
        }
        select.disabled = f.disabled;
        select.addEventListener("change", () => {
          state.selected[f.id] = select.value === "" ? undefined : Number(select.value);
          if (state.selected[f.id] === undefined) delete state.selected[f.id];
          commit();
        });
        f.input = select;
        box.appendChild(select);
      } else {
        const input = el("input");
        input.type = "checkbox";
        input.name = f.id;
        input.disabled = f.disabled;
        input.addEventListener("change", () => {
          if (input.checked) state.selected[f.id] = 1; else delete state.selected[f.id];
          commit();
        });
        f.input = input;
        box.appendChild(input);
        box.appendChild(el("span", "name", f.label));
        f.countNode = el("span", "count");
        box.appendChild(f.countNode);
      }
      if (f.disabled) box.title = "needs evidence attribution (attribution.parquet)";
      form.appendChild(box);
    }
    const reset = el("button", "reset", "clear filters");
    reset.type = "button";
    reset.addEventListener("click", () => {
      state.selected = {};
      for (const f of state.facets) {
        if (f.kind === "select") f.input.value = ""; else f.input.checked = false;
      }
      commit();
    });
    form.appendChild(reset);
  }

  function buildToolbar() {
    const m = state.manifest;
    const base = document.getElementById("baseline");
    const none = el("option", null, "none");
    none.value = "";
    base.appendChild(none);
    m.cells.forEach((c, i) => {
      const o = el("option", null, cellName(c));
      o.value = String(i);
      base.appendChild(o);
    });
    base.addEventListener("change", () => {
      state.base = base.value === "" ? null : Number(base.value);
      commit();
    });
    for (const id of ["matrix-axis", "group"]) {
      const select = document.getElementById(id);
      const all = el("option", null, id === "group" ? "no grouping" : "one column per cell");
      all.value = "";
      select.appendChild(all);
      for (const axis of m.axes) {
        const o = el("option", null, id === "group" ? "group by " + axis : "one column per " + axis);
        o.value = axis;
        select.appendChild(o);
      }
    }
    document.getElementById("matrix-axis").addEventListener("change", (e) => {
      state.mx = e.target.value;
      commit();
    });
    document.getElementById("group").addEventListener("change", (e) => {
      state.group = e.target.value;
      state.unfolded.clear();
      commit();
    });
    document.getElementById("show-list").addEventListener("click", () => { state.view = "list"; commit(); });
    document.getElementById("show-matrix").addEventListener("click", () => { state.view = "matrix"; commit(); });
    document.getElementById("as-table").addEventListener("click", () => { state.layout = "table"; commit(); });
    document.getElementById("as-columns").addEventListener("click", () => { state.layout = "columns"; commit(); });
  }

  // One pass over every row of the chosen cells: a row passing every filter counts for each facet's
  // options; a row failing exactly one filter counts for that facet's options only (the count a click on
  // the option would give).
  function applyFilters() {
    const t0 = performance.now();
    chooseCells();
    const fs = state.facets;
    const active = fs.filter((f) => state.selected[f.id] !== undefined);
    const activeAt = active.map((f) => fs.indexOf(f));
    const wanted = active.map((f) => state.selected[f.id]);
    // every facet value is a small whole number (an option's value): a typed array per facet counts them
    // (a Map per facet took about a third of a pass over the full grid's 482k rows)
    const counts = fs.map((f) => new Int32Array(f.kind === "select" ? facetSize(f) : 2));
    const bump = (i, v) => { if (v < counts[i].length) counts[i][v]++; };
    const nInst = state.instances.length;
    const instHits = new Int32Array(nInst);
    const n = state.rCode.length;
    const values = new Array(fs.length);
    const cellOn = state.cellOn;
    let rows = 0;
    for (let r = 0; r < n; r++) {
      if (!cellOn[state.rCell[r]]) continue;
      let fails = 0, failed = -1;
      for (let i = 0; i < fs.length; i++) {
        values[i] = fs[i].value(r);
      }
      for (let a = 0; a < activeAt.length; a++) {
        const i = activeAt[a];
        if (values[i] !== wanted[a]) { fails++; failed = i; if (fails > 1) break; }
      }
      if (fails === 0) {
        rows++;
        instHits[state.rInst[r]]++;
        for (let i = 0; i < fs.length; i++) bump(i, values[i]);
      } else if (fails === 1) {
        bump(failed, values[failed]);
      }
    }
    state.matched = [];
    state.matchCells = instHits;
    for (let i = 0; i < nInst; i++) if (instHits[i] > 0) state.matched.push(i);
    fs.forEach((f, i) => showCounts(f, counts[i]));
    const filtered = active.length || Object.keys(state.axisSel).length;
    document.getElementById("counts").textContent = state.matched.length + " instances, " + rows +
      " rows (instance × cell) match" + (filtered ? "" : " (no filter)");
    document.getElementById("list-scroll").scrollTop = 0;
    drawList(true);
    state.matrixKey = null;
    // the time from the click to the counts and the list items in view drawn (bench/explorer.py reads it)
    document.body.dataset.filterMs = (performance.now() - t0).toFixed(1);
    document.body.dataset.filters = String(Number(document.body.dataset.filters || 0) + 1);
  }

  function facetSize(f) {
    let most = 0;
    for (const [value] of f.options) most = Math.max(most, value);
    return most + 1;
  }

  function showCounts(f, counts) {
    if (f.kind === "select") {
      for (const o of f.input.options) {
        if (o.value === "") continue;
        o.textContent = o.dataset.name + " (" + (counts[Number(o.value)] || 0) + ")";
      }
    } else {
      f.countNode.textContent = " (" + counts[1] + ")";
    }
  }

  // The list: only the items in view (and 10 either side) are in the page, at fixed heights.
  function drawList(force) {
    const box = document.getElementById("list-scroll");
    const list = document.getElementById("instances");
    const m = state.manifest;
    const first = Math.max(0, Math.floor(box.scrollTop / LIST_ROW) - 10);
    // as many as the box can show at its full height (70% of the window), visible yet or not
    const last = Math.min(state.matched.length, first + Math.ceil(0.7 * window.innerHeight / LIST_ROW) + 20);
    if (!force && first === state.listFirst) return;
    state.listFirst = first;
    list.style.height = (state.matched.length * LIST_ROW) + "px";
    const items = [];
    for (let k = first; k < last; k++) {
      const i = state.matched[k];
      const inst = state.instances[i];
      const item = el("li", "instance");
      item.style.top = (k * LIST_ROW) + "px";
      item.dataset.instance = String(i);
      item.appendChild(el("span", "number", (k + 1) + "."));
      const link = el("a", "open", inst.id);
      link.href = hashFor({ i: i });
      item.appendChild(link);
      item.appendChild(el("span", "dataset", m.datasets[inst.dataset]));
      item.appendChild(el("span", "matches", state.matchCells[i] + " matching cell" +
        (state.matchCells[i] === 1 ? "" : "s")));
      item.appendChild(el("div", "snippet", inst.snippet));
      items.push(item);
    }
    list.replaceChildren(...items);
  }

  // ---- the pinned baseline: every chosen cell against it, on the listed (filtered) instances ----
  const isRight = (code) => verdictOf(code) === 1;

  function computeBaseline() {
    const panel = document.getElementById("baseline-panel");
    const job = ++state.baseJob;
    panel.dataset.done = "0";
    if (state.base === null) { panel.hidden = true; panel.replaceChildren(); return; }
    const m = state.manifest, base = state.base;
    const nCells = m.cells.length;
    const n = new Int32Array(nCells), gained = new Int32Array(nCells), lost = new Int32Array(nCells);
    const right = new Int32Array(nCells), baseRight = new Int32Array(nCells);
    for (const i of state.matched) {
      const lo = state.instStart[i], hi = state.instStart[i + 1];
      let b = -1;
      for (let r = lo; r < hi; r++) if (state.rCell[r] === base) { b = r; break; }
      if (b < 0 || !(state.rCode[b] & ATTRIBUTED)) continue;
      const bRight = isRight(state.rCode[b]);
      for (let r = lo; r < hi; r++) {
        const c = state.rCell[r], code = state.rCode[r];
        if (c === base || !state.cellOn[c] || !(code & ATTRIBUTED)) continue;
        const cRight = isRight(code);
        n[c]++;
        if (cRight) right[c]++;
        if (bRight) baseRight[c]++;
        if (cRight && !bRight) gained[c]++;
        if (bRight && !cRight) lost[c]++;
      }
    }
    panel.hidden = false;
    const head = el("p", "baseline-head", "Against the baseline " + cellName(m.cells[base]) + ", on the " +
      state.matched.length + " listed instances (pairs: both cells hold the instance, with attribution); " +
      "Δ = cell − baseline accuracy, paired bootstrap 95% CI (" + N_BOOT + " resamples, mulberry32 seed " +
      BOOT_SEED + "), McNemar's p (exact below " + EXACT_BELOW + " discordant pairs).");
    const table = el("table", "baseline-table");
    const tr = el("tr");
    for (const h of ["cell", "n", "baseline acc.", "cell acc.", "Δ accuracy", "95% CI", "gained", "lost",
      "McNemar p"]) tr.appendChild(el("th", null, h));
    table.appendChild(el("thead")).appendChild(tr);
    const body = el("tbody");
    table.appendChild(body);
    const todo = [];
    for (let c = 0; c < nCells; c++) {
      if (c === base || !state.cellOn[c]) continue;
      const row = el("tr", "baseline-row");
      row.dataset.cell = String(c);
      row.dataset.cellId = m.cells[c].cell_id;
      row.dataset.run = m.cells[c].run;
      row.dataset.n = String(n[c]);
      row.dataset.gained = String(gained[c]);
      row.dataset.lost = String(lost[c]);
      const fmt = (x) => (n[c] ? x.toFixed(3) : NONE);
      const delta = n[c] ? (gained[c] - lost[c]) / n[c] : null;
      const p = n[c] ? mcnemarP(lost[c], gained[c]) : null;
      if (n[c]) { row.dataset.delta = String(delta); row.dataset.p = String(p); }
      for (const text of [cellName(m.cells[c]), n[c], fmt(baseRight[c] / n[c]), fmt(right[c] / n[c]),
        n[c] ? (delta >= 0 ? "+" : "") + delta.toFixed(3) : NONE, n[c] ? "…" : NONE, gained[c], lost[c],
        n[c] ? p.toPrecision(3) : NONE]) row.appendChild(el("td", null, text));
      body.appendChild(row);
      if (n[c]) todo.push([row, c]);
    }
    panel.replaceChildren(head, table);
    // the intervals: a few cells at a time, so the page stays responsive on hundreds of cells
    const step = () => {
      if (job !== state.baseJob) return;
      const t0 = performance.now();
      while (todo.length && performance.now() - t0 < 30) {
        const [row, c] = todo.shift();
        const [low, high] = bootstrapDelta(n[c], gained[c], lost[c]);
        row.dataset.low = String(low);
        row.dataset.high = String(high);
        row.children[5].textContent = "[" + low.toFixed(3) + ", " + high.toFixed(3) + "]";
      }
      if (todo.length) setTimeout(step, 0); else panel.dataset.done = String(job);
    };
    step();
  }

  // ---- the matrix: listed instances × chosen cells (or × one axis, the others fixed) ----
  const GLYPHS = [["", "absent"], ["✓", "right"], ["✗", "wrong"], ["!", "misled"], ["?", "parse failure"],
    ["–", "no answer"], ["○", "unknown"]];

  function glyphOf(code) {
    if (code & GEN_ERROR) return 5;
    if (code & PARSE_FAILED) return 4;
    if (code & MISLED) return 3;
    const v = verdictOf(code);
    return v === 1 ? 1 : v === 2 ? 2 : 6;
  }

  function matrixColumns(axis) {
    const m = state.manifest;
    const chosen = [];
    for (let c = 0; c < m.cells.length; c++) if (state.cellOn[c]) chosen.push(c);
    const varying = m.axes.filter((a) => new Set(chosen.map((c) => axisValue(m.cells[c], a))).size > 1);
    if (axis) {
      const byValue = new Map();
      for (const c of chosen) {
        const v = axisValue(m.cells[c], axis);
        byValue.set(v, (byValue.get(v) || []).concat([c]));
      }
      const shared = [...byValue.entries()].filter(([, cs]) => cs.length > 1);
      if (!shared.length) {
        const values = [...byValue.keys()].sort(compareValues);
        return { cols: values.map((v) => ({ label: axis + " = " + v, cells: byValue.get(v) })), note: "" };
      }
      const [v, cs] = shared[0];
      const others = varying.filter((a) => a !== axis);
      return { cols: matrixColumns("").cols, note: cs.length + " chosen cells have " + axis + " = " + v +
        ": fix the other axes (" + others.join(", ") + ") in the cell chooser to get one column per " + axis +
        "; meanwhile one column per cell." };
    }
    const short = varying.length ? varying : ["model"];
    return { cols: chosen.map((c) => ({ label: short.map((a) => axisValue(m.cells[c], a)).join(" · "), cells: [c],
      title: cellName(m.cells[c]) })), note: "" };
  }

  function drawMatrix() {
    const t0 = performance.now();
    const key = state.filtersKey + "|" + state.mx;
    const grid = document.getElementById("matrix-grid");
    if (state.matrixKey !== key) {
      state.matrixKey = key;
      const m = state.manifest;
      const { cols, note } = matrixColumns(state.mx);
      document.getElementById("matrix-note").textContent = note;
      document.getElementById("matrix-note").hidden = !note;
      const colOf = new Int32Array(m.cells.length).fill(-1);
      cols.forEach((col, k) => col.cells.forEach((c) => { colOf[c] = k; }));
      const nRows = state.matched.length, nCols = cols.length;
      const glyphs = new Uint8Array(nRows * nCols);
      const counts = cols.map(() => new Int32Array(7));
      const wrong = new Int32Array(nCols), misled = new Int32Array(nCols);
      for (let k = 0; k < nRows; k++) {
        const i = state.matched[k];
        for (let r = state.instStart[i]; r < state.instStart[i + 1]; r++) {
          const col = colOf[state.rCell[r]];
          if (col < 0) continue;
          const code = state.rCode[r];
          const g = glyphOf(code);
          glyphs[k * nCols + col] = g;
          counts[col][g]++;
          if (verdictOf(code) === 2) wrong[col]++;
          if (code & MISLED) misled[col]++;
        }
      }
      for (let col = 0; col < nCols; col++) counts[col][0] = nRows - counts[col].slice(1).reduce((a, b) => a + b, 0);
      state.mat = { cols, glyphs, nRows, nCols };
      const table = el("table", "matrix-counts");
      const head = el("tr");
      for (const h of ["#", "column", "right", "wrong", "of which misled", "parse failure", "no answer",
        "not held"]) head.appendChild(el("th", null, h));
      table.appendChild(el("thead")).appendChild(head);
      const body = el("tbody");
      cols.forEach((col, k) => {
        const tr = el("tr");
        tr.dataset.col = String(k);
        tr.dataset.cells = col.cells.join(",");
        tr.dataset.right = String(counts[k][1]);
        tr.dataset.wrong = String(wrong[k]);
        tr.dataset.misled = String(misled[k]);
        for (const text of [k + 1, col.label, counts[k][1], wrong[k], misled[k], counts[k][4], counts[k][5], counts[k][0]]) {
          tr.appendChild(el("td", null, text));
        }
        if (col.title) tr.title = col.title;
        body.appendChild(tr);
      });
      table.appendChild(body);
      document.getElementById("matrix-counts").replaceChildren(table);
      const header = el("div", "mrow mhead");
      header.appendChild(el("span", "mid", nRows + " instances × " + nCols + " columns"));
      cols.forEach((col, k) => {
        const h = el("span", "g", String(k + 1));
        h.title = col.label;
        header.appendChild(h);
      });
      document.getElementById("matrix-header").replaceChildren(header);
      const spacer = el("div", "mspacer");
      spacer.style.height = (nRows * MATRIX_ROW) + "px";
      grid.replaceChildren(spacer);
      grid.scrollTop = 0;
      state.matFirst = -1;
    }
    drawMatrixRows(true);
    document.body.dataset.matrixMs = (performance.now() - t0).toFixed(1);
    document.body.dataset.matrix = String(Number(document.body.dataset.matrix || 0) + 1);
  }

  // a glyph's title (its column and meaning) is made when the pointer reaches it, not for every glyph drawn
  function glyphTitle(e) {
    const span = e.target;
    if (!span.classList || !span.classList.contains("g") || span.title || !state.mat) return;
    const row = span.parentNode;
    const col = Array.prototype.indexOf.call(row.children, span) - 1;
    const k = Number(row.style.top.replace("px", "")) / MATRIX_ROW;
    const g = state.mat.glyphs[k * state.mat.nCols + col];
    span.title = state.mat.cols[col].label + ": " + GLYPHS[g][1];
  }

  // only the rows in view (and a few around them) are in the page
  function drawMatrixRows(force) {
    const grid = document.getElementById("matrix-grid");
    const mat = state.mat;
    if (!mat || grid.offsetParent === null) return;
    const first = Math.max(0, Math.floor(grid.scrollTop / MATRIX_ROW) - 10);
    const last = Math.min(mat.nRows, first + Math.ceil(grid.clientHeight / MATRIX_ROW) + 20);
    if (!force && first === state.matFirst) return;
    state.matFirst = first;
    const spacer = grid.firstChild;
    spacer.replaceChildren();
    for (let k = first; k < last; k++) {
      const i = state.matched[k];
      const row = el("div", "mrow");
      row.style.top = (k * MATRIX_ROW) + "px";
      row.dataset.instance = String(i);
      const link = el("a", "mid open", state.instances[i].id);
      link.href = hashFor({ i: i });
      row.appendChild(link);
      for (let col = 0; col < mat.nCols; col++) {
        const g = mat.glyphs[k * mat.nCols + col];
        row.appendChild(el("span", "g g" + g, GLYPHS[g][0]));  // its title is set on hover (glyphTitle)
      }
      spacer.appendChild(row);
    }
  }

  // ---- one instance: every cell side by side, or a table of its cells ----
  function openInstance(i) {
    const t0 = performance.now();
    if (state.shownInstance !== i) {  // folds opened and cards expanded belong to the instance shown
      state.shownInstance = i;
      state.unfolded.clear();
      state.expanded.clear();
    }
    document.getElementById("instance-head").replaceChildren(el("p", "loading", "loading…"));
    document.getElementById("columns").replaceChildren();
    document.getElementById("cell-table").replaceChildren();
    loadDetail(state.instances[i].chunk).then(() => {
      if (state.open === i) {
        showInstance(i);
        document.body.dataset.openMs = (performance.now() - t0).toFixed(1);
      }
    }, (e) => setStatus(String(e)));
  }

  function loadDetail(k) {
    return new Promise((resolve, reject) => {
      if (state.detailLoaded[k]) { resolve(); return; }
      const waiting = state.detailWaiters[k];
      if (waiting) { waiting.push(resolve); return; }
      state.detailWaiters[k] = [resolve];
      loadScript("data/detail-" + pad(k) + ".js").then(() => { state.detailLoaded[k] = true; }, reject);
    });
  }

  function field(parent, name, value, cls) {
    const row = el("div", "field " + (cls || ""));
    row.appendChild(el("span", "key", name));
    row.appendChild(el("span", "value", value === null || value === undefined ? "—" : value));
    parent.appendChild(row);
    return row;
  }

  function block(parent, title, text, open) {
    const d = el("details", "block");
    d.open = Boolean(open);
    d.appendChild(el("summary", null, title));
    d.appendChild(el("pre", "text", text === null || text === undefined ? "—" : text === "" ? "(empty)" : text));
    parent.appendChild(d);
    return d;
  }

  function showInstance(i) {
    const inst = state.details[i];
    const m = state.manifest;
    const head = el("div", "head");
    head.appendChild(el("h2", null, inst.id));
    field(head, "dataset", inst.dataset + " / " + inst.split + " (" + inst.task + ")");
    const text = el("div", "instance-text");
    text.appendChild(el("span", "key", "text"));
    text.appendChild(el("pre", "text", inst.text));
    head.appendChild(text);
    const gold = el("div", "instance-gold");
    gold.appendChild(el("span", "key", "gold"));
    gold.appendChild(el("pre", "text gold", inst.gold));
    head.appendChild(gold);
    const rowOf = new Map();
    for (let r = state.instStart[i]; r < state.instStart[i + 1]; r++) rowOf.set(state.rCell[r], r);
    const rows = inst.rows.filter((row) => state.cellOn[row.cell]);
    const asTable = state.layout === "table" || (state.layout === "auto" && rows.length > SIDE_BY_SIDE_MAX);
    head.appendChild(el("p", "hint", rows.length + " of the instance's " + inst.rows.length + " cells are " +
      "chosen; " + (asTable ? "one row per cell (click a row for its card)" : "side by side") + "; the " +
      (asTable ? "rows" : "columns") + " highlighted match the filters."));
    document.getElementById("instance-head").replaceChildren(head);
    document.getElementById("group-box").hidden = !asTable;
    document.getElementById("as-table").classList.toggle("on", asTable);
    document.getElementById("as-columns").classList.toggle("on", !asTable);
    const columns = document.getElementById("columns");
    columns.replaceChildren();
    document.getElementById("cell-table").replaceChildren();
    if (asTable) {
      cellTable(inst, rows, rowOf);
    } else {
      for (const row of rows) columns.appendChild(column(row, m.cells[row.cell], rowOf.get(row.cell)));
    }
    document.body.dataset.opened = String(i);
  }

  function matchesFilters(r) {
    if (!state.cellOn[state.rCell[r]]) return false;
    for (const f of state.facets) {
      const sel = state.selected[f.id];
      if (sel !== undefined && f.value(r) !== sel) return false;
    }
    return true;
  }

  function verdictText(code) {
    if (code & GEN_ERROR) return "no answer";
    if (!(code & ATTRIBUTED)) return code & PARSE_FAILED ? "parse failure" : "unknown";
    if (code & PARSE_FAILED) return "wrong (parse failure)";
    return VERDICTS[verdictOf(code)];
  }

  function rowTags(code) {
    const tags = [];
    if (code & MISLED) tags.push("misled");
    if ((code & ATTRIBUTED) && flipOf(code) && flipOf(code) !== 3) tags.push(FLIPS[flipOf(code)]);
    if (code & COPIED) tags.push("copied");
    if (code & LEAKED) tags.push("leaked");
    if (code & PARSE_FAILED) tags.push("parse failure");
    return tags.join(", ");
  }

  function hitTagText(tags) {
    if (!tags) return "";
    const out = [];
    if (tags.corrupted) out.push("corrupted" + (tags.how ? " (" + tags.how + ")" : "") + ": " +
      tags.original_label + " → " + tags.corrupted_label);
    if (tags.leaked) out.push("test duplicate");
    if (tags.diverse) out.push("other task: " + (tags.source || "?"));
    if (tags.unlabeled) out.push("unlabeled");
    return out.join(", ");
  }

  function versusBase(code, baseCode) {
    if (baseCode === undefined || !(code & ATTRIBUTED) || !(baseCode & ATTRIBUTED)) return NONE;
    const a = isRight(baseCode), b = isRight(code);
    return b && !a ? "gained" : a && !b ? "lost" : "same";
  }

  function tableColumns() {
    const axes = state.manifest.axes.map((a) => ({ key: a, label: a, axis: true }));
    const rest = [{ key: "answer", label: "parsed answer" }, { key: "verdict", label: "verdict" },
      { key: "tags", label: "tags" }, { key: "hit", label: "top hit" }];
    if (state.base !== null) rest.push({ key: "versus", label: "vs. baseline" });
    return axes.concat(rest);
  }

  function cellTable(inst, rows, rowOf) {
    const m = state.manifest;
    const cols = tableColumns();
    const baseRow = state.base !== null ? rowOf.get(state.base) : undefined;
    const baseCode = baseRow === undefined ? undefined : state.rCode[baseRow];
    const data = rows.map((row) => {
      const r = rowOf.get(row.cell);
      const code = state.rCode[r];
      const cell = m.cells[row.cell];
      const d = { row, r, code, cell: row.cell };
      for (const a of m.axes) d[a] = axisValue(cell, a);
      d.answer = row.gen_error ? "(no answer)" : row.parsed ? String(row.answer) : "(unparsed)";
      d.verdict = verdictText(code);
      d.tags = rowTags(code);
      d.hit = row.hits.length ? hitTagText(row.hits[0].tags) || "(no tag)" : "no retrieval";
      d.versus = row.cell === state.base ? "baseline" : versusBase(code, baseCode);
      return d;
    });
    if (state.sort) {
      const k = state.sort, sign = state.desc ? -1 : 1;
      data.sort((x, y) => sign * compareValues(x[k], y[k]) || x.cell - y.cell);
    }
    const table = el("table", "cells");
    const head = el("tr");
    for (const c of cols) {
      const th = el("th", c.axis ? "axis" : null, c.label + (state.sort === c.key ? (state.desc ? " ▼" : " ▲") : ""));
      th.dataset.key = c.key;
      th.title = "sort by " + c.label;
      th.addEventListener("click", () => {
        if (state.sort === c.key) state.desc = !state.desc; else { state.sort = c.key; state.desc = false; }
        commit();
      });
      head.appendChild(th);
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    const groups = new Map();
    if (state.group) {
      for (const d of data) groups.set(d[state.group], (groups.get(d[state.group]) || []).concat([d]));
    } else {
      groups.set(null, data);
    }
    const keys = [...groups.keys()];
    if (state.group) keys.sort(compareValues);
    for (const g of keys) {
      const members = groups.get(g);
      if (state.group) {
        const tr = el("tr", "group");
        tr.dataset.group = g;
        const right = members.filter((d) => isRight(d.code)).length;
        tr.appendChild(el("th", null, state.group + " = " + g + " · " + members.length + " cell" +
          (members.length === 1 ? "" : "s") + " · " + right + " right")).colSpan = cols.length;
        body.appendChild(tr);
      }
      // in a group, identical answers (and verdicts) fold into one line with their count
      const folds = new Map();
      if (state.group) for (const d of members) {
        const key = g + "\u0000" + d.answer + "\u0000" + d.verdict;
        folds.set(key, (folds.get(key) || []).concat([d]));
      }
      const done = new Set();
      for (const d of members) {
        const key = g + "\u0000" + d.answer + "\u0000" + d.verdict;
        const fold = folds.get(key);
        if (fold && fold.length > 1 && !state.unfolded.has(key)) {
          if (done.has(key)) continue;
          done.add(key);
          const tr = el("tr", "fold");
          tr.dataset.count = String(fold.length);
          tr.appendChild(el("td", null, "answer " + d.answer + " · " + d.verdict + " · × " + fold.length +
            " cells (click to unfold)")).colSpan = cols.length;
          tr.addEventListener("click", () => { state.unfolded.add(key); showInstance(state.open); });
          body.appendChild(tr);
          continue;
        }
        dataRow(body, d, cols);
      }
    }
    table.appendChild(body);
    document.getElementById("cell-table").replaceChildren(table);
  }

  function dataRow(body, d, cols) {
    const m = state.manifest;
    const tr = el("tr", "cell-row" + (matchesFilters(d.r) ? " match" : ""));
    tr.dataset.cell = String(d.cell);
    tr.dataset.cellId = m.cells[d.cell].cell_id;
    for (const c of cols) {
      const td = el("td", "c-" + c.key, d[c.key]);
      if (c.key === "verdict") td.classList.add("v-" + d.verdict.split(" ")[0]);
      if (c.key === "versus") td.classList.add("vs-" + d.versus);
      tr.appendChild(td);
    }
    body.appendChild(tr);
    const open = () => {
      const card = el("tr", "card-row");
      const td = el("td");
      td.colSpan = cols.length;
      td.appendChild(column(d.row, m.cells[d.cell], d.r));
      card.appendChild(td);
      tr.after(card);
    };
    tr.addEventListener("click", () => {
      if (state.expanded.has(d.cell)) {
        state.expanded.delete(d.cell);
        if (tr.nextSibling && tr.nextSibling.classList.contains("card-row")) tr.nextSibling.remove();
      } else {
        state.expanded.add(d.cell);
        open();
      }
    });
    if (state.expanded.has(d.cell)) open();
  }

  function column(row, cell, r) {
    const m = state.manifest;
    const code = state.rCode[r];
    const col = el("article", "cell-column" + (matchesFilters(r) ? " match" : ""));
    col.dataset.cell = String(row.cell);
    col.dataset.cellId = cell.cell_id;
    col.appendChild(el("h3", null, cellName(cell)));
    field(col, "corpus", cell.testbed + (cell.retriever ? " · " + cell.retriever : ""));
    const badges = el("div", "badges");
    const badge = (text, cls) => badges.appendChild(el("span", "badge " + cls, text));
    if (code & ATTRIBUTED) badge(VERDICTS[verdictOf(code)] + (verdictOf(code) === 2 && code & PARSE_FAILED ? " (parse failure)" : ""), "verdict-" + VERDICTS[verdictOf(code)]);
    if (code & PARSE_FAILED) badge("parse failure", "parse");
    if (code & GEN_ERROR) badge("generation failed", "error");
    if (code & MISLED) badge("misled", "misled");
    if (code & COPIED) badge("copied evidence", "copied");
    if (code & LEAKED) badge("leaked evidence", "leaked");
    if ((code & ATTRIBUTED) && flipOf(code)) badge(FLIPS[flipOf(code)], "flip-" + FLIPS[flipOf(code)]);
    if (!(code & ATTRIBUTED)) badge("no attribution", "none");
    if (state.base !== null) {
      const i = state.rInst[r];
      let baseCode;
      for (let b = state.instStart[i]; b < state.instStart[i + 1]; b++) {
        if (state.rCell[b] === state.base) baseCode = state.rCode[b];
      }
      const versus = row.cell === state.base ? "baseline" : versusBase(code, baseCode);
      if (versus !== NONE) badge(versus === "baseline" ? "the baseline" : versus + " vs. baseline", "vs-" + versus);
    }
    col.appendChild(badges);
    field(col, "parsed answer", row.parsed ? row.answer : "(unparsed)", "answer");
    if (row.probe_prompt !== null) field(col, "probe's answer", row.probe_answer || "(unparsable)", "probe");
    const attribution = row.attribution;
    if (attribution && attribution.error_types) {
      field(col, "error types", Object.entries(attribution.error_types).map(([k, v]) => k + " " + v).join(", "));
    }
    if (cell.twin !== null && cell.twin !== undefined) field(col, "no-retrieval twin", m.cells[cell.twin].label);
    const evidence = el("div", "evidence");
    evidence.appendChild(el("h4", null, "retrieved evidence (" + row.hits.length + ")"));
    for (const hit of row.hits) evidence.appendChild(hitView(hit));
    if (!row.hits.length) evidence.appendChild(el("p", "none", "no retrieval"));
    col.appendChild(evidence);
    block(col, "raw generation", row.gen_error ? "error: " + row.gen_error : row.generation, true)
      .classList.add("generation");
    block(col, "prompt", row.prompt, false).classList.add("prompt");
    if (row.probe_prompt !== null) {
      block(col, "probe prompt", row.probe_prompt, false);
      block(col, "probe generation", row.probe_error ? "error: " + row.probe_error : row.probe_generation, false);
    }
    return col;
  }

  function hitView(hit) {
    const tags = hit.tags;
    const box = el("div", "hit" + (tags && tags.corrupted ? " corrupted" : ""));
    const top = el("div", "hit-head");
    top.appendChild(el("span", "rank", "#" + (hit.rank + 1)));
    top.appendChild(el("span", "doc", hit.doc_id));
    if (typeof hit.score === "number") top.appendChild(el("span", "score", hit.score.toFixed(2)));
    box.appendChild(top);
    if (tags) {
      const t = el("div", "tags");
      if (tags.corrupted) {
        t.appendChild(el("span", "tag corrupted", "corrupted" + (tags.how ? " (" + tags.how + ")" : "") + ": " +
          tags.original_label + " → " + tags.corrupted_label));
      }
      if (tags.leaked) t.appendChild(el("span", "tag leaked", "test duplicate"));
      if (tags.diverse) t.appendChild(el("span", "tag diverse", "other task: " + (tags.source || "?")));
      if (tags.unlabeled) t.appendChild(el("span", "tag unlabeled", "unlabeled"));
      box.appendChild(t);
    }
    box.appendChild(el("pre", "text key", hit.key));
    field(box, "label", hit.value === null ? "(none)" : hit.value, "hit-label");
    return box;
  }

  // a link to an instance carries the state of the moment it is clicked (the list may be older than it)
  function openOnClick(e) {
    const row = e.target.closest("[data-instance]");
    if (!row || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    location.hash = hashFor({ i: Number(row.dataset.instance) });
  }

  document.getElementById("instances").addEventListener("click", openOnClick);
  document.getElementById("matrix-grid").addEventListener("click", openOnClick);
  document.getElementById("list-scroll").addEventListener("scroll", () => drawList(false));
  document.getElementById("back").addEventListener("click", () => { location.hash = hashFor({ i: null }); });
  document.getElementById("matrix-grid").addEventListener("scroll", () => drawMatrixRows(false));
  document.getElementById("matrix-grid").addEventListener("mouseover", glyphTitle);
  window.addEventListener("resize", () => { drawMatrixRows(true); drawList(true); });
})();
