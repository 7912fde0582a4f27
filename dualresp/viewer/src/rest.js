// The REST host of the result viewer: the page a browser gets at
// /resources/{id}/view (see ../viewer.go). It reads the result's metadata
// and pages from the REST API the page was served by.
//
// A server with bearer tokens: the page is opened as …/resources/ID#token=TOKEN.
// The fragment never leaves the browser (not sent to the server, not in
// Referer); the token is kept for this tab only and taken out of the
// address bar, then sent as "Authorization: Bearer" with every request.
import { createViewer, restJSON, restPage } from "./viewer.js";

const base = location.pathname.replace(/\/view\/?$/, "").replace(/\/$/, "");
const TOKEN_KEY = "datasf-mcp.token";

const token = (function () {
  const params = new URLSearchParams(location.hash.slice(1));
  const t = params.get("token");
  if (t) {
    try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* storage off: this load only */ }
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
    return t;
  }
  try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
})();

const auth = token ? { Authorization: "Bearer " + token } : {};

// explain says what a 401 means for this page.
function explain(err) {
  if (err.status !== 401) return err;
  return new Error(token
    ? "the server did not accept the token in the link (HTTP 401)"
    : "this server requires a token: open this page as " + location.origin + base + "#token=YOUR_TOKEN");
}

// download fetches an export with the token (a link cannot send the
// header) and saves it from memory.
async function download(format, link) {
  viewer.fail("");
  try {
    const res = await fetch(base + "/export?format=" + format, { headers: { Accept: "*/*", ...auth } });
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      throw new Error(data.message || data.error || "HTTP " + res.status);
    }
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement("a");
    a.href = url;
    a.download = base.split("/").pop() + "." + format;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    link.dataset.downloaded = "true";
  } catch (e) {
    viewer.fail("Could not download: " + e.message);
  }
}

const viewer = createViewer({
  download: token ? download : null,
  pin: () => restJSON(base, { method: "PUT", headers: auth }).catch((e) => { throw explain(e); }),
});

// failure says in the heading what went wrong with the result itself.
function failure(err) {
  if (err.status === 404) return "Result not found";
  if (err.status === 401 || err.status === 403) return "Not allowed to read this result";
  return "Could not load this result";
}

(async function init() {
  try {
    const meta = await restJSON(base, { headers: auth }).catch((e) => { throw explain(e); });
    await viewer.show({
      name: meta.name || "Query result",
      query: (meta.metadata && meta.metadata.query) || (meta.query && meta.query.text) || meta.description || "",
      total: meta.total_count || 0,
      columns: meta.columns || [],
      source: { page: (req) => restPage(base, req, { headers: auth }).catch((e) => { throw explain(e); }) },
      exportURL: base,
      pinned: Boolean(meta.pinned),
    });
  } catch (e) {
    // The heading says what went wrong, not "Loading…".
    viewer.status(failure(e));
    document.title = failure(e) + " — result viewer";
    viewer.fail("Could not load this result: " + e.message);
    document.body.dataset.failed = String(Number(document.body.dataset.failed || 0) + 1);
  }
})();
