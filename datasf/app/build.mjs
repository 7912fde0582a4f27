// Builds viewer.html, the result viewer MCP App that datasf embeds, from
// src/viewer.html and src/app.js: esbuild bundles app.js with the pinned
// @modelcontextprotocol/ext-apps (interop/package-lock.json) into one
// script, which is inlined, so the app loads nothing from the network.
//
// usage (from the repository root, after `npm ci` in interop/):
//
//	node datasf/app/build.mjs            # writes datasf/app/viewer.html
//	node datasf/app/build.mjs OUT.html   # writes OUT.html (the freshness check)
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const interop = join(here, "..", "..", "interop");
const esbuild = createRequire(join(interop, "package.json"))("esbuild");

const out = process.argv[2] || join(here, "viewer.html");
const result = await esbuild.build({
  entryPoints: [join(here, "src", "app.js")],
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
});
// Inline: nothing in the script may end the <script> element.
const js = result.outputFiles[0].text.replaceAll("</script", "<\\/script").replaceAll("<!--", "<\\!--");
const template = readFileSync(join(here, "src", "viewer.html"), "utf8");
const marker = "<script>/*APP*/</script>";
if (!template.includes(marker)) throw new Error("src/viewer.html lacks " + marker);
const html = template.replace(marker, () => "<script>\n" + js + "</script>");
writeFileSync(out, html);
console.error(`build.mjs: wrote ${out} (${html.length} bytes, script ${js.length} bytes)`);
