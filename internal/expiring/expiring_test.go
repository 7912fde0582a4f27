package expiring

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

func TestExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New[string, int](2, time.Minute)
		c.Add("a", 1)
		time.Sleep(59 * time.Second)
		if v, ok := c.Get("a"); !ok || v != 1 {
			t.Fatalf("Get(a) after 59s = %d, %v; want 1, true", v, ok)
		}
		time.Sleep(time.Second)
		if v, ok := c.Peek("a"); ok {
			t.Fatalf("Peek(a) after 60s = %d, true; want it expired", v)
		}
		if n := c.Len(); n != 0 {
			t.Errorf("Len() after reading an expired entry = %d; want 0", n)
		}
	})
}

func TestBoundAndRecency(t *testing.T) {
	c := New[string, int](2, time.Hour)
	c.Add("a", 1)
	c.Add("b", 2)
	c.Get("a") // b is now the least recently used
	c.Add("c", 3)
	if _, ok := c.Get("b"); ok {
		t.Errorf("Get(b) after adding a third entry to a 2-entry LRU: found; want b dropped")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("Get(%s) = not found; want kept", k)
		}
	}
	c.Remove("a")
	if n := c.Len(); n != 1 {
		t.Errorf("Len() after Remove = %d; want 1", n)
	}
}

// A cache starts no goroutine: a server that makes one per portal it is
// asked about must not keep a goroutine for each one it dropped.
func TestNoGoroutinePerCache(t *testing.T) {
	before := runtime.NumGoroutine()
	caches := make([]*LRU[string, int], 500)
	for i := range caches {
		caches[i] = New[string, int](8, time.Minute)
		caches[i].Add("k", i)
	}
	if after := runtime.NumGoroutine(); after > before+10 {
		t.Errorf("goroutines after making 500 caches: %d, before %d; want no goroutine per cache", after, before)
	}
}
