package render

import (
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestPick(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		want     string // the format picked, or the error
	}{
		{"", true, "table"},
		{"", false, "json"},
		{"csv", true, "csv"},
		{"html", false, "html"},
		{"html", true, "--format html writes a page for a browser, not for a terminal"},
		{"xml", false, `unknown --format "xml": use table, json, yaml, csv, markdown or html`},
	}
	for _, tc := range tests {
		r, err := Pick(tc.name, tc.terminal)
		got := ""
		if err != nil {
			got = err.Error()
			if fail.KindOf(err) != fail.Usage {
				t.Errorf("Pick(%q, %v): error %v is not a usage error", tc.name, tc.terminal, err)
			}
		} else {
			got = r.Name()
		}
		if got != tc.want {
			t.Errorf("Pick(%q, %v) = %q; want %q", tc.name, tc.terminal, got, tc.want)
		}
	}
	if _, err := Pick("html", true); fail.HintOf(err) == "" {
		t.Errorf("html to a terminal: no hint says what to do")
	}
}

func TestPickDocument(t *testing.T) {
	if r, err := PickDocument("", true); err != nil || r.Name() != "table" {
		t.Errorf("PickDocument(\"\", terminal) = %v, %v; want table", r, err)
	}
	if r, err := PickDocument("yaml", false); err != nil || r.Name() != "yaml" {
		t.Errorf("PickDocument(yaml) = %v, %v; want yaml", r, err)
	}
	_, err := PickDocument("html", false)
	if err == nil || err.Error() != `unknown --format "html": use table, json, yaml, csv or markdown` {
		t.Errorf("PickDocument(html) = %v; want the formats that write documents named", err)
	}
}

func TestShowsWarnings(t *testing.T) {
	for _, name := range Names() {
		r, _ := Lookup(name)
		want := name == "table" || name == "markdown"
		if got := ShowsWarnings(r, true); got != want {
			t.Errorf("ShowsWarnings(%s, terminal) = %v; want %v", name, got, want)
		}
		if ShowsWarnings(r, false) {
			t.Errorf("ShowsWarnings(%s, not a terminal) = true; want false", name)
		}
	}
}

func TestTimelines(t *testing.T) {
	for _, name := range Names() {
		r, _ := Lookup(name)
		if got := Timelines(r); (got != nil) != (name == "html") {
			t.Errorf("Timelines(%s) = %v; want a set for html only", name, got)
		}
	}
}
