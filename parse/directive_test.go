package parse

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// lastDirectiveOracle finds the last #Fields: line of b[:end] reading
// forwards, when b starts with '#'.
func lastDirectiveOracle(b []byte, end int) []byte {
	if end == 0 || b[0] != '#' {
		return nil
	}
	var last []byte
	for _, line := range bytes.Split(b[:end], []byte("\n")) {
		if IsFieldsDirective(line) && len(line) <= maxDirective {
			last = bytes.TrimRight(line, "\r")
		}
	}
	return last
}

// TestLastFieldsDirective compares the backward search with a forward
// one on random W3C-like files, at read sizes that put directives across
// the reads' edges.
func TestLastFieldsDirective(t *testing.T) {
	defer func(s int) { directiveStep = s }(directiveStep)
	pieces := []string{"#Software: Microsoft Internet Information Services 10.0", "#Version: 1.0", "#Date: 2026-12-01 06:25:01",
		"#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent)", "#fields: date time c-ip cs(User-Agent)",
		"#Fields: date time c-ip cs-method cs-uri-stem sc-status\r",
		"2026-12-01 06:25:01 203.0.113.10 GET / 200 LohiSoftBot/1.0", "2026-12-01 06:25:01 203.0.113.10 GET /#Fields: 200 x",
		" #Fields: no", "", "#Fields:x"}
	rng := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for n := range 3000 {
		var b strings.Builder
		for k := rng.IntN(12); k >= 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(8) > 0 {
				b.WriteByte('\n')
			}
		}
		data := []byte(b.String())
		if len(data) == 0 {
			continue
		}
		end := rng.IntN(len(data) + 1)
		directiveStep = 1 + rng.IntN(40)
		got, err := LastFieldsDirective(bytes.NewReader(data), int64(end))
		if err != nil {
			t.Fatal(err)
		}
		if want := lastDirectiveOracle(data, end); !bytes.Equal(got, want) {
			t.Fatalf("case %d, step %d, end %d of %q: got %q, want %q", n, directiveStep, end, data, got, want)
		}
		if got != nil {
			checked++
		}
	}
	if checked < 300 {
		t.Errorf("only %d cases found a directive", checked)
	}
	// A log of another kind is not read past its first byte.
	r := &countingReaderAt{b: []byte(strings.Repeat("203.0.113.10 - - [01/Dec/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 1\n", 1000))}
	if got, _ := LastFieldsDirective(r, int64(len(r.b))); got != nil || r.n > 1 {
		t.Errorf("combined log: %q, read %d bytes", got, r.n)
	}
}

type countingReaderAt struct {
	b []byte
	n int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := bytes.NewReader(c.b).ReadAt(p, off)
	c.n += n
	return n, err
}
