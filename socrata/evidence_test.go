package socrata_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// evidenceFile is what the live portals did, one claim a line; the code
// that imitates them cites a claim as "evidence <id>".
const evidenceFile = "../testdata/evidence/live-portals-2026.jsonl"

// claim is one line of evidenceFile; testdata/evidence/README.md says what
// the fields are.
type claim struct {
	ID           string   `json:"id"`
	Claim        string   `json:"claim"`
	SourceRepo   string   `json:"source_repo"`
	SourcePath   string   `json:"source_path"`
	SourceCommit string   `json:"source_commit"`
	SourceSearch string   `json:"source_search"`
	NotFound     string   `json:"source_not_found"`
	Unresolved   []string `json:"unresolved_index_ids"`
	MoreSources  []struct {
		Repo   string `json:"repo"`
		Path   string `json:"path"`
		Commit string `json:"commit"`
	} `json:"more_sources"`
}

var (
	claimID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)+$`)
	commit  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	// A citation: "evidence" then one id or more, comma-separated; comment
	// leaders at line breaks are folded away first.
	citation = regexp.MustCompile(`\bevidence:? ([a-z][a-z0-9]*(?:-[a-z0-9]+)+(?:, [a-z][a-z0-9]*(?:-[a-z0-9]+)+)*)`)
	// lineBreak folds a comment or text over several lines into one.
	lineBreak = regexp.MustCompile(`\s*\n\s*(//\s*)?`)
	// indexID is a citation only the search tool that made the file can
	// resolve: nobody with a clone can.
	indexID = regexp.MustCompile(`find_string ids? \d`)
)

// readClaims reads evidenceFile, failing the test on a line that is not a
// claim.
func readClaims(t *testing.T) []claim {
	t.Helper()
	f, err := os.Open(evidenceFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var claims []claim
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c claim
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", evidenceFile, n, err)
		}
		claims = append(claims, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return claims
}

// TestEvidenceClaims checks that every claim has a stable id, unique in the
// file, and says where it comes from: a public repository and path (with a
// full commit hash when one is given), or, for a claim that something was
// not found, the search that found nothing, or, for a claim whose source's
// repository could not be found, what was tried (source_not_found) beside
// the search-index ids it was read from (unresolved_index_ids). Those
// claims are listed in the log.
func TestEvidenceClaims(t *testing.T) {
	t.Parallel()
	claims := readClaims(t)
	if len(claims) == 0 {
		t.Fatalf("%s has no claims", evidenceFile)
	}
	seen := map[string]bool{}
	unresolved := 0
	var unresolvedClaims []string
	for i, c := range claims {
		line := i + 1
		if !claimID.MatchString(c.ID) {
			t.Errorf("%s:%d (%q): id = %q; want lower-case words joined by '-'", evidenceFile, line, c.Claim, c.ID)
		}
		if seen[c.ID] {
			t.Errorf("%s:%d: id %q is used twice", evidenceFile, line, c.ID)
		}
		seen[c.ID] = true
		switch {
		case c.SourceRepo != "" && c.SourcePath != "":
			if !strings.Contains(c.SourceRepo, "/") {
				t.Errorf("%s:%d (%s): source_repo = %q; want owner/name", evidenceFile, line, c.ID, c.SourceRepo)
			}
		case c.SourceSearch != "" && strings.HasPrefix(c.ID, "none-"):
		case len(c.Unresolved) > 0 && c.NotFound != "":
			// Written from sources whose repository was not found: the
			// claim says so, and the search-index ids are kept until
			// someone resolves them.
			unresolvedClaims = append(unresolvedClaims, c.ID)
		case len(c.Unresolved) > 0:
			t.Errorf("%s:%d (%s): cites only search-index ids %v, which nobody with a clone can resolve: resolve them to source_repo, source_path and source_commit, or say in source_not_found what was searched", evidenceFile, line, c.ID, c.Unresolved)
		default:
			t.Errorf("%s:%d (%s): no source: want source_repo and source_path (or, for a claim that nothing was found, source_search)", evidenceFile, line, c.ID)
		}
		if c.SourceCommit != "" && !commit.MatchString(c.SourceCommit) {
			t.Errorf("%s:%d (%s): source_commit = %q; want a full commit hash", evidenceFile, line, c.ID, c.SourceCommit)
		}
		for _, m := range c.MoreSources {
			if m.Repo == "" || m.Path == "" || (m.Commit != "" && !commit.MatchString(m.Commit)) {
				t.Errorf("%s:%d (%s): more_sources entry %+v lacks a repo, a path or a full commit", evidenceFile, line, c.ID, m)
			}
		}
		unresolved += len(c.Unresolved)
	}
	t.Logf("%d claims; %d whose source's repository was not found %v; %d citations in all still unresolved (unresolved_index_ids)",
		len(claims), len(unresolvedClaims), unresolvedClaims, unresolved)
}

// TestEvidenceCitations checks every "evidence <id>" in the module's Go and
// Markdown files against the claims, and that no file cites the search
// index's ids, which a clone cannot resolve.
func TestEvidenceCitations(t *testing.T) {
	t.Parallel()
	ids := map[string]bool{}
	for _, c := range readClaims(t) {
		ids[c.ID] = true
	}
	cited := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// Both patterns start with a word no line break can split: a
		// file without either has nothing to check (and most files have
		// neither; folding their lines cost seconds under -race).
		if !bytes.Contains(b, []byte("evidence")) && !bytes.Contains(b, []byte("find_string")) {
			return nil
		}
		text := lineBreak.ReplaceAllString(string(b), " ")
		if loc := indexID.FindStringIndex(text); loc != nil {
			t.Errorf("%s cites %q, a search-index id nobody with a clone can resolve; cite the claim: evidence <id>", path, text[loc[0]:min(loc[1]+12, len(text))])
		}
		for _, m := range citation.FindAllStringSubmatch(text, -1) {
			for id := range strings.SplitSeq(m[1], ", ") {
				cited++
				if !ids[id] {
					t.Errorf("%s cites evidence %q, which %s does not have; known ids: %v", path, id, evidenceFile, slices.Sorted(maps.Keys(ids)))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("no file cites any evidence; the citation pattern no longer matches the comments")
	}
	t.Logf("%d citations checked", cited)
}
