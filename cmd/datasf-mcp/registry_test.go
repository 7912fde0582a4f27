package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

const (
	serverJSONPath   = "../../server.json"
	registrySchema   = "../../registry/server.schema.json"
	licensePath      = "../../LICENSE"
	placeholderSHA   = "0000000000000000000000000000000000000000000000000000000000000000"
	publisherMetaKey = "io.modelcontextprotocol.registry/publisher-provided"
)

// serverEntry is the part of server.json the code decides.
type serverEntry struct {
	Schema     string `json:"$schema"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	Repository struct {
		URL string `json:"url"`
	} `json:"repository"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
		Version      string `json:"version"`
		FileSHA256   string `json:"fileSha256"`
		Transport    struct {
			Type string `json:"type"`
		} `json:"transport"`
		EnvironmentVariables []struct {
			Name     string `json:"name"`
			IsSecret bool   `json:"isSecret"`
			Default  string `json:"default"`
		} `json:"environmentVariables"`
	} `json:"packages"`
	Meta map[string]struct {
		License string   `json:"license"`
		Tools   []string `json:"tools"`
	} `json:"_meta"`
}

// compileRegistrySchema compiles the pinned MCP Registry schema.
func compileRegistrySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(registrySchema)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", registrySchema, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("server.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("server.schema.json")
	if err != nil {
		t.Fatalf("compiling %s: %v", registrySchema, err)
	}
	return s
}

// TestRegistryServerJSON: server.json is valid against the MCP Registry's
// published schema (pinned in registry/) and says what the code does: the
// server's version, the bundle's environment variables (the token secret),
// the registered tools and the license.
func TestRegistryServerJSON(t *testing.T) {
	t.Parallel()
	schema := compileRegistrySchema(t)
	b, err := os.ReadFile(serverJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("server.json against %s:\n%v", registrySchema, err)
	}
	// The schema is live: a description over the registry's 100 characters fails.
	var long map[string]any
	_ = json.Unmarshal(b, &long)
	long["description"] = strings.Repeat("x", 101)
	if err := schema.Validate(long); err == nil {
		t.Error("the pinned schema accepts a 101-character description; it validates nothing")
	}

	var entry serverEntry
	if err := json.Unmarshal(b, &entry); err != nil {
		t.Fatal(err)
	}
	var schemaID struct {
		ID string `json:"$id"`
	}
	sb, _ := os.ReadFile(registrySchema)
	if err := json.Unmarshal(sb, &schemaID); err != nil || entry.Schema != schemaID.ID {
		t.Errorf("server.json $schema = %q; want the pinned schema's $id %q (%v)", entry.Schema, schemaID.ID, err)
	}

	var manifest struct {
		Version    string `json:"version"`
		License    string `json:"license"`
		Repository struct {
			URL string `json:"url"`
		} `json:"repository"`
		Server struct {
			MCPConfig struct {
				Env map[string]string `json:"env"`
			} `json:"mcp_config"`
		} `json:"server"`
		UserConfig map[string]struct {
			Sensitive bool `json:"sensitive"`
			Default   any  `json:"default"`
		} `json:"user_config"`
	}
	mb, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mb, &manifest); err != nil {
		t.Fatal(err)
	}

	if entry.Version != datasf.Version || manifest.Version != datasf.Version {
		t.Errorf("server.json version %q, manifest version %q; want the server's %q", entry.Version, manifest.Version, datasf.Version)
	}
	if entry.Repository.URL != manifest.Repository.URL {
		t.Errorf("server.json repository %q; want the manifest's %q", entry.Repository.URL, manifest.Repository.URL)
	}
	if len(entry.Packages) != 1 {
		t.Fatalf("server.json has %d packages; want the MCP Bundle", len(entry.Packages))
	}
	pkg := entry.Packages[0]
	wantID := "https://github.com/datasf-mcp/datasf-mcp/releases/download/v" + datasf.Version + "/datasf-mcp.mcpb"
	if pkg.RegistryType != "mcpb" || pkg.Identifier != wantID || pkg.Version != datasf.Version || pkg.Transport.Type != "stdio" {
		t.Errorf("server.json package = %s %s %s %s; want mcpb %s %s stdio", pkg.RegistryType, pkg.Identifier, pkg.Version, pkg.Transport.Type, wantID, datasf.Version)
	}
	if pkg.FileSHA256 != placeholderSHA {
		t.Errorf("committed server.json fileSha256 = %s; want the placeholder (make registry writes the real one to dist/server.json)", pkg.FileSHA256)
	}

	// The environment variables are the bundle's, secret where the
	// manifest's setting is sensitive, with the manifest's defaults.
	type envVar struct {
		Name     string
		IsSecret bool
		Default  string
	}
	var got, want []envVar
	for _, e := range pkg.EnvironmentVariables {
		got = append(got, envVar{e.Name, e.IsSecret, e.Default})
	}
	for name, ref := range manifest.Server.MCPConfig.Env {
		setting := manifest.UserConfig[strings.TrimSuffix(strings.TrimPrefix(ref, "${user_config."), "}")]
		def := ""
		if setting.Default != nil {
			def = strings.TrimSpace(strings.Trim(mustJSON(t, setting.Default), `"`))
		}
		want = append(want, envVar{name, setting.Sensitive, def})
	}
	byName := func(a, b envVar) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(got, byName)
	slices.SortFunc(want, byName)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server.json environment variables vs the manifest's (-manifest +server.json):\n%s", diff)
	}
	// Their defaults are the command's defaults.
	env := map[string]string{}
	for _, e := range got {
		env[e.Name] = e.Default
	}
	fromEnv, err := parseConfig(nil, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := parseConfig(nil, func(string) string { return "" }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if fromEnv.Domain != defaults.Domain || fromEnv.Offline != defaults.Offline {
		t.Errorf("server.json defaults configure domain %q offline %v; the command's defaults are %q %v", fromEnv.Domain, fromEnv.Offline, defaults.Domain, defaults.Offline)
	}

	var tools []string
	for _, s := range datasf.ToolSpecs() {
		tools = append(tools, s.Name)
	}
	meta := entry.Meta[publisherMetaKey]
	if diff := cmp.Diff(tools, meta.Tools); diff != "" {
		t.Errorf("server.json _meta tools vs the registered tools (-registered +server.json):\n%s", diff)
	}

	lic, err := os.ReadFile(licensePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(lic, []byte("MIT License\n")) || !bytes.Contains(lic, []byte("datasf-mcp authors")) {
		t.Errorf("LICENSE is not the MIT license of the datasf-mcp authors:\n%.200s", lic)
	}
	if meta.License != "MIT" || manifest.License != "MIT" {
		t.Errorf("SPDX license: server.json %q, manifest %q; want MIT (LICENSE)", meta.License, manifest.License)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
