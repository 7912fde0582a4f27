package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// handlerTransport is an http.RoundTripper that serves requests with a
// handler in this process, streaming the answer: query --all without
// --server reads the complete result from the service's own REST API
// without opening a port. It carries what HTTP would: the trailers the
// handler declared (an export's X-Export-Status), and a request cancelled
// midway as a broken body, never as a clean end, so that a stopped export
// is never taken for a complete one.
type handlerTransport struct {
	h http.Handler
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	r := req.Clone(req.Context())
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0"
	if r.Body == nil {
		r.Body = http.NoBody
	}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				// http.ErrAbortHandler: a download broken midway.
				w.WriteHeader(http.StatusInternalServerError)
				pw.CloseWithError(fmt.Errorf("in-process handler stopped: %v", p))
				return
			}
			w.WriteHeader(http.StatusOK)
			w.setTrailers()
			if err := r.Context().Err(); err != nil {
				// The handler stopped because the request was cancelled:
				// what it sent is not the whole answer.
				pw.CloseWithError(err)
				return
			}
			pw.Close()
		}()
		t.h.ServeHTTP(w, r)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)),
		StatusCode: w.code,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        w.sent,
		Trailer:       w.trailer,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponse is the http.ResponseWriter of handlerTransport: the header
// is sent when the handler writes it (or its first byte), the body through
// a pipe.
type pipeResponse struct {
	header http.Header
	sent   http.Header
	// trailer holds the trailers the header declared (Trailer), their
	// values set once the handler returns, before the body ends.
	trailer http.Header
	body    *io.PipeWriter
	code    int
	once    sync.Once
	ready   chan struct{}
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		for _, v := range w.sent.Values("Trailer") {
			for _, k := range strings.Split(v, ",") {
				if k = strings.TrimSpace(k); k != "" {
					if w.trailer == nil {
						w.trailer = http.Header{}
					}
					w.trailer[http.CanonicalHeaderKey(k)] = nil
				}
			}
		}
		close(w.ready)
	})
}

// setTrailers sets the declared trailers' values from the header, as the
// handler left it.
func (w *pipeResponse) setTrailers() {
	for k := range w.trailer {
		w.trailer[k] = w.header.Values(k)
	}
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush is a no-op: every Write reaches the reader.
func (w *pipeResponse) Flush() {}
