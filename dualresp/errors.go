package dualresp

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

var (
	// ErrNotFound means no resource has the given id (it never existed, was
	// deleted, or was cleaned up after it expired).
	ErrNotFound = errors.New("dualresp: resource not found")
	// ErrExpired means the resource exists but has expired.
	ErrExpired = errors.New("dualresp: resource expired")
	// ErrTimeout means a client request did not finish in time.
	ErrTimeout = errors.New("dualresp: request timed out")
	// ErrClosed is returned by a Store or Server used after Close.
	ErrClosed = errors.New("dualresp: closed")
	// ErrPinQuota means the owner of a result already has as many pinned
	// results as Options.MaxPinnedPerOwner allows. A *PinQuotaError from
	// the Server, and a *FetchError (HTTP 409, code pin_quota_exceeded)
	// from a Client, match it with errors.Is.
	ErrPinQuota = errors.New("dualresp: pin quota reached")
)

// ExpiredError reports a resource that has expired. It names the query
// that made it, so that whoever holds the dead link can run it again. It
// matches ErrExpired with errors.Is.
type ExpiredError struct {
	ID        string
	ExpiresAt time.Time
	Query     Query
}

func (e *ExpiredError) Error() string {
	return fmt.Sprintf("%v: %q expired at %s", ErrExpired, e.ID, e.ExpiresAt.Format(time.RFC3339))
}

// Is makes an *ExpiredError match ErrExpired.
func (e *ExpiredError) Is(target error) bool { return target == ErrExpired }

// RunAgain says, in one line, which query to run again for a new result:
// its kind, its parameters and its text.
func (e *ExpiredError) RunAgain() string {
	var b strings.Builder
	b.WriteString(e.Query.Kind)
	for _, k := range slices.Sorted(maps.Keys(e.Query.Params)) {
		fmt.Fprintf(&b, " %s=%s", k, e.Query.Params[k])
	}
	if e.Query.Text != "" {
		fmt.Fprintf(&b, ": %s", e.Query.Text)
	}
	return strings.TrimSpace(b.String())
}

// PinQuotaError reports a pin refused because the result's owner already
// has Max pinned results, or (Store set) because the store already holds
// Max pinned results, the most it keeps pinned. Deleting one of them frees
// a place.
type PinQuotaError struct {
	// Owner is the owner of the result (see WithOwner); "" for anonymous.
	Owner string
	// Max is the quota: the most pinned results one owner (the owner's
	// identity, see OwnerIdentity) may have, or the store may hold.
	Max int
	// Store is set when the store's bound, not the owner's, refused.
	Store bool
}

func (e *PinQuotaError) Error() string {
	if e.Store {
		return fmt.Sprintf("dualresp: pin quota reached: the store already holds %d pinned results, the most it keeps pinned; "+
			"delete a pinned result you no longer need (DELETE /resources/{id}), or keep the link and read it before it expires", e.Max)
	}
	return fmt.Sprintf("dualresp: pin quota reached: %d results are already pinned for this owner, the most allowed; "+
		"delete a pinned result you no longer need (DELETE /resources/{id}) before pinning another", e.Max)
}

// Is makes a PinQuotaError match ErrPinQuota.
func (e *PinQuotaError) Is(target error) bool { return target == ErrPinQuota }

// QueryError reports that a query failed: its Executor could not prepare
// it, or its Plan could not read the sample, a page or an export.
type QueryError struct {
	// Op is what was being done: "sample", "page" or "export".
	Op  string
	Err error
}

func (e *QueryError) Error() string { return fmt.Sprintf("dualresp: %s query failed: %v", e.Op, e.Err) }
func (e *QueryError) Unwrap() error { return e.Err }

// rowError is a row of a Plan that is not a JSON object; its words
// are for the REST API's caller.
type rowError struct {
	n   int64  // the row's index in the result
	why string // e.g. "is not a JSON object: \"text\""
}

func (e *rowError) Error() string { return fmt.Sprintf("row %d %s", e.n, e.why) }

// CountError reports that a query's Plan failed to count its rows.
type CountError struct{ Err error }

func (e *CountError) Error() string { return fmt.Sprintf("dualresp: count failed: %v", e.Err) }
func (e *CountError) Unwrap() error { return e.Err }

// StorageError reports that the Store failed.
type StorageError struct {
	// Op is the Store method: "save", "get", "touch", "pin", "delete",
	// "delete expired".
	Op  string
	Err error
}

func (e *StorageError) Error() string { return fmt.Sprintf("dualresp: store %s: %v", e.Op, e.Err) }
func (e *StorageError) Unwrap() error { return e.Err }

// ParseError reports that a value given to Parse or returned by a server
// could not be read as a dual response or a page.
type ParseError struct {
	// What describes the value being parsed.
	What string
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("dualresp: parse %s: %v", e.What, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }

// FetchError reports a failed HTTP request made by a Client. StatusCode is
// zero when no response arrived (a connection error). For 404 answers the
// error also matches ErrNotFound or ErrExpired with errors.Is, and for a
// pin refused by the quota (409 pin_quota_exceeded) ErrPinQuota.
type FetchError struct {
	Method     string
	URL        string
	StatusCode int
	// Code is the "error" field of the JSON error body, when there is one.
	Code    string
	Message string
	Err     error

	noRetry bool
	broken  bool // a download that stopped midway: ExportWith may resume it
}

func (e *FetchError) Error() string {
	if e.StatusCode == 0 {
		return fmt.Sprintf("dualresp: %s %s: %v", e.Method, e.URL, e.Err)
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("dualresp: %s %s: HTTP %d: %s", e.Method, e.URL, e.StatusCode, msg)
}

func (e *FetchError) Unwrap() error { return e.Err }

// Is makes a 404 FetchError match ErrNotFound or ErrExpired.
func (e *FetchError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == 404 && e.Code != "expired"
	case ErrExpired:
		return e.StatusCode == 404 && e.Code == "expired"
	case ErrPinQuota:
		return e.StatusCode == 409 && e.Code == codePinQuota
	}
	return false
}

// temporary reports whether a request that failed with err may succeed if
// tried again.
func (e *FetchError) temporary() bool {
	return e.StatusCode == 0 || e.StatusCode >= 500 || e.StatusCode == 429 || e.StatusCode == 408
}
