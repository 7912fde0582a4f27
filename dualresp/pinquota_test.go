package dualresp_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Concurrent pins by one owner never go over the quota.
func TestPinQuotaConcurrent(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: 5})
	var ids []string
	for range 40 {
		ids = append(ids, create(t, srv, dualresp.Spec{}).ID())
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for _, id := range ids {
		wg.Go(func() {
			_, err := srv.Pin(t.Context(), id)
			switch {
			case err == nil:
				mu.Lock()
				ok++
				mu.Unlock()
			case !errors.Is(err, dualresp.ErrPinQuota):
				t.Errorf("Pin(%s) = %v", id, err)
			}
		})
	}
	wg.Wait()
	if ok != 5 {
		t.Errorf("%d of 40 concurrent pins succeeded; want 5", ok)
	}
}

func TestPinQuotaNegativeMeansNone(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: -1})
	for i := range dualresp.DefaultMaxPinnedPerOwner + 5 {
		if _, err := srv.Pin(t.Context(), create(t, srv, dualresp.Spec{}).ID()); err != nil {
			t.Fatalf("Pin #%d without a quota = %v", i+1, err)
		}
	}
}

// Over REST a pin over the quota is a 409 in the error envelope, and the
// Client reports it as an error matching ErrPinQuota.
func TestPinQuotaREST(t *testing.T) {
	t.Parallel()
	srv, _, ts := startServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: 1}, nil)
	put := func(id string) (int, map[string]string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, ts.URL+"/resources/"+id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if code, body := put(create(t, srv, dualresp.Spec{}).ID()); code != http.StatusOK {
		t.Fatalf("first PUT = %d %v; want 200", code, body)
	}
	code, body := put(create(t, srv, dualresp.Spec{}).ID())
	if code != http.StatusConflict || body["error"] != "pin_quota_exceeded" || !strings.Contains(body["message"], "DELETE /resources/") {
		t.Errorf("second PUT = %d %v; want 409 pin_quota_exceeded saying how to free one", code, body)
	}

	c := newClient(t, dualresp.ClientOptions{})
	_, err := parse(t, c, create(t, srv, dualresp.Spec{})).Pin(t.Context())
	var fe *dualresp.FetchError
	if !errors.Is(err, dualresp.ErrPinQuota) || !errors.As(err, &fe) || fe.StatusCode != http.StatusConflict || errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Client Pin over the quota = %v; want a 409 FetchError matching ErrPinQuota", err)
	}
}
