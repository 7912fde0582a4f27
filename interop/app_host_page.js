// The host page of the MCP App test (bundled for the browser by
// app_host.mjs). It plays an MCP Apps host, as Claude Desktop does: the
// official TypeScript SDK Client talks to the real datasf-mcp binary (its
// JSON-RPC messages are relayed to the binary's stdio by app_host.mjs),
// and the ext-apps host-side bridge (AppBridge) runs the server's ui://
// resource in a sandboxed iframe and passes it the tool input and result.
//
// The page enforces the extension's host rules: the app may call only this
// server's tools whose visibility includes "app"; it loads with the CSP the
// resource asks for (connect-src from _meta.ui.csp.connectDomains, only
// when the test allows network access; 'none' otherwise).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const EXTENSION = "io.modelcontextprotocol/ui";

// RelayTransport carries the client's messages through app_host.mjs.
class RelayTransport {
  async start() {
    window.__relayDeliver = (msg) => this.onmessage?.(msg);
  }
  async send(msg) {
    await window.relaySend(msg);
  }
  async close() {
    this.onclose?.();
  }
}

const log = { calls: {}, refused: [], openLinks: [], sizes: [] };
let client, tools, bridge, iframe;

const themes = {
  light: {
    "--color-background-primary": "#ffffff",
    "--color-background-secondary": "#f1f3f6",
    "--color-text-primary": "#1b1f24",
    "--color-text-secondary": "#57606a",
    "--color-border-primary": "#d0d7de",
    "--color-text-info": "#0a5cc2",
    "--color-background-info": "#3d7fd6",
    "--font-sans": "system-ui, sans-serif",
  },
  dark: {
    "--color-background-primary": "#16181c",
    "--color-background-secondary": "#23262c",
    "--color-text-primary": "#e8eaed",
    "--color-text-secondary": "#9aa0a6",
    "--color-border-primary": "#3c4043",
    "--color-text-info": "#8ab4f8",
    "--color-background-info": "#5b8def",
    "--font-sans": "system-ui, sans-serif",
  },
};

function hostContext(theme, width) {
  return {
    theme,
    styles: { variables: themes[theme] },
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    containerDimensions: { width, maxHeight: 4000 },
    platform: "web",
    locale: "en-US",
  };
}

async function start() {
  client = new Client(
    { name: "datasf-app-test-host", version: "1.0.0" },
    { capabilities: { extensions: { [EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  await client.connect(new RelayTransport());
  ({ tools } = await client.listTools());
  return {
    server_extensions: client.getServerCapabilities()?.extensions || {},
    tools: tools.map((t) => ({ name: t.name, ui: getToolUiResourceUri(t) || null, app_only: isToolVisibilityAppOnly(t) })),
  };
}

// show calls a tool the way a host does when the model calls it, renders
// its app and hands the app the input and the result.
async function show(name, args, opts) {
  const tool = tools.find((t) => t.name === name);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name} declares no app`);
  const res = await client.readResource({ uri });
  const content = res.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error("app MIME type " + content.mimeType);
  const ui = content._meta?.ui || {};
  const connect = opts.allowNetwork && ui.csp?.connectDomains?.length ? ui.csp.connectDomains.join(" ") : "'none'";
  const csp = `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src ${connect}`;
  const html = content.text.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${csp}">`);

  if (bridge) {
    await bridge.teardownResource({}).catch(() => {});
    await bridge.close().catch(() => {});
    iframe.remove();
  }
  const wrap = document.getElementById("wrap");
  wrap.style.width = opts.width + "px";
  iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.title = "datasf result viewer";
  iframe.setAttribute("sandbox", "allow-scripts allow-popups"); // an opaque origin, as hosts do
  iframe.style.cssText = `width:${opts.width}px;height:300px;border:1px solid #999;border-radius:8px;display:block`;
  document.body.style.background = opts.theme === "dark" ? "#0e0f11" : "#ffffff";

  bridge = new AppBridge(null, { name: "datasf-app-test-host", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, logging: {} }, { hostContext: hostContext(opts.theme, opts.width) });
  bridge.oncalltool = async (params) => {
    const t = tools.find((x) => x.name === params.name);
    const vis = t?._meta?.ui?.visibility;
    if (!t || (Array.isArray(vis) && !vis.includes("app"))) {
      log.refused.push(params.name);
      throw new Error(`tool ${params.name} is not available to apps`);
    }
    log.calls[params.name] = (log.calls[params.name] || 0) + 1;
    return client.callTool(params);
  };
  bridge.onopenlink = async ({ url }) => {
    log.openLinks.push(url);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = Math.min(height + 2, 4000) + "px";
    log.sizes.push(height);
  };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  wrap.appendChild(iframe);
  // Listen before the app loads: it says ui/initialize as soon as it runs.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;

  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name, arguments: args });
  await bridge.sendToolResult(result);
  return {
    is_error: Boolean(result.isError),
    structured: result.structuredContent,
    result_bytes: JSON.stringify(result).length,
    csp: ui.csp || null,
  };
}

async function setTheme(theme, width) {
  document.body.style.background = theme === "dark" ? "#0e0f11" : "#ffffff";
  if (width) {
    document.getElementById("wrap").style.width = width + "px";
    iframe.style.width = width + "px";
  }
  bridge.setHostContext(hostContext(theme, width || parseInt(iframe.style.width, 10)));
}

async function callPlain(name, args) {
  return client.callTool({ name, arguments: args });
}

window.host = { start, show, setTheme, callPlain, log };
