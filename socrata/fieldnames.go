package socrata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// Some older datasets answer SODA3 with rows keyed by their columns'
// display names ("POST_ID") instead of their field names ("post_id"), as a
// production caller of data.sf.gov's SODA3 reports (issue 52, 2026-09). A
// field name is lower case ([a-z0-9_], ":" and "@" for system and computed
// fields), so a key with anything else is not one: the stream then reads
// the dataset's columns (Views API) once and keys the rows by field names
// again. Keys that name no column (a query's aliases) are left as they are.

// isFieldName reports whether k can be a Socrata field name.
func isFieldName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == ':' || r == '@') {
			return false
		}
	}
	return true
}

// mapFields maps a SODA3 answer's X-SODA2-Fields to field names when they
// are display names: Fields are known before the first row.
func (s *RowStream) mapFields() error {
	if !s.needsKeys(s.Fields) {
		return nil
	}
	if err := s.loadKeys(); err != nil {
		return err
	}
	for i, f := range s.Fields {
		if to, ok := s.soda3.keys[f]; ok {
			s.Fields[i] = to
		}
	}
	return nil
}

// mapKeys looks at the keys of a SODA3 answer's first row: display names
// make every row's keys mapped to field names.
func (s *RowStream) mapKeys(raw json.RawMessage) error {
	if s.soda3.keys != nil {
		return nil
	}
	var row map[string]json.RawMessage
	if err := json.Unmarshal(raw, &row); err != nil {
		return s.fail(err)
	}
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	if !s.needsKeys(keys) {
		return nil
	}
	return s.loadKeys()
}

func (s *RowStream) needsKeys(keys []string) bool {
	for _, k := range keys {
		if !isFieldName(k) {
			return true
		}
	}
	return false
}

// loadKeys reads the dataset's columns (cached by the client) and sets the
// stream's key map; nil when no key needs mapping.
func (s *RowStream) loadKeys() error {
	m, err := s.c.displayKeys(s, s.soda3.datasetID)
	if err != nil {
		return fmt.Errorf("socrata: the rows of %s are keyed by display names; reading its columns to map them to field names: %w", s.soda3.datasetID, err)
	}
	if len(m) > 0 {
		s.soda3.keys = m
	}
	return nil
}

// displayKeys returns a dataset's display names (as given, and upper
// case) and upper-cased field names, each mapped to its field name.
func (c *Client) displayKeys(s *RowStream, datasetID string) (map[string]string, error) {
	if m, ok := c.fieldNames.get(datasetID); ok {
		return m, nil
	}
	var doc viewDocument
	if err := c.getJSON(s.ctx, "views", c.base+"/api/views/"+url.PathEscape(datasetID)+".json", &doc); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, col := range doc.Columns {
		if col.FieldName == "" {
			continue
		}
		for _, k := range []string{col.Name, strings.ToUpper(col.Name), strings.ToUpper(col.FieldName)} {
			if k != "" && k != col.FieldName && !isFieldName(k) {
				if _, taken := m[k]; !taken {
					m[k] = col.FieldName
				}
			}
		}
	}
	c.fieldNames.put(datasetID, m)
	return m, nil
}

// renameKeys returns row with its keys renamed by keys, in their order.
func renameKeys(row json.RawMessage, keys map[string]string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(row))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	out := make([]byte, 0, len(row)+16)
	out = append(out, '{')
	for n := 0; dec.More(); n++ {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		if to, ok := keys[k]; ok {
			k = to
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(k)
		out = append(append(append(out, kb...), ':'), v...)
	}
	return append(out, '}'), nil
}

// fieldNameCache holds the display-key maps of the last datasets read, a
// bounded number: it is emptied when full.
type fieldNameCache struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

const maxFieldNameMaps = 64

func (f *fieldNameCache) get(id string) (map[string]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.m[id]
	return m, ok
}

func (f *fieldNameCache) put(id string, m map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= maxFieldNameMaps {
		f.m = map[string]map[string]string{}
	}
	f.m[id] = m
}
