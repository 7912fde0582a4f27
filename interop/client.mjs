// Interoperability check: drives the datasf-mcp binary over stdio with the
// official TypeScript MCP SDK client, the way third-party hosts do.
//
// usage: node client.mjs /path/to/datasf-mcp [extra server args...]
//
// It lists the tools, calls each one (the SDK validates structuredContent
// against each tool's outputSchema and throws when it does not match), reads
// the query result as an MCP resource, then downloads the full result from
// resource.url page by page and checks it has exactly total_count rows.
// It prints one JSON line of figures and exits non-zero on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serverEnv } from "./server_env.mjs";

const [bin, ...serverArgs] = process.argv.slice(2);
if (!bin) {
  console.error("usage: node client.mjs BINARY [server args...]");
  process.exit(2);
}

function check(cond, msg) {
  if (!cond) throw new Error("check failed: " + msg);
}

const transport = new StdioClientTransport({
  command: bin,
  args: serverArgs,
  env: serverEnv(),
  stderr: "inherit",
});
const client = new Client({ name: "datasf-interop", version: "1.0.0" });
const deadline = setTimeout(() => {
  console.error("interop: timed out after 120s");
  process.exit(1);
}, 120_000);

try {
  await client.connect(transport);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const want of ["get_schema", "list_datasf", "query_datasf", "search_datasf"]) {
    check(names.includes(want), `tool ${want} listed (got ${names.join(",")})`);
  }
  for (const t of tools) {
    check(t.outputSchema && t.outputSchema.type === "object", `${t.name} has an object outputSchema`);
    check(t.annotations && t.annotations.readOnlyHint === true, `${t.name} readOnlyHint`);
  }

  const search = await client.callTool({ name: "search_datasf", arguments: { query: "police incidents", limit: 3 } });
  check(!search.isError, "search_datasf succeeded: " + JSON.stringify(search.content));
  const found = search.structuredContent.results;
  check(Array.isArray(found) && found.length > 0, "search found datasets");
  const datasetID = found[0].id;

  const list = await client.callTool({ name: "list_datasf", arguments: { limit: 5 } });
  check(!list.isError, "list_datasf succeeded");

  const schema = await client.callTool({ name: "get_schema", arguments: { dataset_id: datasetID } });
  check(!schema.isError, "get_schema succeeded: " + JSON.stringify(schema.content));
  const columns = schema.structuredContent.columns;
  check(columns.length > 0, "schema has columns");
  const field = columns[0].fieldName;

  const soql = `SELECT ${field} LIMIT 2500`;
  const query = await client.callTool({ name: "query_datasf", arguments: { dataset_id: datasetID, soql } });
  check(!query.isError, "query_datasf succeeded: " + JSON.stringify(query.content));
  const sc = query.structuredContent;
  const total = sc.metadata.total_count;
  check(total > 0, "total_count > 0");
  check(sc.results.length <= total, "sample not larger than total");
  check(query.content.some((c) => c.type === "resource_link"), "content has a resource_link");

  const bad = await client.callTool({ name: "get_schema", arguments: { dataset_id: "NOT AN ID" } });
  check(bad.isError === true, "an invalid dataset_id is an isError result");

  const res = await client.readResource({ uri: sc.resource.uri });
  check(res.contents.length > 0, "resource read returned contents");
  const first = JSON.parse(res.contents[0].text);
  check(first.total_count === total, "resource metadata total matches");

  let fetched = 0;
  let offset = 0;
  for (let pages = 0; pages < 1000; pages++) {
    const r = await fetch(`${sc.resource.url}?offset=${offset}&limit=1000`);
    check(r.ok, `GET page at ${offset}: ${r.status}`);
    const page = await r.json();
    fetched += page.data.length;
    if (!page.has_next) break;
    offset = page.next_offset;
  }
  check(fetched === total, `fetched ${fetched} rows, total_count ${total}`);

  console.log(JSON.stringify({ tools: names.length, dataset: datasetID, total_count: total, fetched, sample: sc.results.length }));
  await client.close();
  clearTimeout(deadline);
} catch (err) {
  console.error("interop: " + (err && err.stack ? err.stack : err));
  try { await client.close(); } catch {}
  process.exit(1);
}
