// Browser check of the result viewer page in a real headless Chromium.
//
// usage: node viewer.mjs RESULT_URL SCREENSHOT.png
//
// Opens RESULT_URL/view, waits for the first page, goes to the last page,
// sorts by the first column (descending after two clicks), and compares the
// rows shown with what the REST API returns for the same page and order;
// the download links must name the result's exports (the CSV one is read).
// Prints one JSON line of figures; exits non-zero on any mismatch.
import { chromium } from "playwright-core";

const [resultURL, shot] = process.argv.slice(2);
if (!resultURL || !shot) {
  console.error("usage: node viewer.mjs RESULT_URL SCREENSHOT.png");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

function check(cond, msg) {
  if (!cond) throw new Error("check failed: " + msg);
}

async function api(body) {
  const r = await fetch(resultURL, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  check(r.ok, `REST POST ${JSON.stringify(body)}: ${r.status}`);
  return r.json();
}

function cellText(v) {
  if (v === null || v === undefined) return "(null)";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

// digits drops the thousands separators of the numbers the page shows.
function digits(s) {
  return s.replace(/(\d),(?=\d{3})/g, "$1");
}

async function shownRows(page) {
  return page.$$eval("#rows tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
}

// loadsNow returns how many page loads the viewer has completed.
async function loadsNow(page) {
  return page.evaluate(() => Number(document.body.dataset.loads || 0));
}

// waitLoaded waits for a load after the count `after` that shows offset.
async function waitLoaded(page, offset, after = 0) {
  await page.waitForFunction(([o, a]) => Number(document.body.dataset.loads || 0) > a && document.body.dataset.offset === String(o), [offset, after], { timeout: 20000 });
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const timer = setTimeout(() => { console.error("viewer: timed out"); process.exit(1); }, 90_000);
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(resultURL + "/view");
  await waitLoaded(page, 0);

  // The chart is drawn after the first page for grouped counts and sums.
  await page.waitForTimeout(300);
  const chartBars = await page.$$eval("#chart svg rect", (rs) => rs.length);
  const meta = await (await fetch(resultURL, { headers: { Accept: "application/json" } })).json();
  const total = meta.total_count;
  const columns = meta.columns.map((c) => c.name);
  const headers = await page.$$eval("#rows thead th", (ths) => ths.map((th) => th.dataset.field));
  check(JSON.stringify(headers) === JSON.stringify(columns), `headers ${headers} = columns ${columns}`);
  check(digits(await page.textContent("#total")).includes(String(total)), "total shown");

  // Last page.
  const lastOffset = Math.floor((total - 1) / 100) * 100;
  if (total > 100) {
    const before = await loadsNow(page);
    await page.click("#last");
    await waitLoaded(page, lastOffset, before);
  }
  const want = await api({ offset: lastOffset, limit: 100 });
  const got = await shownRows(page);
  check(got.length === want.data.length, `last page shows ${got.length} rows, REST has ${want.data.length}`);
  got.forEach((row, i) => columns.forEach((c, j) => check(row[j] === cellText(want.data[i][c]), `last page row ${i} ${c}: ${row[j]} vs ${cellText(want.data[i][c])}`)));
  check(digits(await page.textContent("#range")).includes(`of ${total}`), "range text");

  // Sort by the first column: one click ascending, a second descending.
  const col = columns[0];
  let before = await loadsNow(page);
  await page.click(`#rows thead th[data-field="${col}"]`);
  await waitLoaded(page, 0, before);
  before = await loadsNow(page);
  await page.click(`#rows thead th[data-field="${col}"]`);
  await page.waitForFunction((c) => document.querySelector(`#rows thead th[data-field="${c}"]`).dataset.order === "desc", col);
  await waitLoaded(page, 0, before);
  const sorted = await api({ offset: 0, limit: 100, sort: { field: col, order: "desc" } });
  const gotSorted = await shownRows(page);
  check(gotSorted.length === sorted.data.length, "sorted page length");
  gotSorted.forEach((row, i) => check(row[0] === cellText(sorted.data[i][col]), `sorted row ${i}: ${row[0]} vs ${cellText(sorted.data[i][col])}`));

  // The download links: each export of the whole result.
  const links = await page.$$eval("#links a", (as) => as.map((a) => [a.id, a.href]));
  check(JSON.stringify(links.map((l) => l[0])) === JSON.stringify(["csv", "ndjson", "json", "xlsx"]), `download links ${links}`);
  for (const [format, href] of links) check(href === `${resultURL}/export?format=${format}`, `${format} link ${href}`);
  const csv = await (await fetch(links[0][1])).text();
  check(csv.trimEnd().split("\n").length === total + 1, `the CSV link's export has ${csv.trimEnd().split("\n").length - 1} rows; want ${total}`);

  await page.screenshot({ path: shot, fullPage: false });
  check(errors.length === 0, "no page errors: " + errors.join("; "));
  console.log(JSON.stringify({ total, chart_bars: chartBars, last_offset: lastOffset, last_page_rows: got.length, sorted_by: col, screenshot: shot }));
  clearTimeout(timer);
  await browser.close();
} catch (err) {
  console.error("viewer: " + (err && err.stack ? err.stack : err));
  await browser.close();
  process.exit(1);
}
