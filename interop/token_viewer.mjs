// Browser check of the result viewer against a server with bearer tokens.
//
// usage: node token_viewer.mjs RESULT_URL TOKEN
//
// Opens RESULT_URL without a token (the page must say how to give one),
// then RESULT_URL#token=TOKEN: the page must load the rows, take the token
// out of the address bar, never put it in a request URL, and download the
// CSV export with it. Prints one JSON line of figures; exits non-zero on
// any failed check.
import { chromium } from "playwright-core";
import { readFile } from "node:fs/promises";

const [resultURL, token] = process.argv.slice(2);
if (!resultURL || !token) {
  console.error("usage: node token_viewer.mjs RESULT_URL TOKEN");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

function check(cond, msg) {
  if (!cond) throw new Error("check failed: " + msg);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const timer = setTimeout(() => { console.error("token_viewer: timed out"); process.exit(1); }, 90_000);
try {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("request", (r) => requests.push({ url: r.url(), auth: r.headers()["authorization"] || "" }));

  // Without a token: the page explains how to open it.
  await page.goto(resultURL);
  await page.waitForFunction(() => document.getElementById("error").textContent !== "", null, { timeout: 20000 });
  const noToken = await page.textContent("#error");
  check(noToken.includes("#token="), `without a token the page says how to give one: ${noToken}`);

  // With the token in the fragment.
  await page.goto("about:blank");
  await page.goto(resultURL + "#token=" + encodeURIComponent(token));
  await page.waitForFunction(() => document.body.dataset.loaded === "true", null, { timeout: 20000 });
  const shown = await page.$$eval("#rows tbody tr", (trs) => trs.length);
  const total = Number((await page.textContent("#total")).split(" ")[0].replaceAll(",", ""));
  const address = page.url();
  check(!address.includes(token), `the token is out of the address bar: ${address}`);
  check(shown > 0, "rows shown");

  // A reload keeps working (the token is kept for the tab).
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.loaded === "true", null, { timeout: 20000 });

  // Download the CSV with the token.
  const [download] = await Promise.all([page.waitForEvent("download", { timeout: 20000 }), page.click("#csv")]);
  const path = await download.path();
  const csv = await readFile(path, "utf8");
  const csvRows = csv.trimEnd().split("\n").length - 1;

  const leaked = requests.filter((r) => r.url.includes(token)).map((r) => r.url);
  check(leaked.length === 0, `no request URL carries the token: ${leaked.join(", ")}`);
  const authed = requests.filter((r) => r.auth === "Bearer " + token).length;
  check(authed >= 3, `requests sent the token as a bearer header: ${authed}`);
  check(errors.length === 0, "no page errors: " + errors.join("; "));
  console.log(JSON.stringify({ total, shown, csv_rows: csvRows, authorized_requests: authed, requests: requests.length, no_token_message: noToken }));
  clearTimeout(timer);
  await browser.close();
} catch (err) {
  console.error("token_viewer: " + (err && err.stack ? err.stack : err));
  await browser.close();
  process.exit(1);
}
