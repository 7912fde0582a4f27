// The result viewer: the table of a result's complete rows with paging and
// sorting, the download links, and a bar chart for a grouped count or sum.
// The picture of a result (a line over time, bars, a map) is chosen by
// its data in charts.js.
// It renders into viewer.html and reads pages from a source; where pages
// come from, and how links open, is the host's part:
//
//   - rest.js, the /view page of the REST API in a browser (dualresp/viewer);
//   - datasf/app/src/app.js, the MCP App beside a tool call (datasf).
//
// ../build.mjs bundles each host with this module into viewer.html.
//
// The page marks its state on <body data-…> for the browser tests: loads,
// loaded, offset, total, sort, failed, chart (its kind), chart-figures,
// chart-bars, pinned.
import { CHART_BARS, CHART_MAX_GROUPS, MAP_MAX_POINTS, chooseChart, drawAreas, drawBars, drawLine, drawPoints, isPoint } from "./charts.js";

export const PAGE = 100;
const EXPORTS = ["csv", "ndjson", "json", "xlsx"];

export const $ = (id) => document.getElementById(id);
const body = document.body;

// text is how a cell shows a value.
export function text(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function count(n) {
  return n.toLocaleString("en-US");
}

// ---- sources of pages ----------------------------------------------------------
// A source has page({offset, limit, sort}) returning a REST page:
// {data, total_count, returned_count, offset, has_next, has_previous, …}.

// restJSON asks the REST API and returns its JSON answer; an error answer
// throws an Error with the API's message and the HTTP status.
export async function restJSON(url, { method = "GET", body: payload, headers = {}, timeout } = {}) {
  const h = { Accept: "application/json", ...headers };
  if (payload !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(url, {
    method,
    headers: h,
    body: payload === undefined ? undefined : JSON.stringify(payload),
    signal: timeout ? AbortSignal.timeout(timeout) : undefined,
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(data.message || data.error || "HTTP " + res.status);
    err.status = res.status;
    throw err;
  }
  return data;
}

// restPage reads a page of the result at url (POST /resources/{id}).
export function restPage(url, req, opts = {}) {
  const payload = { offset: req.offset, limit: req.limit };
  if (req.sort) payload.sort = req.sort;
  return restJSON(url, { ...opts, method: "POST", body: payload });
}

// rowsSource pages and sorts rows the viewer already has, as the REST API
// would: nulls first, numbers as numbers, ties in the rows' order.
export function rowsSource(rows) {
  return {
    async page(req) {
      let all = rows;
      if (req.sort) {
        const f = req.sort.field;
        const dir = req.sort.order === "desc" ? -1 : 1;
        all = rows.map((r, i) => [r, i]).sort((a, b) => {
          const c = compare(a[0][f], b[0][f]);
          return c !== 0 ? c * dir : a[1] - b[1];
        }).map((x) => x[0]);
      }
      const data = all.slice(req.offset, req.offset + req.limit);
      const next = req.offset + data.length;
      return {
        data, total_count: rows.length, returned_count: data.length, offset: req.offset, limit: req.limit,
        has_next: next < rows.length, next_offset: next < rows.length ? next : null, has_previous: req.offset > 0,
      };
    },
  };
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  const na = Number(a), nb = Number(b);
  if (a !== "" && b !== "" && !Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
  return text(a) < text(b) ? -1 : 1;
}

// ---- the viewer ------------------------------------------------------------------

// createViewer wires the page. host may give:
//   openLink(href): true when it opened the link itself (a sandboxed frame);
//   download(format, link): fetch and save an export itself (a token);
//   newTab: open links in a new tab;
//   pin(): pin the result (a promise); without it there is no pin button.
// It returns show(result), status(name, query) and fail(message), where a
// result is {name, query, total, columns: [{name, type}], source,
// exportURL?, note?, pinned?}.
export function createViewer(host = {}) {
  let view = null;

  function fail(msg) {
    $("error").textContent = msg;
  }

  function status(name, query = "") {
    $("name").textContent = name;
    $("query").textContent = query;
  }

  function numeric(c) {
    return c.type === "number" || c.type === "integer";
  }

  function renderHead() {
    const tr = document.querySelector("#rows thead tr");
    tr.textContent = "";
    for (const c of view.columns) {
      const th = document.createElement("th");
      th.textContent = c.name;
      th.dataset.field = c.name;
      if (numeric(c)) th.className = "num";
      th.tabIndex = 0;
      th.title = "Sort by " + c.name;
      if (view.sort && view.sort.field === c.name) th.dataset.order = view.sort.order;
      const sort = () => {
        const order = view.sort && view.sort.field === c.name && view.sort.order === "asc" ? "desc" : "asc";
        view.sort = { field: c.name, order };
        view.offset = 0;
        body.dataset.sort = c.name + " " + order;
        renderHead();
        load();
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
      tr.appendChild(th);
    }
  }

  function renderRows(rows) {
    const tbody = document.querySelector("#rows tbody");
    tbody.textContent = "";
    for (const row of rows) {
      const tr = document.createElement("tr");
      for (const c of view.columns) {
        const td = document.createElement("td");
        const v = row[c.name];
        td.textContent = v === null || v === undefined ? "(null)" : text(v);
        if (numeric(c)) td.className = "num";
        if (v === null || v === undefined) td.classList.add("null");
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
  }

  async function load() {
    const v = view;
    fail("");
    try {
      const page = await v.source.page({ offset: v.offset, limit: PAGE, sort: v.sort });
      if (v !== view) return; // a newer result replaced this one
      v.total = page.total_count;
      renderRows(page.data || []);
      const from = page.returned_count ? v.offset + 1 : 0;
      $("range").textContent = `rows ${count(from)}–${count(v.offset + (page.returned_count || 0))} of ${count(v.total)}`;
      $("prev").disabled = $("first").disabled = !page.has_previous;
      $("next").disabled = $("last").disabled = !page.has_next;
      $("pager").hidden = v.total <= PAGE && !page.has_previous;
      body.dataset.offset = String(v.offset);
      body.dataset.loaded = "true";
      body.dataset.loads = String(Number(body.dataset.loads || 0) + 1);
      return page.data || [];
    } catch (e) {
      fail("Could not load rows: " + e.message);
      body.dataset.failed = String(Number(body.dataset.failed || 0) + 1);
      return null;
    }
  }

  $("first").onclick = () => { view.offset = 0; load(); };
  $("prev").onclick = () => { view.offset = Math.max(0, view.offset - PAGE); load(); };
  $("next").onclick = () => { view.offset += PAGE; load(); };
  $("last").onclick = () => { view.offset = Math.max(0, Math.floor((view.total - 1) / PAGE) * PAGE); load(); };

  // picture reads the rows a picture needs, chosen by the data
  // (charts.js): every group of a grouped result (its largest for bars, in
  // time order for a line), the first rows of a result with a point
  // column; and draws it.
  async function picture(v, first) {
    const spec = chooseChart(v.columns, first, v.query);
    if (!spec || v.total === 0) return;
    let rows;
    if (spec.kind === "points") {
      rows = v.total <= first.length ? first : await readRows(v, Math.min(v.total, MAP_MAX_POINTS), null);
    } else {
      if (v.total > CHART_MAX_GROUPS) return;
      const sort = spec.kind === "line" ? { field: spec.label, order: "asc" } : { field: spec.value, order: "desc" };
      rows = await readRows(v, spec.kind === "bars" ? Math.min(v.total, CHART_BARS) : v.total, sort);
    }
    if (v !== view) return;
    v.picture = { spec, rows };
    drawPicture(v);
  }

  // readRows reads the first n rows of the result in order sort, a page
  // (PAGE rows) at a time: the host's result_page answers a larger page
  // with a preview of it, so each page goes on from the rows received.
  async function readRows(v, n, sort) {
    const rows = [];
    while (rows.length < n) {
      const page = await v.source.page({ offset: rows.length, limit: Math.min(PAGE, n - rows.length), sort });
      const data = page.data || [];
      rows.push(...data);
      if (!data.length) break;
    }
    return rows;
  }

  // drawPicture draws at the picture's width (again when it changes), so
  // that labels keep their size at any width.
  function drawPicture(v) {
    const { spec, rows } = v.picture;
    const box = $("chart");
    const W = Math.max(240, Math.floor(box.clientWidth || 600));
    const draw = { line: drawLine, bars: drawBars, points: drawPoints, areas: drawAreas }[spec.kind];
    const out = draw(rows, spec, spec.kind === "points" || spec.kind === "areas" ? Math.min(W, 600) : W, v.total);
    if (!out) return;
    box.textContent = "";
    box.appendChild(out.svg);
    if (out.note) box.appendChild(Object.assign(document.createElement("p"), { className: "chart-note", textContent: out.note }));
    v.chartWidth = W;
    body.dataset.chart = spec.kind;
    body.dataset.chartFigures = JSON.stringify(out.figures);
    if (spec.kind === "bars") body.dataset.chartBars = String(out.figures.bars);
  }

  // A click on a map's point or area shows its row under the map (a
  // hover shows it as the mark's title).
  $("chart").addEventListener("click", (e) => {
    const mark = e.target.closest && e.target.closest("[data-row]");
    if (!mark) return;
    let shown = $("chart").querySelector(".chart-row");
    if (!shown) {
      shown = Object.assign(document.createElement("pre"), { className: "chart-row" });
      $("chart").appendChild(shown);
    }
    shown.textContent = mark.dataset.row;
  });

  new ResizeObserver(() => {
    if (view && view.picture && Math.floor($("chart").clientWidth) !== view.chartWidth) drawPicture(view);
  }).observe(document.documentElement);

  function exportLink(format, href) {
    const a = document.createElement("a");
    a.id = format;
    a.textContent = "Download " + format.toUpperCase();
    a.href = href;
    if (host.newTab) {
      a.target = "_blank";
      a.rel = "noopener";
    }
    a.addEventListener("click", (e) => {
      if (host.download) {
        e.preventDefault();
        host.download(format, a);
      } else if (host.openLink && host.openLink(href)) {
        e.preventDefault();
      }
    });
    return a;
  }

  // show starts viewing a result.
  async function show(result) {
    fail("");
    $("chart").textContent = "";
    delete body.dataset.chartBars;
    delete body.dataset.chart;
    delete body.dataset.chartFigures;
    const links = $("links");
    links.textContent = "";
    if (result.exportURL) {
      for (const f of EXPORTS) links.appendChild(exportLink(f, result.exportURL + "/export?format=" + f));
    }
    pinButton(result);
    $("note").textContent = result.note || "";
    const v = { ...result, offset: 0, sort: null };
    view = v;
    status(v.name, v.query);
    document.title = v.name + " — result viewer";
    $("total").textContent = `${count(v.total)} ${v.total === 1 ? "row" : "rows"}`;
    body.dataset.total = String(v.total);
    renderHead();
    const first = await load();
    if (!first) return;
    if (result.exportURL && v.columns.some((c) => c.type === "point" || first.some((r) => isPoint(r[c.name])))) {
      $("links").appendChild(exportLink("geojson", result.exportURL + "/export?format=geojson"));
    }
    try {
      await picture(v, first);
    } catch (e) {
      fail("Could not draw the chart: " + e.message);
    }
  }

  // pinButton offers to pin the result when the host can (host.pin):
  // a pinned result is kept while it is read, and deleted after 30 days
  // unread.
  function pinButton(result) {
    const b = $("pin");
    b.hidden = !host.pin;
    if (!host.pin) return;
    const pinned = () => {
      b.textContent = "Pinned";
      b.disabled = true;
      b.title = "Kept while it is read; deleted after 30 days unread";
      body.dataset.pinned = "true";
    };
    b.textContent = "Pin";
    b.disabled = false;
    b.title = "Keep this result (deleted after 30 days unread)";
    delete body.dataset.pinned;
    if (result.pinned) pinned();
    b.onclick = async () => {
      fail("");
      b.disabled = true;
      try {
        await host.pin();
        pinned();
      } catch (e) {
        b.disabled = false;
        fail("Could not pin this result: " + e.message);
      }
    };
  }

  return { show, status, fail, hasResult: () => view !== null };
}
