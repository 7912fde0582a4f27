// The MCP Apps host of the result viewer (dualresp/viewer/src/viewer.js).
// The host renders it beside a query_datasf (or analyze_results) call and
// sends it the tool's result; the viewer then shows the COMPLETE result,
// not the model's sample: pages are read through the host with the
// app-only tool result_page (so it works over stdio and HTTP, behind
// proxies and with bearer tokens), or straight from the REST API when the
// host lets the app reach it (_meta.ui.csp.connectDomains) and the API
// answers. analyze_results' rows come with the result and are paged here.
//
// Built into ../viewer.html by dualresp/viewer/build.mjs; see ../README.md.
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps";
import { createViewer, restPage, rowsSource } from "../../../dualresp/viewer/src/viewer.js";

const PAGE_TOOL = "result_page";
const body = document.body;

const app = new App({ name: "datasf-result-viewer", version: "1.0.0" }, {}, { autoResize: true });
const viewer = createViewer({
  newTab: true,
  // In a sandboxed frame the host opens links.
  openLink(href) {
    if (!app.getHostCapabilities()?.openLinks) return false;
    app.openLink({ url: href }).catch((err) => viewer.fail("Could not open the link: " + err.message));
    return true;
  },
});

// the arguments of the call the result comes from.
let lastInput = null;

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

// The name of the result's resource_link, if it has one.
function linkName(result) {
  const l = (result.content || []).find((c) => c.type === "resource_link");
  return l && l.name;
}

// The query a query_datasf answer ran: the $query of its portal_url (the
// structured content states it there, once).
function portalQuery(portalURL) {
  try {
    return new URL(portalURL).searchParams.get("$query") || "";
  } catch {
    return "";
  }
}

// storedSource reads pages of a stored result: REST first when allowed and
// working, the host's result_page tool otherwise (and from then on).
function storedSource(ref, url) {
  let useREST = Boolean(url);
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
          const p = await restPage(url, req, { timeout: 5000 });
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

// show views the result of a tool call.
function show(result) {
  const sc = result.structuredContent;
  if (result.isError || !sc) {
    viewer.status("No result");
    viewer.fail(resultText(result));
    return;
  }
  if (sc.resource && sc.resource.uri && sc.metadata && typeof sc.metadata.total_count === "number") {
    // query_datasf: a stored result; page the complete result.
    const md = sc.metadata;
    viewer.show({
      // The name is said once, in the resource_link; the columns are names.
      name: sc.resource.name || linkName(result) || "Query result",
      query: md.query || portalQuery(md.portal_url),
      total: md.total_count,
      columns: (md.columns && md.columns.length ? md.columns : Object.keys((sc.results || [])[0] || {})).map((c) => (typeof c === "string" ? { name: c } : c)),
      source: storedSource(sc.resource.uri, sc.resource.url),
      exportURL: sc.resource.url,
    });
  } else if (Array.isArray(sc.rows) && Array.isArray(sc.columns)) {
    // analyze_results: the rows came with the result.
    const rows = rowsSource(sc.rows);
    viewer.show({
      name: "Analysis",
      query: (lastInput && lastInput.sql) || "",
      total: sc.rows.length,
      columns: sc.columns.map((name) => ({ name })),
      source: { page: (req) => { body.dataset.source = "local"; return rows.page(req); } },
      note: sc.truncated ? "The analysis returned its first " + sc.rows.length + " rows; more were cut." : "",
    });
  } else {
    viewer.status("Nothing to show");
    viewer.fail("This tool result is not a query result.");
  }
}

function applyContext(ctx) {
  if (!ctx) return;
  if (ctx.theme) applyDocumentTheme(ctx.theme);
  if (ctx.styles && ctx.styles.variables) applyHostStyleVariables(ctx.styles.variables);
  if (ctx.styles && ctx.styles.css && ctx.styles.css.fonts) applyHostFonts(ctx.styles.css.fonts);
  if (ctx.theme) body.dataset.theme = ctx.theme;
}

viewer.status("Waiting for a result…");
app.ontoolinput = (params) => {
  lastInput = params.arguments || null;
  if (!viewer.hasResult() && lastInput) viewer.status("Running the query…", lastInput.soql || lastInput.sql || "");
};
app.ontoolresult = (result) => { show(result); };
app.ontoolcancelled = () => { if (!viewer.hasResult()) viewer.status("The call was cancelled."); };
app.onhostcontextchanged = (ctx) => applyContext(ctx);
app.onteardown = async () => ({});

app.connect().then(() => {
  applyContext(app.getHostContext());
  body.dataset.connected = "true";
}).catch((e) => viewer.fail("Could not connect to the host: " + e.message));
