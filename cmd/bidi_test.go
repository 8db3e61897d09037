package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"gopkg.in/yaml.v3"
)

// bidiControls are the runes that reorder what a terminal shows: the
// Arabic letter mark, the left-to-right and right-to-left marks, the
// embeddings and overrides, and the isolates.
var bidiControls = []rune{0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069}

// invisibleControls are other format characters a reader would not see:
// zero-width space and joiners, word joiner, byte order mark, a tag
// character and a variation selector.
var invisibleControls = []rune{0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0xe0041, 0xfe0f}

// TestLogsBidiToTerminal: a log line carrying every bidi control and other
// invisible format characters, in its path and User-Agent, reaches a
// terminal escaped in every format, and so does a malformed line; JSON and YAML read back as the same
// report as their copy for a pipe, which keeps the runes.
func TestLogsBidiToTerminal(t *testing.T) {
	var hostile strings.Builder
	for _, r := range append(append([]rune{}, bidiControls...), invisibleControls...) {
		fmt.Fprintf(&hostile, "%c", r)
	}
	log := testutil.TempFile(t, "access.log",
		`203.0.113.7 - - [01/Dec/2026:06:03:42 +0100] "GET /a`+hostile.String()+`b HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0 `+hostile.String()+`evil"`+"\n"+
			"not a log line "+hostile.String()+"evil\n")
	run := func(format string, tty bool) string {
		var out, errb bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errb, StdoutTTY: tty, Now: func() time.Time { return fixedNow },
			Getenv: func(k string) string {
				switch k {
				case "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME":
					return t.TempDir()
				case "COLUMNS":
					return "400"
				}
				return ""
			}}
		code := Run(context.Background(), env, []string{"logs", "--offline", "--no-cache", "--format", format, "--log-format", "combined", log})
		if code != 0 {
			t.Fatalf("logs --format %s: exit %d: %s", format, code, errb.String())
		}
		for _, r := range append(append([]rune{}, bidiControls...), invisibleControls...) {
			if strings.ContainsRune(errb.String(), r) {
				t.Errorf("logs --format %s: %U reaches stderr raw:\n%s", format, r, errb.String())
			}
		}
		return out.String()
	}
	for _, format := range []string{"json", "yaml", "csv", "table", "markdown"} {
		tty := run(format, true)
		for _, r := range append(append([]rune{}, bidiControls...), invisibleControls...) {
			if strings.ContainsRune(tty, r) {
				t.Errorf("%s to a terminal carries %U raw:\n%s", format, r, tty)
			}
		}
		if !strings.Contains(tty, `\u200f`) {
			t.Errorf("%s to a terminal does not show the right-to-left mark as an escape:\n%s", format, tty)
		}
		switch format {
		case "json", "yaml":
			pipe := run(format, false)
			if !strings.ContainsRune(pipe, 0x202e) {
				t.Errorf("%s to a pipe lost the log's runes:\n%s", format, pipe)
			}
			var fromPipe, fromTTY any
			unmarshal := json.Unmarshal
			if format == "yaml" {
				unmarshal = yaml.Unmarshal
			}
			if err := unmarshal([]byte(pipe), &fromPipe); err != nil {
				t.Fatalf("%s to a pipe: %v", format, err)
			}
			if err := unmarshal([]byte(tty), &fromTTY); err != nil {
				t.Fatalf("%s to a terminal: %v\n%s", format, err, tty)
			}
			if fmt.Sprint(fromPipe) != fmt.Sprint(fromTTY) {
				t.Errorf("%s: the terminal's copy reads back differently:\n%s", format, tty)
			}
		}
	}
}
