#!/bin/sh
# Launcher of the MCP Bundle on macOS and Linux: runs the binary built for
# this machine (server/OS-ARCH/datasf-mcp), with the host's arguments and
# environment. Windows runs server/windows-amd64/datasf-mcp.exe directly
# (see manifest.json's platform_overrides).
dir=$(dirname "$0")
case "$(uname -s)" in
Darwin) os=darwin ;;
Linux) os=linux ;;
*) echo "datasf-mcp: no binary for $(uname -s) in this bundle" >&2; exit 1 ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
arm64 | aarch64) arch=arm64 ;;
*) echo "datasf-mcp: no binary for $(uname -m) in this bundle" >&2; exit 1 ;;
esac
exec "$dir/$os-$arch/datasf-mcp" "$@"
