// serverEnv is the environment the interop scripts start the datasf-mcp
// binary with: the TypeScript SDK's StdioClientTransport passes only a
// default few variables (HOME, PATH, …) unless given env, so the
// DATASF_* settings the Go tests give the script (DATASF_CACHE_DIR,
// DATASF_LOG_LEVEL) and XDG_CACHE_HOME would not reach the server, which
// would then build its offline cache in the user's ~/.cache. A host
// configured with env for a server passes it the same way.
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

export function serverEnv() {
  const env = getDefaultEnvironment();
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("DATASF_") || k === "XDG_CACHE_HOME") env[k] = v;
  }
  return env;
}
