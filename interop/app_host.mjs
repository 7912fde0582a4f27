// Browser test of the result viewer MCP App, in a real headless Chromium,
// with our own small host (app_host_page.js): the official TypeScript SDK
// Client (in the page) drives the real datasf-mcp binary over stdio, the
// ext-apps AppBridge renders the binary's ui:// resource in a sandboxed
// iframe and delivers query_datasf results to it.
//
// usage: node app_host.mjs SCREENSHOT_DIR BINARY [server args...]
//
// Checks: the app shows the exact total; it pages through every row of a
// result larger than one page through the app-only tool result_page (the
// iframe's CSP forbids network access, so the host is the only way), and
// the rows are the REST API's, in order; sorting by a column shows the
// REST API's sorted page; a grouped count gets one bar per group; the
// model's query_datasf payload is the same for this host and for a client
// without the extension; with network access allowed (and CORS on the REST
// API) the app reads pages from the REST URL instead. Saves screenshots
// and prints one JSON line of figures; exits non-zero on any failure.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serverEnv } from "./server_env.mjs";

const esbuild = createRequire(import.meta.url)("esbuild");
const [shots, bin, ...serverArgs] = process.argv.slice(2);
if (!shots || !bin) {
  console.error("usage: node app_host.mjs SCREENSHOT_DIR BINARY [server args...]");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

const debug = process.env.APP_HOST_DEBUG ? (...a) => console.error("app_host:", ...a) : () => {};

function check(cond, msg) {
  if (!cond) throw new Error("check failed: " + msg);
}

const DATASET = "wg3w-h783";
const TABLE_SOQL = "SELECT incident_id, incident_category, police_district, resolution WHERE police_district = 'Mission' LIMIT 450";
const GROUP_SOQL = "SELECT resolution, count(*) AS count GROUP BY resolution";
const MONTH_SOQL = "SELECT date_trunc_ym(incident_date) AS month, count(*) AS n GROUP BY month ORDER BY n DESC";
const POINT_SOQL = "SELECT incident_id, incident_category, point WHERE point IS NOT NULL LIMIT 300";
const AREA_SOQL = "SELECT analysis_neighborhood, count(*) AS n GROUP BY analysis_neighborhood";
const DISTRICT_SOQL = "SELECT supervisor_district, count(*) AS n GROUP BY supervisor_district";
const POLICE_SOQL = "SELECT police_district, count(*) AS n GROUP BY police_district";
const PAGE = 100;

const bundle = await esbuild.build({
  entryPoints: [new URL("./app_host_page.js", import.meta.url).pathname],
  bundle: true, format: "iife", platform: "browser", target: "es2022", write: false, logLevel: "warning",
});
const hostHTML = `<!doctype html><html><head><meta charset="utf-8"><title>datasf app test host</title>
<style>body{margin:12px;font-family:system-ui,sans-serif}</style></head>
<body><div id="wrap"></div><script>${bundle.outputFiles[0].text.replaceAll("</script", "<\\/script")}</script></body></html>`;

function cellText(v) {
  if (v === null || v === undefined) return "(null)";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

async function rest(url, body) {
  const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  check(r.ok, `REST POST ${JSON.stringify(body)}: ${r.status}`);
  return r.json();
}

// startServer spawns the binary and relays the page's MCP messages to it.
async function startServer(page, args) {
  const transport = new StdioClientTransport({ command: bin, args, env: serverEnv(), stderr: "inherit" });
  let chain = Promise.resolve();
  transport.onmessage = (msg) => {
    debug("<-", JSON.stringify(msg).slice(0, 200));
    chain = chain.then(() => page.evaluate((m) => window.__relayDeliver(m), msg)).catch((e) => console.error("relay:", e));
  };
  transport.onerror = (e) => console.error("transport:", e);
  await transport.start();
  await page.exposeFunction("relaySend", (msg) => { debug("->", JSON.stringify(msg).slice(0, 200)); return transport.send(msg); });
  return transport;
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const timer = setTimeout(() => { console.error("app_host: timed out"); process.exit(1); }, 150_000);
const transports = [];
try {
  const page = await browser.newPage({ viewport: { width: 960, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => { debug("pageerror", e.stack); errors.push(String(e)); });
  // The app tries the REST URL once a result; the iframe's CSP refuses it
  // (connect-src 'none'), which Chromium reports as console errors.
  let cspRefusals = 0;
  page.on("console", (m) => {
    debug("console", m.type(), m.text());
    if (m.type() !== "error") return;
    if (/Content Security Policy/.test(m.text())) cspRefusals++;
    else errors.push("console: " + m.text());
  });
  await page.setContent(hostHTML);
  transports.push(await startServer(page, serverArgs));
  const started = await page.evaluate(() => window.host.start());
  check(started.server_extensions["io.modelcontextprotocol/ui"], "the server advertises the UI extension to this host: " + JSON.stringify(started.server_extensions));
  const pageTool = started.tools.find((t) => t.name === "result_page");
  check(pageTool && pageTool.app_only, "result_page is listed to this host as app-only");
  for (const name of ["query_datasf", "analyze_results"]) {
    check(started.tools.find((t) => t.name === name)?.ui?.startsWith("ui://"), `${name} declares a ui:// app`);
  }

  // shot saves a screenshot of the whole host page; the viewport first
  // grows to the page's height, so the iframe is painted in full.
  const shot = async (name) => {
    const vp = page.viewportSize();
    const h = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: vp.width, height: Math.max(h, 200) });
    await page.waitForTimeout(150);
    await page.screenshot({ path: join(shots, name) });
    await page.setViewportSize(vp);
  };
  const frame = async () => {
    const el = await page.waitForSelector("#app");
    return el.contentFrame();
  };
  const data = async (f) => f.evaluate(() => ({ ...document.body.dataset }));
  const waitLoads = async (f, after, offset) => f.waitForFunction(([a, o]) => Number(document.body.dataset.loads || 0) > a && document.body.dataset.offset === String(o), [after, offset], { timeout: 20000 });
  const shownRows = async (f) => f.$$eval("#rows tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));

  // 1. An ungrouped result larger than one page, light theme, wide.
  const shown = await page.evaluate(([ds, soql]) => window.host.show("query_datasf", { dataset_id: ds, soql }, { theme: "light", width: 900 }),
    [DATASET, TABLE_SOQL]);
  check(!shown.is_error, "query_datasf succeeded");
  const sc = shown.structured;
  const total = sc.metadata.total_count;
  check(total > PAGE, `the result (${total} rows) is larger than a page`);
  check(sc.results.length < total, "the model got a sample only");
  let f = await frame();
  await waitLoads(f, 0, 0);
  const totalText = await f.textContent("#total");
  check(totalText.replace(/,/g, "").includes(String(total)), `the app shows the exact total ${total}: ${totalText}`);
  check((await data(f)).source === "tool", "pages come through the host (result_page), not the network");
  const columns = sc.metadata.columns.map((c) => (typeof c === "string" ? c : c.name));
  const headers = await f.$$eval("#rows thead th", (ths) => ths.map((th) => th.dataset.field));
  check(JSON.stringify(headers) === JSON.stringify(columns), `headers ${headers} = columns ${columns}`);

  // Every row, page by page with Next, equals the REST API's rows in order.
  const all = [];
  let pages = 0;
  for (;;) {
    const rows = await shownRows(f);
    all.push(...rows);
    pages++;
    const d = await data(f);
    if (await f.isDisabled("#next")) break;
    await f.click("#next");
    await waitLoads(f, Number(d.loads), Number(d.offset) + PAGE);
  }
  check(all.length === total, `paged ${all.length} rows in ${pages} pages; total ${total}`);
  const want = [];
  for (let off = 0; off < total; off += 1000) want.push(...(await rest(sc.resource.url, { offset: off, limit: 1000 })).data);
  all.forEach((row, i) => columns.forEach((c, j) => check(row[j] === cellText(want[i][c]), `row ${i} ${c}: ${row[j]} vs REST ${cellText(want[i][c])}`)));
  const rangeText = await f.textContent("#range");
  await shot("app-last-page.png");

  // Sort by the first column: ascending, then descending.
  const col = columns[0];
  let d = await data(f);
  await f.click(`#rows thead th[data-field="${col}"]`);
  await waitLoads(f, Number(d.loads), 0);
  d = await data(f);
  await f.click(`#rows thead th[data-field="${col}"]`);
  await waitLoads(f, Number(d.loads), 0);
  check((await data(f)).sort === `${col} desc`, "sorted descending");
  const sorted = await rest(sc.resource.url, { offset: 0, limit: PAGE, sort: { field: col, order: "desc" } });
  const gotSorted = await shownRows(f);
  check(gotSorted.length === sorted.data.length, "sorted page length");
  gotSorted.forEach((row, i) => check(row[0] === cellText(sorted.data[i][col]), `sorted row ${i}: ${row[0]} vs REST ${cellText(sorted.data[i][col])}`));
  check(gotSorted[0][0] >= gotSorted[gotSorted.length - 1][0], "descending order");
  await shot("app-table.png");
  const tableCalls = (await page.evaluate(() => window.host.log.calls.result_page)) || 0;

  // The model's payload is the same for a client without the extension.
  const plainTransport = new StdioClientTransport({ command: bin, args: serverArgs, env: serverEnv(), stderr: "inherit" });
  const plain = new Client({ name: "datasf-plain-client", version: "1.0.0" });
  await plain.connect(plainTransport);
  const plainTools = (await plain.listTools()).tools.map((t) => t.name);
  check(!plainTools.includes("result_page"), "a client without the extension does not list result_page");
  check(!plain.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/ui"], "nor is told of the extension");
  const plainRes = await plain.callTool({ name: "query_datasf", arguments: { dataset_id: DATASET, soql: TABLE_SOQL } });
  const plainBytes = JSON.stringify(plainRes).length;
  check(Math.abs(plainBytes - shown.result_bytes) <= plainBytes * 0.02, `query_datasf payload ${shown.result_bytes} bytes for the app host, ${plainBytes} without the extension`);
  await plain.close();

  // 2. A grouped count: one bar a group.
  const gshown = await page.evaluate(([ds, soql]) => window.host.show("query_datasf", { dataset_id: ds, soql }, { theme: "light", width: 900 }),
    [DATASET, GROUP_SOQL]);
  const groups = gshown.structured.metadata.total_count;
  f = await frame();
  await f.waitForFunction(() => document.body.dataset.chartBars !== undefined, null, { timeout: 20000 });
  const bars = await f.$$eval("#chart svg rect", (rs) => rs.length);
  check(bars === groups, `chart has ${bars} bars; ${groups} groups`);
  const gtotal = await f.textContent("#total");
  await shot("app-chart.png");

  // 2b. The same viewer's pictures in the app: a monthly count stored
  // largest first is a line in time order; rows with points a map; a
  // count by neighborhood a choropleth.
  const picture = async (soql, name) => {
    const res = await page.evaluate(([ds, q]) => window.host.show("query_datasf", { dataset_id: ds, soql: q }, { theme: "light", width: 900 }), [DATASET, soql]);
    const fr = await frame();
    await fr.waitForFunction((total) => document.body.dataset.total === String(total) && document.body.dataset.chart, res.structured.metadata.total_count, { timeout: 20000 });
    const fig = await fr.evaluate(() => ({
      kind: document.body.dataset.chart,
      figures: JSON.parse(document.body.dataset.chartFigures || "{}"),
      label: document.querySelector("#chart svg").getAttribute("aria-label"),
      line_labels: [...document.querySelectorAll("#chart .line-chart circle.point")].map((c) => c.dataset.label),
      map_points: document.querySelectorAll("#chart .points-map circle.point").length,
      areas: document.querySelectorAll("#chart .areas-map path.valued").length,
    }));
    await shot(name);
    return { total: res.structured.metadata.total_count, ...fig };
  };
  const line = await picture(MONTH_SOQL, "app-line.png");
  check(line.kind === "line" && line.line_labels.length === line.total, `monthly count: ${line.kind} of ${line.line_labels.length} points; ${line.total} months`);
  check(JSON.stringify(line.line_labels) === JSON.stringify([...line.line_labels].sort()), `the line's months in time order: ${line.line_labels.slice(0, 4)}`);
  const pointsMap = await picture(POINT_SOQL, "app-map-points.png");
  const pf = pointsMap.figures;
  check(pointsMap.kind === "points" && pointsMap.map_points === pf.in + pf.swapped && pf.in + pf.swapped + pf.outside + pf.missing === pointsMap.total,
    `points map: ${pointsMap.map_points} drawn, figures ${JSON.stringify(pf)}; ${pointsMap.total} rows`);
  const areasMap = await picture(AREA_SOQL, "app-map-areas.png");
  check(areasMap.kind === "areas" && areasMap.areas === areasMap.figures.areas && areasMap.areas + areasMap.figures.unmatched === areasMap.total,
    `areas map: ${areasMap.areas} areas, figures ${JSON.stringify(areasMap.figures)}; ${areasMap.total} groups`);
  const districtsMap = await picture(DISTRICT_SOQL, "app-map-districts.png");
  const df = districtsMap.figures;
  check(districtsMap.kind === "areas" && districtsMap.areas === df.areas && districtsMap.areas + df.unmatched === districtsMap.total && districtsMap.areas > 0 && districtsMap.areas <= 11 &&
    districtsMap.label.startsWith(`map of n by supervisor_district, ${districtsMap.areas} area`),
    `supervisor districts map: ${districtsMap.areas} areas (${districtsMap.label}), figures ${JSON.stringify(df)}; ${districtsMap.total} groups`);
  const policeMap = await picture(POLICE_SOQL, "app-map-police.png");
  const pdf = policeMap.figures;
  check(policeMap.kind === "areas" && policeMap.areas === pdf.areas && policeMap.areas + pdf.unmatched === policeMap.total && policeMap.areas > 0 && policeMap.areas <= 10 &&
    policeMap.label.startsWith(`map of n by police_district, ${policeMap.areas} area`),
    `police districts map: ${policeMap.areas} areas (${policeMap.label}), figures ${JSON.stringify(pdf)}; ${policeMap.total} groups`);

  // 3. Dark theme from the host, at a phone's width.
  await page.setViewportSize({ width: 420, height: 900 });
  await page.evaluate(() => window.host.setTheme("dark", 380));
  f = await frame(); // the frame of the last result shown
  await f.waitForFunction(() => document.documentElement.dataset.theme === "dark");
  const bg = await f.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check(bg === "rgb(22, 24, 28)", `dark background from the host's variables: ${bg}`);
  const overflow = await f.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 0, `no horizontal page overflow at 380px (${overflow}px)`);
  await shot("app-dark-narrow.png");

  const refused = await page.evaluate(() => window.host.log.refused);
  check(refused.length === 0, "the app called only app-visible tools: " + refused);
  check(errors.length === 0, "no page errors: " + errors.join("; "));
  const calls = await page.evaluate(() => window.host.log.calls);

  // 4. Network allowed (the resource's connectDomains) and CORS on: REST.
  let restSource = null;
  if (process.env.APP_HOST_REST_ARGS) {
    const page2 = await browser.newPage({ viewport: { width: 960, height: 900 } });
    await page2.setContent(hostHTML);
    transports.push(await startServer(page2, [...serverArgs, ...process.env.APP_HOST_REST_ARGS.split(" ")]));
    await page2.evaluate(() => window.host.start());
    await page2.evaluate(([ds, soql]) => window.host.show("query_datasf", { dataset_id: ds, soql }, { theme: "light", width: 900, allowNetwork: true }),
      [DATASET, TABLE_SOQL]);
    const f2 = await (await page2.waitForSelector("#app")).contentFrame();
    await waitLoads(f2, 0, 0);
    restSource = (await data(f2)).source;
    check(restSource === "rest", `with network access the app reads the REST URL; source ${restSource}`);
    check(!(await page2.evaluate(() => window.host.log.calls.result_page)), "and calls no tool for pages");
    await page2.close();
  }

  console.log(JSON.stringify({
    total, total_text: totalText.trim(), sample: sc.results.length, rows_paged: all.length, pages, range_after_paging: rangeText.trim(),
    sorted_by: `${col} desc`, sorted_first: gotSorted[0][0], result_page_calls: calls.result_page, result_page_calls_table: tableCalls,
    groups, chart_bars: bars, grouped_total_text: gtotal.trim(), dark_background: bg,
    line_points: line.line_labels.length, line_label: line.label, map_points: pointsMap.map_points, map_label: pointsMap.label,
    map_areas: areasMap.areas, areas_label: areasMap.label, police_areas: policeMap.areas, police_label: policeMap.label,
    csp_refusals: cspRefusals, payload_bytes_app_host: shown.result_bytes, payload_bytes_plain: plainBytes, rest_source: restSource,
    csp: shown.csp, shots,
  }));
  clearTimeout(timer);
} catch (err) {
  console.error("app_host: " + (err && err.stack ? err.stack : err));
  process.exitCode = 1;
} finally {
  for (const t of transports) await t.close().catch(() => {});
  await browser.close();
  clearTimeout(timer);
}
