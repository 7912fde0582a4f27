package localportal

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	load  func(ctx context.Context) error

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
	s.addPending(schema, true, func(ctx context.Context) error {
		return s.AddGenerated(ctx, schema, n, gen)
	})
	return nil
}

// addPending registers a dataset loaded by load on first use (or earlier,
// by start).
func (s *Emulator) addPending(schema Schema, exact bool, load func(ctx context.Context) error) *pendingDataset {
	p := &pendingDataset{schema: schema, exact: exact, load: load, done: make(chan struct{})}
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
