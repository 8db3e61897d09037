package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

// TestWriteJSONStream: the streamed JSON is byte for byte what
// json.MarshalIndent gives, for reports and other values.
func TestWriteJSONStream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sample verify.Report
	if err := json.Unmarshal(data, &sample); err != nil {
		t.Fatal(err)
	}
	type inner struct {
		A []string `json:"a,omitempty"`
		B string   `json:"b"`
	}
	values := map[string]any{
		"sample report": &sample,
		"empty report":  &verify.Report{},
		"empty slices":  &verify.Report{IPs: []verify.IPReport{}, Warnings: []string{}},
		"omitempty":     struct{ X inner }{inner{B: "x"}},
		"no fields":     struct{}{},
		"not a struct":  []int{1, 2},
		"time":          time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"html":          map[string]string{"a": "<b>&"},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := writeJSONStream(&got, v); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
			}
		})
	}
}
