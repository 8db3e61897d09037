package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// optoutRun runs optout in memory with the environment vars.
func optoutRun(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }, Now: func() time.Time { return fixedNow }}
	code := Run(context.Background(), env, append([]string{"optout"}, args...))
	return code, out.String(), errb.String()
}

// readLetter reads an e-mail back with net/mail and returns its header and
// decoded text.
func readLetter(t *testing.T, raw string) (mail.Header, string) {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail cannot read the e-mail: %v\n%s", err, raw)
	}
	var body io.Reader = m.Body
	if m.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return m.Header, strings.ReplaceAll(string(b), "\r\n", "\n")
}

func TestOptoutWritesTheLetter(t *testing.T) {
	code, out, stderr := optoutRun(t, nil, "Example.com", "bücher.example", "--from", "Jörg Müller <webmaster@example.com>")
	if code != fail.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	h, body := readLetter(t, out)
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != "message@lohisoft.com" {
		t.Errorf("To %v, %v; want LohiSoftBot's contact alone", to, err)
	}
	from, err := mail.ParseAddress(h.Get("From"))
	if err != nil || from.Name != "Jörg Müller" || from.Address != "webmaster@example.com" {
		t.Errorf("From %+v, %v", from, err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != "Opt-out request: please exclude example.com and 1 more domain from LohiSoftBot's crawl" {
		t.Errorf("Subject %q, %v", subject, err)
	}
	if d, err := h.Date(); err != nil || !d.Equal(fixedNow) {
		t.Errorf("Date %v, %v; want %v", d, err, fixedNow)
	}
	for _, want := range []string{"  example.com\n  bücher.example (xn--bcher-kva.example)\n", "2026-12-02T12:00:00Z", "crawl list"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}

func TestOptoutSender(t *testing.T) {
	for _, tc := range []struct {
		name  string
		vars  map[string]string
		args  []string
		from  string
		warns string
	}{
		{"--from", map[string]string{"EMAIL": "ignored@example.net"}, []string{"--from", "ops@example.org"}, "ops@example.org", ""},
		{"$EMAIL", map[string]string{"EMAIL": "Ops <ops@example.net>"}, nil, "ops@example.net", "($EMAIL)"},
		{"webmaster", nil, nil, "webmaster@example.com", "webmaster@ the first domain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := optoutRun(t, tc.vars, append([]string{"example.com"}, tc.args...)...)
			if code != fail.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			h, _ := readLetter(t, out)
			if a, err := mail.ParseAddress(h.Get("From")); err != nil || a.Address != tc.from {
				t.Errorf("From %q, want %s", h.Get("From"), tc.from)
			}
			if tc.warns == "" && stderr != "" || tc.warns != "" && !strings.Contains(stderr, tc.warns) {
				t.Errorf("stderr %q, want it to say %q", stderr, tc.warns)
			}
		})
	}
}

func TestOptoutRefusesInjection(t *testing.T) {
	for _, args := range [][]string{
		{"example.com\r\nBcc: victim@example.net"},
		{"example.com", "--from", "webmaster@example.com\nBcc: victim@example.net"},
		{"example.com", "--from", "a@example.com, b@example.net"},
		{"https://example.com/"},
		{"192.0.2.1"},
		{},
	} {
		code, out, stderr := optoutRun(t, nil, args...)
		if code != fail.ExitUsage || out != "" || !strings.HasPrefix(stderr, "lohibot-audit: error: ") {
			t.Errorf("optout %q: exit %d, stdout %q, stderr %q; want exit 2 and nothing written", args, code, out, stderr)
		}
		if strings.Count(stderr, "\n") > 2 {
			t.Errorf("optout %q: stderr of more than an error and a hint: %q", args, stderr)
		}
	}
}

func TestOptoutProfileContact(t *testing.T) {
	dir := t.TempDir()
	with := filepath.Join(dir, "with.yaml")
	without := filepath.Join(dir, "without.yaml")
	os.WriteFile(with, []byte("name: examplebot\ntokens: [ExampleBot]\ncontact: crawler@example.net\nfcrdns: [crawl.example.net]\n"), 0o644)
	os.WriteFile(without, []byte("name: examplebot\ntokens: [ExampleBot]\nfcrdns: [crawl.example.net]\n"), 0o644)
	code, out, stderr := optoutRun(t, nil, "example.com", "--crawler", with)
	if code != fail.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, body := readLetter(t, out)
	if !strings.Contains(h.Get("To"), "crawler@example.net") || !strings.Contains(strings.Join(strings.Fields(body), " "), "exclusion from ExampleBot's crawl") {
		t.Errorf("To %q, body:\n%s", h.Get("To"), body)
	}
	code, out, stderr = optoutRun(t, nil, "example.com", "--crawler", without)
	if code != fail.ExitUsage || out != "" || !strings.Contains(stderr, "no contact") {
		t.Errorf("a profile without contact: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestOptoutOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "optout.eml")
	code, out, stderr := optoutRun(t, nil, "example.com", "-o", path)
	if code != fail.ExitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := readLetter(t, string(data)); !strings.Contains(h.Get("Subject"), "example.com") {
		t.Errorf("the file holds %q", data)
	}
	code, _, stderr = optoutRun(t, nil, "example.com", "-o", filepath.Join(path, "no", "such"))
	if code != fail.ExitIncomplete || !strings.Contains(stderr, "cannot write the e-mail") {
		t.Errorf("unwritable -o: exit %d, stderr %q", code, stderr)
	}
}

// optedOutLog has the genuine crawler on example.com before, within and
// after the 48h grace of an opt-out at 2026-12-01T09:00:00Z, and on
// other.example, which did not opt out.
const optedOutLog = `example.com:443 79.139.58.98 - - [01/Dec/2026:08:00:00 +0000] "GET /a HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
example.com:443 79.139.58.98 - - [02/Dec/2026:09:00:00 +0000] "GET /b HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
example.com:443 79.139.58.98 - - [03/Dec/2026:09:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
example.com:443 79.139.58.98 - - [03/Dec/2026:09:00:01 +0000] "GET /c HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
example.com:443 79.139.58.98 - - [03/Dec/2026:10:00:00 +0000] "GET /d HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
other.example:443 79.139.58.98 - - [03/Dec/2026:10:00:00 +0000] "GET /e HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
`

func TestLogsOptedOut(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	os.WriteFile(logPath, []byte(optedOutLog), 0o644)
	config := filepath.Join(dir, "config.yaml")
	os.WriteFile(config, []byte("opted_out:\n  - example.com=2026-12-01T09:00:00Z\n"), 0o644)
	for name, args := range map[string][]string{
		"flag":             {"--opted-out", "example.com=2026-12-01T09:00:00Z"},
		"crawler named":    {"--opted-out", "lohisoftbot:EXAMPLE.com=2026-12-01T09:00:00Z"},
		"config opted_out": {"--config", config},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runInMemory(t, "", append([]string{"logs", "--offline", "--format", "json", logPath}, args...)...)
			if code != fail.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep audit.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range rep.Violations {
				if v.Kind == "opt-out" {
					got = append(got, v.Site+v.Path)
					if !strings.Contains(v.Detail, "left out of the crawl at 2026-12-01T09:00:00Z") {
						t.Errorf("detail %q", v.Detail)
					}
				}
			}
			if strings.Join(got, " ") != "example.com/c example.com/d" {
				t.Errorf("opt-out violations %v, want the pages past the grace alone", got)
			}
		})
	}
	// The grace can be changed.
	code, out, _ := runInMemory(t, "", "logs", "--offline", "--format", "json", logPath, "--opted-out", "example.com=2026-12-01T09:00:00Z", "--opt-out-grace", "0s")
	if code != fail.ExitOK || strings.Count(out, `"kind": "opt-out"`) != 3 {
		t.Errorf("--opt-out-grace 0s: exit %d, %d opt-out violations, want 3", code, strings.Count(out, `"kind": "opt-out"`))
	}
	for _, args := range [][]string{
		{"--opted-out", "example.com"},
		{"--opted-out", "example.com=yesterday-ish"},
		{"--opted-out", "googlebot:example.com=2026-12-01"},
		{"--opted-out", "example.com=2026-12-01", "--crawler", "lohisoftbot", "--crawler", "googlebot"},
		{"--opted-out", "https://example.com/=2026-12-01"},
		{"--opt-out-grace", "-1h"},
	} {
		code, out, stderr := runInMemory(t, "", append([]string{"logs", "--offline", "--format", "json", logPath}, args...)...)
		if code != fail.ExitUsage || out != "" || !strings.Contains(stderr, "opt") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// On a terminal, optout says how to audit the promise it asks for.
func TestOptoutSaysTheAuditFlags(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, StderrTTY: true, Now: func() time.Time { return fixedNow }}
	if code := Run(context.Background(), env, []string{"optout", "example.com", "bücher.example"}); code != fail.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "--opted-out example.com=2026-12-02T12:00:00Z --opted-out xn--bcher-kva.example=2026-12-02T12:00:00Z"
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q lacks %q", errb.String(), want)
	}
}
