package main

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// handlerTransport is an http.RoundTripper that serves requests with a
// handler in this process, streaming the answer: query --all without
// --server reads the complete result from the service's own REST API
// without opening a port.
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
	body   *io.PipeWriter
	code   int
	once   sync.Once
	ready  chan struct{}
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush is a no-op: every Write reaches the reader.
func (w *pipeResponse) Flush() {}
