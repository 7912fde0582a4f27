// Builds the result viewer for its two hosts from one source: the page
// (src/viewer.html) and the viewer (src/viewer.js), bundled by esbuild with
// each host's entry into one self-contained HTML file that loads nothing
// from the network:
//
//   dualresp/viewer/view.html  REST host (src/rest.js): /resources/{id}/view,
//                              embedded by viewer.go;
//   datasf/app/viewer.html     MCP Apps host (datasf/app/src/app.js, with the
//                              pinned @modelcontextprotocol/ext-apps),
//                              embedded by datasf as the ui:// app.
//
// esbuild and ext-apps are pinned in interop/package-lock.json. The pages
// are minified (markup, styles and script); the built files are committed,
// and `go test ./interop -run TestViewerBuildUpToDate` fails when they
// differ from what this script builds.
//
// usage (from anywhere, after `npm ci` in interop/):
//
//	node dualresp/viewer/build.mjs        # writes both files in the repository
//	node dualresp/viewer/build.mjs DIR    # writes them under DIR, at the same paths
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const interop = join(root, "interop");
const esbuild = createRequire(join(interop, "package.json"))("esbuild");

// The hosts: entry script and built page, relative to the repository root.
export const targets = [
  { entry: "dualresp/viewer/src/rest.js", out: "dualresp/viewer/view.html" },
  { entry: "datasf/app/src/app.js", out: "datasf/app/viewer.html" },
];

const MARKER = "<script>/*VIEWER*/</script>";

// page returns the minified page around the marker: the styles through
// esbuild, the white space between tags and lines out.
async function page() {
  const src = readFileSync(join(here, "src", "viewer.html"), "utf8");
  if (!src.includes(MARKER)) throw new Error("src/viewer.html lacks " + MARKER);
  const m = src.match(/<style>([\s\S]*?)<\/style>/);
  if (!m) throw new Error("src/viewer.html has no <style>");
  const css = (await esbuild.transform(m[1], { loader: "css", minify: true, logLevel: "warning" })).code.trim();
  const html = src.replace(m[0], () => "<style>\0</style>").replace(/>\s+</g, "><").replace(/\s*\n\s*/g, " ").trim();
  return html.replace("\0", () => css);
}

async function script(entry) {
  const result = await esbuild.build({
    entryPoints: [join(root, entry)],
    nodePaths: [join(interop, "node_modules")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "eof",
    charset: "utf8",
    write: false,
    logLevel: "warning",
    // The map's boundaries (src/sf_analysis_neighborhoods.geojson) are bundled as data.
    loader: { ".geojson": "json" },
  });
  // Inline: nothing in the script may end the <script> element.
  return result.outputFiles[0].text.replaceAll("</script", "<\\/script").replaceAll("<!--", "<\\!--");
}

const outDir = process.argv[2] || root;
const template = await page();
for (const t of targets) {
  const js = await script(t.entry);
  const notice = `<!-- Built by dualresp/viewer/build.mjs from dualresp/viewer/src and ${t.entry}: do not edit. -->`;
  const html = template.replace(/^<!doctype html>/i, (d) => d + "\n" + notice + "\n").replace(MARKER, () => "<script>\n" + js + "</script>") + "\n";
  const out = join(outDir, t.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, html);
  console.error(`build.mjs: wrote ${out} (${html.length} bytes, script ${js.length} bytes)`);
}
