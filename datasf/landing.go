package datasf

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
)

// landingPage is what GET / shows a person who opens the server's address
// in a browser: what the server is and where its parts are.
var landingPage = template.Must(template.New("landing").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>datasf-mcp</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}</style>
</head><body>
<h1>datasf-mcp {{.Version}}</h1>
<p>An MCP server for San Francisco's open data portal ({{.Domain}}) and any other Socrata portal.
A language model gets a sample, the exact row count and a link; the complete result is read from
this server's REST API, which runs the stored query again page by page.</p>
<ul>
<li><b>MCP</b> (Streamable HTTP): <code>{{.URL}}/mcp</code>{{if not .MCP}} (not served here: this instance serves MCP on stdio){{end}}</li>
<li><b>REST</b>: <code>{{.URL}}/resources/{id}</code> (metadata), <code>?offset=&amp;limit=</code> (a page),
<code>/resources/{id}/export?format=csv|ndjson|json</code> (the whole result)</li>
<li><b>Viewer</b>: open a result's link in a browser to page through it</li>
<li><b>Metrics</b>: <code>{{.URL}}/metrics</code> (Prometheus){{if .Tokens}}, with a bearer token{{end}}</li>
<li><b>Health</b>: <code>{{.URL}}/healthz</code></li>
</ul>
<p>Source and documentation: <a href="https://github.com/datasf-mcp/datasf-mcp">github.com/datasf-mcp/datasf-mcp</a>.</p>
</body></html>
`))

// landingInfo is what the landing page says, also as JSON.
type landingInfo struct {
	Version string `json:"version"`
	Domain  string `json:"domain"`
	URL     string `json:"url"`
	MCP     bool   `json:"mcp_http"`
	Tokens  bool   `json:"bearer_tokens"`
	// Store identifies the result store (a hash of its name, which may
	// hold a password): instances with the same one serve each other's
	// links.
	Store string `json:"store"`
	// StoreProof answers a StoreChallengeHeader: StoreProof of the
	// challenge with Config.StoreSecret.
	StoreProof string `json:"store_proof,omitempty"`
	Links      struct {
		MCP     string `json:"mcp,omitempty"`
		REST    string `json:"rest"`
		Metrics string `json:"metrics"`
		Health  string `json:"health"`
	} `json:"links"`
}

// StoreID is what the landing page says of a store spec: a hash that
// instances compare to know whether they share their results.
func StoreID(spec string) string {
	if spec == "" || spec == "memory" {
		return ""
	}
	sum := sha256.Sum256([]byte("datasf-store\x00" + spec))
	return hex.EncodeToString(sum[:8])
}

// StoreChallengeHeader carries a challenge (a random nonce) to the landing
// page, which answers it with store_proof when it has a StoreSecret.
const StoreChallengeHeader = "X-Datasf-Store-Challenge"

// StoreProof is the proof, keyed with the store's secret, that an instance
// serves the store spec: HMAC-SHA-256 of the challenge and the store's id.
// Only a process that can read the secret (the user's own) can make it.
func StoreProof(secret, spec, challenge string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("datasf-store-proof\x00" + StoreID(spec) + "\x00" + challenge))
	return hex.EncodeToString(m.Sum(nil))
}

// landing serves GET /: HTML to browsers, JSON to anything else.
func (s *Service) landing(w http.ResponseWriter, r *http.Request) {
	info := landingInfo{Version: s.cfg.Version, Domain: s.client.Domain(), URL: s.url,
		MCP: s.cfg.StreamableHTTP, Tokens: len(s.cfg.RESTTokens) > 0, Store: StoreID(s.cfg.Store)}
	if info.Version == "" {
		info.Version = Version
	}
	if c := r.Header.Get(StoreChallengeHeader); c != "" && len(c) <= 128 && s.cfg.StoreSecret != "" {
		info.StoreProof = StoreProof(s.cfg.StoreSecret, s.cfg.Store, c)
	}
	if info.MCP {
		info.Links.MCP = s.url + "/mcp"
	}
	info.Links.REST = s.url + "/resources/{id}"
	info.Links.Metrics = s.url + "/metrics"
	info.Links.Health = s.url + "/healthz"
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(info)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = landingPage.Execute(w, info)
}
