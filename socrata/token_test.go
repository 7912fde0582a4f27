package socrata

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAppTokenNeverLeaks provokes every error path with a server that echoes
// the app token into its answers, and checks the token is sent on every
// request yet appears in no error text and no log line.
func TestAppTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	const token = "tok-SECRET-7f3a9c21e5"
	echo := func(w http.ResponseWriter, r *http.Request, status int, ct, format string) {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(status)
		fmt.Fprintf(w, format, r.Header.Get("X-App-Token"))
	}
	paths := map[string]func(w http.ResponseWriter, r *http.Request){
		"envelope400": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 400, "application/json", `{"errorCode":"query.soql.no-such-column","message":"No such column: %[1]s","data":{"column":"%[1]s","nested":["%[1]s"]}}`)
		},
		"old400": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 400, "application/json", `{"code":"query.compiler.malformed","error":true,"message":"could not parse %s"}`)
		},
		"missing404": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 404, "application/json", `{"code":"dataset.missing","error":true,"message":"Not found %s"}`)
		},
		"limited429": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 429, "application/json", `{"message":"too many requests for token %s"}`)
		},
		"plain500": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 500, "text/plain", `internal error; token was %s`)
		},
		"busy503": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 503, "application/json", `{"message":"busy %s"}`)
		},
		"processing202": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 202, "application/json", `{"message":"processing %s"}`)
		},
		"html200": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 200, "text/html", `<html><head><title>Login %s</title></head></html>`)
		},
		"html403": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 403, "text/html", `<html><head><title>Forbidden %s</title></head></html>`)
		},
		"badjson200": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 200, "application/json", `{"x": %s}`)
		},
		"badrow200": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 200, "application/json", `[{"a":"1"}, %s]`)
		},
		"envelope200": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 200, "application/json", `{"error":true,"message":"Unrecognized arguments [%s]"}`)
		},
		"cut200": func(w http.ResponseWriter, r *http.Request) {
			echo(w, r, 200, "application/json", `[{"a":"%s"},{"a":`)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		},
		"slow": func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		},
	}
	var requests, withToken atomic.Int64
	h := func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("X-App-Token") == token {
			withToken.Add(1)
		}
		// The scenario is the last path element before .json, or the
		// catalog's q parameter.
		name := strings.TrimSuffix(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], ".json")
		if q := r.URL.Query().Get("q"); q != "" {
			name = q
		}
		f, ok := paths[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f(w, r)
	}
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, _, srv := newTestClient(t, http.HandlerFunc(h), Options{AppToken: token, Logger: logger, Timeout: 100 * time.Millisecond})

	ctx := t.Context()
	var errs []error
	for name := range paths {
		_, err := c.Query(ctx, name, "SELECT a")
		errs = append(errs, err)
		_, err = c.Schema(ctx, name)
		errs = append(errs, err)
		_, err = c.Search(ctx, name, 3)
		errs = append(errs, err)
		if s, err := c.QueryStream(ctx, name, "SELECT a"); err != nil {
			errs = append(errs, err)
		} else {
			for _, err := range s.All() {
				if err != nil {
					errs = append(errs, err)
				}
			}
			s.Close()
		}
	}
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err := c.Query(expired, "envelope400", "SELECT a")
	errs = append(errs, err)
	_, err = c.Query(ctx, "bad/id", "SELECT a")
	errs = append(errs, err)
	srv.Close()
	_, err = c.List(ctx, "closed", 3)
	errs = append(errs, err)

	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d succeeded; every scenario should fail", i)
			continue
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(text, token) {
				t.Errorf("error text holds the token: %s", text)
			}
		}
		var api *APIError
		if asAPI(err, &api) && strings.Contains(fmt.Sprint(api.Data), token) {
			t.Errorf("APIError.Data holds the token: %v", api.Data)
		}
	}
	if logs.String() == "" {
		t.Fatal("no log lines written; the log check would prove nothing")
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("a log line holds the token")
	}
	if requests.Load() == 0 || withToken.Load() != requests.Load() {
		t.Errorf("X-App-Token on %d of %d requests; want all", withToken.Load(), requests.Load())
	}
	t.Logf("token leak check: %d failing calls, %d requests (all with X-App-Token), %d log bytes, token in none",
		len(errs), requests.Load(), len(logs.String()))
}

func asAPI(err error, api **APIError) bool {
	for e := err; e != nil; {
		if a, ok := e.(*APIError); ok {
			*api = a
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}
