// The result viewer: the table of a result's complete rows with paging and
// sorting, the download links, and a bar chart for a grouped count or sum.
// It renders into viewer.html and reads pages from a source; where pages
// come from, and how links open, is the host's part:
//
//   - rest.js, the /view page of the REST API in a browser (dualresp/viewer);
//   - datasf/app/src/app.js, the MCP App beside a tool call (datasf).
//
// ../build.mjs bundles each host with this module into viewer.html.
//
// The page marks its state on <body data-…> for the browser tests: loads,
// loaded, offset, total, sort, failed, chart-bars.

export const PAGE = 100;
const CHART_MAX_GROUPS = 500;
const CHART_BARS = 50;
const EXPORTS = ["csv", "ndjson", "json"];

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
//   newTab: open links in a new tab.
// It returns show(result), status(name, query) and fail(message), where a
// result is {name, query, total, columns: [{name, type}], source,
// exportURL?, note?}.
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
        td.textContent = text(row[c.name]);
        if (numeric(c)) td.className = "num";
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
    } catch (e) {
      fail("Could not load rows: " + e.message);
      body.dataset.failed = String(Number(body.dataset.failed || 0) + 1);
    }
  }

  $("first").onclick = () => { view.offset = 0; load(); };
  $("prev").onclick = () => { view.offset = Math.max(0, view.offset - PAGE); load(); };
  $("next").onclick = () => { view.offset += PAGE; load(); };
  $("last").onclick = () => { view.offset = Math.max(0, Math.floor((view.total - 1) / PAGE) * PAGE); load(); };

  // A grouped count or sum: two columns, one numeric and named like an aggregate.
  function chartSpec(columns) {
    const num = columns.filter((c) => /^(count|sum|n|total)(_|$)/i.test(c.name) || /^(count|sum)/i.test(c.name));
    if (columns.length !== 2 || num.length !== 1) return null;
    const label = columns.find((c) => c !== num[0]);
    return { value: num[0].name, label: label.name };
  }

  async function chart(v) {
    const spec = chartSpec(v.columns);
    if (!spec || v.total > CHART_MAX_GROUPS || v.total === 0) return;
    const page = await v.source.page({ offset: 0, limit: CHART_BARS, sort: { field: spec.value, order: "desc" } });
    if (v !== view) return;
    v.bars = (page.data || []).map((r) => ({ label: text(r[spec.label]), value: Number(r[spec.value]) || 0 }));
    v.barsOf = spec;
    drawChart(v);
  }

  // drawChart draws the bars at the chart's width (again when it changes),
  // so that the labels keep their size at any width.
  function drawChart(v) {
    const rows = v.bars, spec = v.barsOf;
    if (!rows || !rows.length) return;
    const box = $("chart");
    const W = Math.max(240, Math.floor(box.clientWidth || 600));
    const maxV = Math.max(...rows.map((r) => r.value)) || 1;
    const bar = 18, gap = 4, right = 62, H = rows.length * (bar + gap) + 8;
    const left = Math.min(170, Math.round(W * 0.34));
    const maxChars = Math.max(6, Math.floor((left - 10) / 6.5));
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `bar chart of ${spec.value} by ${spec.label}`);
    rows.forEach((r, i) => {
      const y = i * (bar + gap) + 4;
      const w = Math.max(1, (W - left - right) * r.value / maxV);
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", left - 6); t.setAttribute("y", y + bar - 5); t.setAttribute("text-anchor", "end");
      t.textContent = r.label.length > maxChars ? r.label.slice(0, maxChars - 1) + "…" : r.label;
      const title = document.createElementNS(ns, "title");
      title.textContent = `${r.label}: ${r.value}`;
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", left); rect.setAttribute("y", y); rect.setAttribute("height", bar); rect.setAttribute("width", w);
      rect.appendChild(title);
      const n = document.createElementNS(ns, "text");
      n.setAttribute("x", left + w + 4); n.setAttribute("y", y + bar - 5);
      n.textContent = count(r.value);
      svg.append(t, rect, n);
    });
    box.textContent = "";
    box.appendChild(svg);
    v.chartWidth = W;
    body.dataset.chartBars = String(rows.length);
  }

  new ResizeObserver(() => {
    if (view && view.bars && Math.floor($("chart").clientWidth) !== view.chartWidth) drawChart(view);
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
    const links = $("links");
    links.textContent = "";
    if (result.exportURL) {
      for (const f of EXPORTS) links.appendChild(exportLink(f, result.exportURL + "/export?format=" + f));
    }
    $("note").textContent = result.note || "";
    const v = { ...result, offset: 0, sort: null };
    view = v;
    status(v.name, v.query);
    document.title = v.name + " — result viewer";
    $("total").textContent = `${count(v.total)} ${v.total === 1 ? "row" : "rows"}`;
    body.dataset.total = String(v.total);
    renderHead();
    await load();
    try {
      await chart(v);
    } catch (e) {
      fail("Could not draw the chart: " + e.message);
    }
  }

  return { show, status, fail, hasResult: () => view !== null };
}
