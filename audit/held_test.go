package audit

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/verify"
)

func TestSubjectsHeld(t *testing.T) {
	lohi, _ := crawler.Builtin(crawler.Default)
	google, _ := crawler.Builtin("googlebot")
	id := &verify.Identity{
		Profiles:  []*crawler.Profile{lohi, google},
		Lists:     []*verify.IPList{verify.BuiltinList(lohi), verify.BuiltinList(google)},
		Verifiers: []*verify.Verifier{{}, {}},
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	since := at.Add(-24 * time.Hour)
	pause := 3 * time.Second
	s := SubjectsHeld(id, Holding{
		Since: since, Overrides: conduct.Overrides{MinPause: &pause}, MaxViolations: 7,
		OptOuts: map[string]conduct.OptOuts{"googlebot": {"example.com": at}}, OptOutGrace: time.Hour,
	})
	if len(s) != 2 || s[0].Profile != lohi || s[1].Profile != google || !s[0].Audit.Since.Equal(since) {
		t.Fatalf("subjects %+v", s)
	}
	for _, sub := range s {
		if sub.Conduct.MaxViolations != 7 || sub.Conduct.MinPause != pause {
			t.Errorf("%s: held to %+v", sub.Profile.Name, sub.Conduct)
		}
	}
	if s[0].Conduct.OptedOut != nil {
		t.Error("lohisoftbot holds an opt-out it was not given")
	}
	if got, ok := s[1].Conduct.OptedOut("example.com"); !ok || !got.Equal(at) || s[1].Conduct.OptOutGrace != time.Hour {
		t.Errorf("googlebot's opt-out of example.com: %v, %v, grace %s", got, ok, s[1].Conduct.OptOutGrace)
	}
}

func TestInputsOf(t *testing.T) {
	opened := map[string]bool{}
	open := func(name string) func(context.Context) (io.ReadCloser, int64, error) {
		return func(context.Context) (io.ReadCloser, int64, error) { opened[name] = true; return nil, -1, nil }
	}
	files := []string{"a/access.log", "-"}
	in := InputsOf(files, Sites{}.Choose(files), open)
	if len(in) != 2 || in[0].Name != "a/access.log" || in[0].Site != "access.log" || in[1].Site != "stdin" {
		t.Fatalf("inputs %+v", in)
	}
	in[1].Open(context.Background())
	if !opened["-"] || opened["a/access.log"] {
		t.Errorf("opened %v, want only -", opened)
	}
}
