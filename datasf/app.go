package datasf

import (
	"context"
	_ "embed"
	"maps"
	"net/url"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The result viewer as an MCP App (the UI extension of MCP,
// io.modelcontextprotocol/ui): hosts that support the extension render
// AppURI beside a query_datasf or analyze_results call, and the app pages
// through the complete result with the app-only tool result_page, through
// the host. Other hosts see the tools and results as before.
const (
	// AppExtension is the MCP Apps extension's identifier.
	AppExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of an MCP App's HTML.
	AppMIMEType = "text/html;profile=mcp-app"
	// AppURI is the result viewer app's resource.
	AppURI = "ui://datasf-mcp/result-viewer.html"
)

// appHTML is the result viewer app: one self-contained HTML file, built
// from app/src and dualresp/viewer/src by dualresp/viewer/build.mjs (see
// app/README.md).
//
//go:embed app/viewer.html
var appHTML string

// appToolMeta is a tool's _meta.ui: the app that shows its results, and
// who may call it ("model", "app"; both when empty).
type appToolMeta struct {
	ResourceURI string   `json:"resourceUri"`
	Visibility  []string `json:"visibility,omitempty"`
}

// withApp declares the result viewer as the app that shows t's results.
func withApp(t tool) tool {
	if t.def.Meta == nil {
		t.def.Meta = &mcp.Meta{}
	}
	if t.def.Meta.AdditionalFields == nil {
		t.def.Meta.AdditionalFields = map[string]any{}
	}
	t.def.Meta.AdditionalFields["ui"] = appToolMeta{ResourceURI: AppURI}
	return t
}

// appOnly reports whether the tool is for apps only (hidden from the model).
func appOnly(t mcp.Tool) bool {
	if t.Meta == nil {
		return false
	}
	m, ok := t.Meta.AdditionalFields["ui"].(appToolMeta)
	return ok && len(m.Visibility) > 0 && !slices.Contains(m.Visibility, "model")
}

// supportsApps reports whether client capabilities declare the MCP Apps
// extension with the HTML MIME type.
func supportsApps(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	settings, ok := caps.Extensions[AppExtension].(map[string]any)
	if !ok {
		return false
	}
	types, _ := settings["mimeTypes"].([]any)
	return slices.Contains(types, any(AppMIMEType))
}

// clientSupportsApps reports whether the caller of ctx is an MCP Apps
// host: from the request's own capabilities (protocol 2026-07-28), else
// from those the session declared at initialize.
func clientSupportsApps(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		return supportsApps(info.ClientCapabilities)
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		caps := s.GetClientCapabilities()
		return supportsApps(&caps)
	}
	return false
}

// hideAppTools is the tool filter: clients that are not MCP Apps hosts
// neither list nor call the app-only tools, which they would otherwise
// offer to the model.
func hideAppTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if clientSupportsApps(ctx) {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), appOnly)
}

// advertiseApps adds the extension to the server's capabilities when the
// client declared it.
func advertiseApps(caps *mcp.ServerCapabilities) {
	ext := maps.Clone(caps.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[AppExtension] = map[string]any{"mimeTypes": []string{AppMIMEType}}
	caps.Extensions = ext
}

// appHooks advertise the extension in answers to initialize and (protocol
// 2026-07-28) server/discover, to clients that declare it.
func appHooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddAfterInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if req != nil && res != nil && supportsApps(&req.Params.Capabilities) {
			advertiseApps(&res.Capabilities)
		}
	})
	h.AddAfterDiscover(func(ctx context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if res != nil && clientSupportsApps(ctx) {
			advertiseApps(&res.Capabilities)
		}
	})
	return h
}

// appResource declares the result viewer app.
func appResource() mcp.Resource {
	return mcp.NewResource(AppURI, "Result viewer",
		mcp.WithResourceDescription("The complete result of a query_datasf or analyze_results call: its query, exact total, a sortable paged table, downloads and a bar chart for grouped counts and sums (an MCP App)."),
		mcp.WithMIMEType(AppMIMEType),
	)
}

// readApp serves resources/read of AppURI. The app reads pages through the
// host (result_page); where the host lets it reach the REST API
// (_meta.ui.csp.connectDomains), it reads them there, which is faster.
func (s *toolServer) readApp(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	ui := map[string]any{"prefersBorder": true}
	if u, err := url.Parse(s.results.URL("")); err == nil && u.Scheme != "" && u.Host != "" {
		ui["csp"] = map[string]any{"connectDomains": []string{u.Scheme + "://" + u.Host}}
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{
		URI:      AppURI,
		MIMEType: AppMIMEType,
		Text:     appHTML,
		Meta:     map[string]any{"ui": ui},
	}}, nil
}
