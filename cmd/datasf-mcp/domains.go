package main

import (
	"fmt"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// toolDomain makes a tool command's --domain the tool's domain argument,
// as a model passes it (and --server passes it on); the configured domain
// stays DATASF_DOMAIN's.
func (p *parser) toolDomain() {
	p.cfg.ToolArgs["domain"] = p.cfg.Domain
	p.cfg.Domain = p.env("DATASF_DOMAIN", socrata.DefaultDomain)
}

// appTokens reads DATASF_APP_TOKENS: DOMAIN=TOKEN entries separated by
// commas. An error names the entry by its domain, never its token.
func appTokens(env string) (map[string]string, error) {
	if strings.TrimSpace(env) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for i, entry := range strings.Split(env, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		domain, token, ok := strings.Cut(entry, "=")
		if !ok || strings.TrimSpace(token) == "" {
			return nil, fmt.Errorf("DATASF_APP_TOKENS: entry %d is not DOMAIN=TOKEN", i+1)
		}
		d, err := socrata.CheckDomain(domain)
		if err != nil {
			return nil, fmt.Errorf("DATASF_APP_TOKENS: entry %d: %v", i+1, err)
		}
		if _, dup := out[d]; dup {
			return nil, fmt.Errorf("DATASF_APP_TOKENS: %s has two tokens", d)
		}
		out[d] = strings.TrimSpace(token)
	}
	return out, nil
}
