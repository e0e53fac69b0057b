// The BioRAB explorer: an instance list with filters and live counts, and one instance's every cell side
// by side. Data come from local script files that call BIORAB_EXPLORER.manifest/index/detail (written by
// biorab/explorer/build.py). Every text from the data is put into the page with textContent, never parsed
// as HTML: a generation may hold "<script>".
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
  const PAGE = 100;

  const state = {
    manifest: null, indexLoaded: 0, indexParts: [], detailWaiters: {}, details: {},
    instances: [], rInst: null, rCell: null, rCode: null, rowsOf: null,
    selected: {}, matched: [], shown: 0, current: null,
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
    buildFilters(attributed > 0);
    applyFilters();
    setStatus(m.instances + " instances, " + n + " rows in " + m.cells.length + " cells; loaded in " +
      Math.round(loadMs) + " ms");
    document.body.dataset.readyMs = performance.now().toFixed(1);  // since navigation started
    document.body.dataset.ready = "1";
    window.addEventListener("hashchange", route);
    route();
  }

  // ---- filters ----
  function facets(withAttribution) {
    const m = state.manifest;
    const cellDataset = m.cells.map((c) => m.datasets.indexOf(c.dataset));
    const probeNames = ["not asked"].concat(m.probe_labels, ["unparsable"]);
    const cellName = (c) => (m.runs.length > 1 ? c.run + " · " : "") + c.label;
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
          applyFilters();
        });
        f.input = select;
        box.appendChild(select);
      } else {
        const input = el("input");
        input.type = "checkbox";
        input.name = f.id;
        input.disabled = f.disabled;
        input.addEventListener("change", () => {
          state.selected[f.id] = input.checked ? 1 : undefined;
          applyFilters();
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
      applyFilters();
    });
    form.appendChild(reset);
  }

  // One pass over every row: a row passing every filter counts for each facet's options; a row failing
  // exactly one filter counts for that facet's options only (the count a click on the option would give).
  function applyFilters() {
    const t0 = performance.now();
    const fs = state.facets;
    const active = fs.filter((f) => state.selected[f.id] !== undefined);
    const activeAt = active.map((f) => fs.indexOf(f));
    const wanted = active.map((f) => state.selected[f.id]);
    const counts = fs.map(() => new Map());
    const bump = (i, v) => counts[i].set(v, (counts[i].get(v) || 0) + 1);
    const nInst = state.instances.length;
    const instHits = new Int32Array(nInst);
    const n = state.rCode.length;
    const values = new Array(fs.length);
    let rows = 0;
    for (let r = 0; r < n; r++) {
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
    document.getElementById("counts").textContent = state.matched.length + " instances, " + rows +
      " rows (instance × cell) match" + (active.length ? "" : " (no filter)");
    state.shown = 0;
    document.getElementById("instances").replaceChildren();
    showMore();
    // the time from the click to the counts and the first page of the list (bench/explorer.py reads it)
    document.body.dataset.filterMs = (performance.now() - t0).toFixed(1);
    document.body.dataset.filters = String(Number(document.body.dataset.filters || 0) + 1);
  }

  function showCounts(f, counts) {
    if (f.kind === "select") {
      for (const o of f.input.options) {
        if (o.value === "") continue;
        o.textContent = o.dataset.name + " (" + (counts.get(Number(o.value)) || 0) + ")";
      }
    } else {
      f.countNode.textContent = " (" + (counts.get(1) || 0) + ")";
    }
  }

  function showMore() {
    const list = document.getElementById("instances");
    const m = state.manifest;
    const end = Math.min(state.matched.length, state.shown + PAGE);
    for (let k = state.shown; k < end; k++) {
      const i = state.matched[k];
      const inst = state.instances[i];
      const item = el("li", "instance");
      item.dataset.instance = String(i);
      const link = el("a", "open", inst.id);
      link.href = "#i=" + i;
      item.appendChild(link);
      item.appendChild(el("span", "dataset", m.datasets[inst.dataset]));
      item.appendChild(el("span", "matches", state.matchCells[i] + " matching cell" +
        (state.matchCells[i] === 1 ? "" : "s")));
      item.appendChild(el("div", "snippet", inst.snippet));
      list.appendChild(item);
    }
    state.shown = end;
    const more = document.getElementById("more");
    more.hidden = end >= state.matched.length;
    more.textContent = "show more (" + (state.matched.length - end) + " left)";
  }

  // ---- one instance, every cell side by side ----
  function route() {
    const found = /^#i=(\d+)$/.exec(location.hash);
    const list = document.getElementById("list-view");
    const view = document.getElementById("instance-view");
    if (!found || Number(found[1]) >= state.instances.length) {
      list.hidden = false; view.hidden = true; state.current = null;
      return;
    }
    const i = Number(found[1]);
    state.current = i;
    list.hidden = true; view.hidden = false;
    document.getElementById("instance-head").replaceChildren(el("p", "loading", "loading…"));
    document.getElementById("columns").replaceChildren();
    loadDetail(state.instances[i].chunk).then(() => { if (state.current === i) showInstance(i); },
      (e) => setStatus(String(e)));
  }

  function loadDetail(k) {
    return new Promise((resolve, reject) => {
      const waiting = state.detailWaiters[k];
      if (waiting) { waiting.push(resolve); return; }
      if (state.detailLoaded && state.detailLoaded[k]) { resolve(); return; }
      state.detailWaiters[k] = [resolve];
      loadScript("data/detail-" + pad(k) + ".js").then(() => {
        state.detailLoaded = state.detailLoaded || {};
        state.detailLoaded[k] = true;
      }, reject);
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
    head.appendChild(el("p", "hint", inst.rows.length + " cells side by side; the columns highlighted match " +
      "the filters."));
    document.getElementById("instance-head").replaceChildren(head);
    const columns = document.getElementById("columns");
    columns.replaceChildren();
    const codeOf = new Map();
    for (let r = 0; r < state.rInst.length; r++) {
      if (state.rInst[r] === i) codeOf.set(state.rCell[r], r);
    }
    for (const row of inst.rows) {
      const cell = m.cells[row.cell];
      const r = codeOf.get(row.cell);
      columns.appendChild(column(row, cell, r));
    }
    document.body.dataset.opened = String(i);
  }

  function matchesFilters(r) {
    for (const f of state.facets) {
      const sel = state.selected[f.id];
      if (sel !== undefined && f.value(r) !== sel) return false;
    }
    return true;
  }

  function column(row, cell, r) {
    const m = state.manifest;
    const code = state.rCode[r];
    const col = el("article", "cell-column" + (matchesFilters(r) ? " match" : ""));
    col.dataset.cell = String(row.cell);
    col.dataset.cellId = cell.cell_id;
    col.appendChild(el("h3", null, (m.runs.length > 1 ? cell.run + " · " : "") + cell.label));
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

  document.getElementById("more").addEventListener("click", showMore);
  document.getElementById("back").addEventListener("click", () => { location.hash = ""; });
})();
