package audit

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/lohisoft/lohibot-audit/conduct"
)

// TestInternerReusedMemory: the interner's memory of where a string lay
// is a hint only. The same text from the same memory, from other memory,
// and other text written over memory given before, each get the number
// of their text.
func TestInternerReusedMemory(t *testing.T) {
	var in interner
	buf := []byte("alpha.example")
	s := unsafe.String(&buf[0], len(buf))
	a := in.id(s)
	if b := in.id("beta.example"); b == a {
		t.Fatalf("two texts, one number %d", a)
	}
	if got := in.id(s); got != a {
		t.Fatalf("the same memory again: %d, want %d", got, a)
	}
	copy(buf, "gamma.example")
	g := in.id(s)
	if g == a || in.name(g) != "gamma.example" {
		t.Fatalf("other text in the same memory: %d %q (alpha is %d)", g, in.name(g), a)
	}
	copy(buf, "alpha.example")
	in.id("beta.example")
	if got := in.id(s); got != a {
		t.Fatalf("alpha written back: %d, want %d", got, a)
	}
	if got := in.id(strings.Clone("gamma.example")); got != g {
		t.Fatalf("gamma from other memory: %d, want %d", got, g)
	}
	if in.name(a) != "alpha.example" || in.count() != 3 {
		t.Fatalf("names: %q, %d strings", in.name(a), in.count())
	}
}

// TestSurveyAtOnce: the conduct checks' first passes split over the
// cores by input give the report they give one input after another; and
// they are not split when a file's hits are in two inputs.
func TestSurveyAtOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	build := func(span bool) *Audit {
		a := &Audit{}
		for f, file := range []string{"a.log", "b.log", "c.log", "d.log"} {
			if span && f == 3 {
				file = "a.log" // the first input's file again
			}
			for i := range 40 {
				at := t0.Add(time.Duration(f*7+i*13) * time.Second)
				if f == 1 {
					at = at.Add(1500 * time.Millisecond) // milliseconds in one file
				}
				rec := auditHitAt(file, int64(i+1), at, fmt.Sprintf("/p%d", i%9))
				if f == 1 {
					rec.Resolution = time.Millisecond
				}
				rec.Host = []string{"s.example", "t.example"}[(f+i)%2]
				a.Add(rec)
			}
			a.AddInput(InputReport{File: file}, nil)
		}
		return a
	}
	cfg := conduct.Config{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: 5 * time.Second}
	a := build(false)
	if a.surveyGroups() == nil {
		t.Fatal("four inputs of their own files: the passes are not split")
	}
	split := a.Report(genuineResults, cfg)
	b := build(false)
	b.filesSpan = true // as if not splittable: one input after another
	if b.surveyGroups() != nil {
		t.Fatal("split with a file in two inputs")
	}
	one := b.Report(genuineResults, cfg)
	if len(one.Violations) == 0 {
		t.Fatal("no violations: the test checks nothing")
	}
	if !reflect.DeepEqual(split.Violations, one.Violations) || !reflect.DeepEqual(split.Sites, one.Sites) || !reflect.DeepEqual(split.Warnings, one.Warnings) {
		t.Fatalf("split passes:\n%+v\n%+v\none after another:\n%+v\n%+v", split.Violations, split.Sites, one.Violations, one.Sites)
	}
	if c := build(true); c.surveyGroups() != nil {
		t.Fatal("a.log in the first and the last input: the passes were split")
	}
}
