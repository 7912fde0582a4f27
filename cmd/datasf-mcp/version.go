package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// Set at build time by `make release`:
//
//	go build -ldflags "-X main.version=v0.2.0 -X main.commit=abc1234 -X main.date=2025-01-02T03:04:05Z"
var (
	version = ""
	commit  = ""
	date    = ""
)

// versionString is what `datasf-mcp version` and --version print: the
// release version (or the module version of go install, or the server's
// version with -dev), the commit, the build date, Go and the platform.
func versionString() string {
	v, c, d := build()
	if len(c) > 12 {
		c = c[:12]
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		d = "unknown"
	}
	return fmt.Sprintf("datasf-mcp %s (commit %s, built %s, %s, %s/%s)", v, c, d, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// releaseVersion is the version MCP clients are told in serverInfo.
func releaseVersion() string {
	v, _, _ := build()
	return v
}

// build returns the version, commit and date set by the release, or else
// read from the build information; the version is the server's with -dev
// when neither says.
func build() (v, c, d string) {
	v, c, d = version, commit, date
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.time" && d == "":
				d = s.Value
			}
		}
	}
	if v == "" {
		v = datasf.Version + "-dev"
	}
	return v, c, d
}
