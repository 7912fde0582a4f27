// Browser check of the result viewer's pictures in a real headless
// Chromium: opens each result's /view page and reads back what was drawn.
//
// usage: node charts.mjs SHOT_DIR NAME=RESULT_URL...
//
// For each result it waits for the picture (body[data-chart]) or for the
// page to fail, takes a screenshot SHOT_DIR/NAME.png, and reports the
// drawn SVG: its kind and aria-label, the line's points (label and x in
// drawing order), the bars' labels, the map's points and shaded areas
// (name and value). A NAME starting with "pin" also clicks the pin button.
// Prints one JSON object {NAME: figures}; exits non-zero on a page error.
import { chromium } from "playwright-core";

const [dir, ...jobs] = process.argv.slice(2);
if (!dir || !jobs.length) {
  console.error("usage: node charts.mjs SHOT_DIR NAME=RESULT_URL...");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const timer = setTimeout(() => { console.error("charts: timed out"); process.exit(1); }, 150_000);
const out = {};
try {
  for (const job of jobs) {
    const eq = job.indexOf("=");
    const name = job.slice(0, eq), url = job.slice(eq + 1);
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(url + "/view");
    await page.waitForFunction(() => document.body.dataset.loaded || document.body.dataset.failed, null, { timeout: 20000 })
      .catch(() => {}); // reported: the heading and error show what the page came to
    if (!name.startsWith("error")) {
      // The picture follows the first page; a page without one is reported as such.
      await page.waitForFunction(() => document.body.dataset.chart, null, { timeout: 5000 }).catch(() => {});
    }
    if (name.startsWith("pin") && await page.$("#pin:not([hidden])")) {
      await page.click("#pin");
      await page.waitForFunction(() => document.body.dataset.pinned === "true" || document.querySelector("#error").textContent, null, { timeout: 20000 });
    }
    // A click on a map's first mark shows its row.
    let clicked = "";
    if (await page.$("#chart .map [data-row]")) {
      await page.click("#chart .map circle.point, #chart .map path.valued", { force: true });
      clicked = await page.textContent("#chart .chart-row");
    }
    const fig = await page.evaluate(() => {
      const svg = document.querySelector("#chart svg");
      const attr = (sel, a) => [...document.querySelectorAll(sel)].map((e) => e.getAttribute(a));
      return {
        kind: document.body.dataset.chart || "",
        heading: document.querySelector("#name").textContent,
        error: document.querySelector("#error").textContent,
        pinned: document.body.dataset.pinned === "true",
        pin_shown: Boolean(document.querySelector("#pin")) && !document.querySelector("#pin").hidden,
        links: attr("#links a", "id"),
        role: svg ? svg.getAttribute("role") : "",
        label: svg ? svg.getAttribute("aria-label") : "",
        note: (document.querySelector("#chart .chart-note") || {}).textContent || "",
        line_labels: attr("#chart svg circle.point", "data-label").filter(Boolean),
        line_x: attr("#chart .line-chart circle.point", "cx").map(Number),
        line_values: attr("#chart .line-chart circle.point", "data-value").map(Number),
        polylines: document.querySelectorAll("#chart polyline.line").length,
        gaps: document.querySelectorAll("#chart rect.gap").length,
        bar_labels: attr("#chart .bar-chart rect", "data-label"),
        map_points: document.querySelectorAll("#chart .points-map circle.point").length,
        map_swapped: document.querySelectorAll("#chart .points-map circle.point.swapped").length,
        areas: [...document.querySelectorAll("#chart .areas-map path.area.valued")].map((p) => [p.dataset.name, Number(p.dataset.value)]),
        null_cells: document.querySelectorAll("#rows td.null").length,
      };
    });
    await page.screenshot({ path: `${dir}/${name}.png`, fullPage: false });
    if (errors.length) throw new Error(`${name}: page errors: ${errors.join("; ")}`);
    out[name] = { ...fig, clicked };
    await page.close();
  }
  console.log(JSON.stringify(out));
  clearTimeout(timer);
  await browser.close();
} catch (err) {
  console.error("charts: " + (err && err.stack ? err.stack : err));
  await browser.close();
  process.exit(1);
}
