package localportal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// pendingDataset is a dataset whose rows are made or loaded on first use:
// the sample datasets of the offline mode, and data files loading in the
// background. Discovery and, when the schema is final, the Views API
// answer from its schema without waiting for the rows.
type pendingDataset struct {
	schema Schema
	// exact says schema is what the loaded dataset will have (generated
	// data); otherwise the Views API waits for the load.
	exact bool
	// rows is the row count the load makes (generated data), -1 when
	// unknown until it has loaded (a data file).
	rows int64
	load func(ctx context.Context) error

	once sync.Once
	done chan struct{}
	err  error
}

// AddLazy registers dataset schema whose n rows gen makes on the first
// query: the same rows as AddGenerated, made later. Discovery lists it and
// Views describes it at once, without making rows.
func (s *Emulator) AddLazy(schema Schema, n int, gen func(i int) map[string]any) error {
	if !isDatasetID(schema.ID) {
		return fmt.Errorf("localportal: dataset id %q is not a 4x4 identifier like \"abcd-1234\"", schema.ID)
	}
	if n < 0 {
		return fmt.Errorf("localportal: AddLazy %s: negative row count %d", schema.ID, n)
	}
	s.addPending(schema, int64(n), func(ctx context.Context) error {
		return s.AddGenerated(ctx, schema, n, gen)
	})
	return nil
}

// addPending registers a dataset loaded by load on first use (or earlier,
// by start). rows >= 0 is the row count of generated data, whose schema is
// exact; rows < 0, a data file's load, whose schema it decides.
func (s *Emulator) addPending(schema Schema, rows int64, load func(ctx context.Context) error) *pendingDataset {
	p := &pendingDataset{schema: schema, exact: rows >= 0, rows: max(rows, -1), load: load, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]*pendingDataset{}
	}
	if _, seen := s.catalog[schema.ID]; !seen && s.datasets[schema.ID] == nil && s.pending[schema.ID] == nil {
		s.order = append(s.order, schema.ID)
	}
	s.pending[schema.ID] = p
	return p
}

// start runs the load once, in its own goroutine, not bound to any
// request: a client that gives up does not abort a load others wait for.
func (s *Emulator) start(id string, p *pendingDataset) {
	p.once.Do(func() {
		go func() {
			defer close(p.done)
			p.err = p.load(context.Background())
			s.mu.Lock()
			if p.err == nil && s.pending[id] == p {
				delete(s.pending, id)
			}
			s.mu.Unlock()
		}()
	})
}

// ensure makes sure a pending dataset id is loaded: it starts the load if
// needed and waits for it. It reports whether id was pending.
func (s *Emulator) ensure(ctx context.Context, id string) (bool, error) {
	s.mu.RLock()
	p := s.pending[id]
	s.mu.RUnlock()
	if p == nil {
		return false, nil
	}
	s.start(id, p)
	select {
	case <-p.done:
		return true, p.err
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// Wait waits until every dataset that is loading has loaded (it does not
// start the lazy ones) and returns the joined load errors.
func (s *Emulator) Wait(ctx context.Context) error {
	s.mu.RLock()
	var started []*pendingDataset
	for _, p := range s.pending {
		started = append(started, p)
	}
	s.mu.RUnlock()
	var errs []error
	for _, p := range started {
		if p.exact {
			select {
			case <-p.done:
				if p.err != nil {
					errs = append(errs, p.err)
				}
			default: // a lazy dataset nobody asked for yet
			}
			continue
		}
		select {
		case <-p.done:
			if p.err != nil {
				errs = append(errs, p.err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errors.Join(errs...)
}

// pendingRows returns the row count of dataset id when it is generated
// data not made yet (a sample dataset before its first query).
func (s *Emulator) pendingRows(id string) (*pendingDataset, bool) {
	s.mu.RLock()
	p := s.pending[id]
	s.mu.RUnlock()
	if p == nil || p.rows < 0 {
		return nil, false
	}
	select {
	case <-p.done:
		return nil, false // made (or failed): the dataset answers
	default:
		return p, true
	}
}

// answerPendingCount answers a bare row count (SELECT count(*), with an
// alias or not, and nothing else but a LIMIT of at least one row) of a
// generated dataset that is not made yet from its known row count, as
// the made dataset would answer it: the same column, types and value,
// through the same encoding. A live portal answers a count at once; the
// search's row counts ask one of each top hit, which made the offline
// portal generate and index the 250,000 rows of wg3w-h783 (seconds of
// CPU) for a search that reads no row. It reports whether it answered;
// any other query, or a dataset already made, is left to the dataset.
// text gives the query of the request for the dataset's columns; wrap,
// when not nil, is SODA3's change of the result's keys.
func (s *Emulator) answerPendingCount(w http.ResponseWriter, r *http.Request, id string, text func(*dataset) (string, error), defaultLimit bool, wrap func(*dataset) func(*compiled) *compiled) bool {
	p, ok := s.pendingRows(id)
	if !ok {
		return false
	}
	ds, err := newEmptyDataset(p.schema, s.opts.Now())
	if err != nil {
		return false
	}
	src, err := text(ds)
	if err != nil {
		return false // the dataset's own answer says what is wrong
	}
	q, err := soql.Parse(src)
	if err != nil || !bareCount(q) {
		return false
	}
	c, err := compile(ds, src, q, defaultLimit)
	if err != nil || len(c.cols) != 1 {
		return false
	}
	c.sql = "SELECT " + strconv.FormatInt(p.rows, 10)
	if wrap != nil {
		c = wrap(ds)(c)
	}
	if err := s.run(w, r, ds, c); err != nil {
		writeError(w, err)
	}
	return true
}

// bareCount reports whether q is SELECT count(*) [AS alias] [LIMIT n >= 1]:
// one row, the table's row count.
func bareCount(q *soql.Query) bool {
	if len(q.Stages) != 1 {
		return false
	}
	st := q.Stages[0]
	if st.Distinct || len(st.Selection) != 1 || st.Where != nil || len(st.GroupBy) > 0 || st.Having != nil ||
		len(st.OrderBy) > 0 || st.Search != nil || st.Offset != nil || (st.Limit != nil && *st.Limit < 1) {
		return false
	}
	item := st.Selection[0]
	call, ok := item.Expr.(*soql.Call)
	return ok && item.Star == soql.NoStar && call.Star && !call.Distinct && len(call.Args) == 0 &&
		strings.EqualFold(call.Name.Name, "count")
}
