// The result viewer as an MCP App. The host renders it beside a
// query_datasf (or analyze_results) call and sends it the tool's result;
// the app then shows the COMPLETE result, not the model's sample: pages
// are read through the host with the app-only tool result_page (so it
// works over stdio and HTTP, behind proxies and with bearer tokens), or
// straight from the REST API when the host lets the app reach it
// (_meta.ui.csp.connectDomains) and the API answers.
//
// Built into ../viewer.html by ../build.mjs; see ../README.md.
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps";

const PAGE = 100;
const PAGE_TOOL = "result_page";
const CHART_MAX_GROUPS = 500;
const CHART_BARS = 50;

const $ = (id) => document.getElementById(id);
const body = document.body;

const app = new App({ name: "datasf-result-viewer", version: "1.0.0" }, {}, { autoResize: true });

// state of the result shown, and the arguments of the call it came from.
let view = null;
let lastInput = null;

function fail(msg) {
  $("error").textContent = msg;
}

function text(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function resultText(res) {
  const t = (res.content || []).find((c) => c.type === "text");
  if (!t) return "the tool failed";
  try {
    const e = JSON.parse(t.text);
    return e.error || e.message || t.text;
  } catch {
    return t.text;
  }
}

// ---- where pages come from -------------------------------------------------

// storedSource reads pages of a stored result: REST first when allowed and
// working, the host's result_page tool otherwise (and from then on).
function storedSource(ref, url) {
  let useREST = Boolean(url);
  async function viaREST(req) {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(req.sort ? { offset: req.offset, limit: req.limit, sort: req.sort } : { offset: req.offset, limit: req.limit }),
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) throw new Error("HTTP " + res.status);
    return res.json();
  }
  async function viaTool(req) {
    const args = { result: ref, offset: req.offset, limit: req.limit };
    if (req.sort) {
      args.sort_by = req.sort.field;
      args.order = req.sort.order;
    }
    const res = await app.callServerTool({ name: PAGE_TOOL, arguments: args });
    if (res.isError) throw new Error(resultText(res));
    if (!res.structuredContent) throw new Error(PAGE_TOOL + " returned no structured content");
    return res.structuredContent;
  }
  return {
    async page(req) {
      if (useREST) {
        try {
          const p = await viaREST(req);
          body.dataset.source = "rest";
          return p;
        } catch {
          useREST = false; // blocked by the host's CSP, no CORS, a token, …: ask the host.
        }
      }
      const p = await viaTool(req);
      body.dataset.source = "tool";
      body.dataset.toolPages = String(Number(body.dataset.toolPages || 0) + 1);
      return p;
    },
  };
}

// localSource pages and sorts rows the app already has (analyze_results).
function localSource(rows) {
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
      body.dataset.source = "local";
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

// ---- rendering ---------------------------------------------------------------

function renderHead() {
  const tr = document.querySelector("#rows thead tr");
  tr.textContent = "";
  for (const c of view.columns) {
    const th = document.createElement("th");
    th.textContent = c.name;
    th.dataset.field = c.name;
    if (c.type === "number" || c.type === "integer") th.className = "num";
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
      if (c.type === "number" || c.type === "integer") td.className = "num";
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
    $("range").textContent = `rows ${from.toLocaleString("en-US")}–${(v.offset + (page.returned_count || 0)).toLocaleString("en-US")} of ${v.total.toLocaleString("en-US")}`;
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

// The name of the result's resource_link, if it has one.
function linkName(result) {
  const l = (result.content || []).find((c) => c.type === "resource_link");
  return l && l.name;
}

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
    n.textContent = r.value.toLocaleString("en-US");
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

function link(label, href) {
  const a = document.createElement("a");
  a.textContent = label;
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener";
  a.addEventListener("click", (e) => {
    // In a sandboxed frame the host opens links.
    if (app.getHostCapabilities()?.openLinks) {
      e.preventDefault();
      app.openLink({ url: href }).catch((err) => fail("Could not open the link: " + err.message));
    }
  });
  return a;
}

// show starts viewing the result of a tool call.
async function show(result) {
  fail("");
  $("chart").textContent = "";
  delete body.dataset.chartBars;
  const sc = result.structuredContent;
  if (result.isError || !sc) {
    $("name").textContent = "No result";
    fail(resultText(result));
    return;
  }
  const links = $("links");
  links.textContent = "";
  $("note").textContent = "";
  let v;
  if (sc.resource && sc.resource.uri && sc.metadata && typeof sc.metadata.total_count === "number") {
    // query_datasf: a stored result; page the complete result.
    const md = sc.metadata;
    v = {
      // The name is said once, in the resource_link; the columns are names.
      name: sc.resource.name || linkName(result) || "Query result",
      query: md.query || "",
      total: md.total_count,
      columns: (md.columns && md.columns.length ? md.columns : Object.keys((sc.results || [])[0] || {})).map((c) => (typeof c === "string" ? { name: c } : c)),
      source: storedSource(sc.resource.uri, sc.resource.url),
    };
    if (sc.resource.url) {
      for (const f of ["csv", "ndjson", "json"]) links.appendChild(link("Download " + f.toUpperCase(), sc.resource.url + "/export?format=" + f));
    }
  } else if (Array.isArray(sc.rows) && Array.isArray(sc.columns)) {
    // analyze_results: the rows came with the result.
    v = {
      name: "Analysis",
      query: (lastInput && lastInput.sql) || "",
      total: sc.rows.length,
      columns: sc.columns.map((name) => ({ name })),
      source: localSource(sc.rows),
    };
    if (sc.truncated) $("note").textContent = "The analysis returned its first " + sc.rows.length + " rows; more were cut.";
  } else {
    $("name").textContent = "Nothing to show";
    fail("This tool result is not a query result.");
    return;
  }
  v.offset = 0;
  v.sort = null;
  view = v;
  $("name").textContent = v.name;
  document.title = v.name + " — result viewer";
  $("query").textContent = v.query;
  $("total").textContent = `${v.total.toLocaleString("en-US")} ${v.total === 1 ? "row" : "rows"}`;
  body.dataset.total = String(v.total);
  renderHead();
  await load();
  try {
    await chart(v);
  } catch (e) {
    fail("Could not draw the chart: " + e.message);
  }
}

$("first").onclick = () => { view.offset = 0; load(); };
$("prev").onclick = () => { view.offset = Math.max(0, view.offset - PAGE); load(); };
$("next").onclick = () => { view.offset += PAGE; load(); };
$("last").onclick = () => { view.offset = Math.max(0, Math.floor((view.total - 1) / PAGE) * PAGE); load(); };

// ---- the host ----------------------------------------------------------------

function applyContext(ctx) {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles && ctx.styles.variables) applyHostStyleVariables(ctx.styles.variables);
  if (ctx.styles && ctx.styles.css && ctx.styles.css.fonts) applyHostFonts(ctx.styles.css.fonts);
  if (ctx.theme) body.dataset.theme = ctx.theme;
}

app.ontoolinput = (params) => {
  lastInput = params.arguments || null;
  if (!view && lastInput) {
    $("name").textContent = "Running the query…";
    $("query").textContent = lastInput.soql || lastInput.sql || "";
  }
};
app.ontoolresult = (result) => { show(result); };
app.ontoolcancelled = () => { if (!view) $("name").textContent = "The call was cancelled."; };
app.onhostcontextchanged = (ctx) => applyContext(ctx);
app.onteardown = async () => ({});

app.connect().then(() => {
  applyContext(app.getHostContext());
  body.dataset.connected = "true";
}).catch((e) => fail("Could not connect to the host: " + e.message));
