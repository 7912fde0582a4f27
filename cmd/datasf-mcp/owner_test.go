package main

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestBadClientKeyIsRefused: a malformed owner key header is a clear 400,
// not silently ignored.
func TestBadClientKeyIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the offline snapshot")
	}
	t.Parallel()
	ts := offlineHTTP(t, config{})
	req := initializeRequest(t, ts.URL)
	req.Header.Set("X-Datasf-Client-Key", "short")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var msg struct{ Error, Message string }
	_ = json.NewDecoder(res.Body).Decode(&msg)
	if res.StatusCode != http.StatusBadRequest || msg.Error != "invalid_client_key" {
		t.Errorf("POST /mcp with a malformed client key = %d %+v; want 400 invalid_client_key", res.StatusCode, msg)
	}
}
