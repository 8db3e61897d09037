package cmd

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if code != ExitOK || stderr != "" {
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
			if code != ExitOK {
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
		if code != ExitUsage || out != "" || !strings.HasPrefix(stderr, "lohibot-audit: error: ") {
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
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, body := readLetter(t, out)
	if !strings.Contains(h.Get("To"), "crawler@example.net") || !strings.Contains(strings.Join(strings.Fields(body), " "), "exclusion from ExampleBot's crawl") {
		t.Errorf("To %q, body:\n%s", h.Get("To"), body)
	}
	code, out, stderr = optoutRun(t, nil, "example.com", "--crawler", without)
	if code != ExitUsage || out != "" || !strings.Contains(stderr, "no contact") {
		t.Errorf("a profile without contact: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestOptoutOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "optout.eml")
	code, out, stderr := optoutRun(t, nil, "example.com", "-o", path)
	if code != ExitOK || out != "" {
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
	if code != ExitIncomplete || !strings.Contains(stderr, "cannot write the e-mail") {
		t.Errorf("unwritable -o: exit %d, stderr %q", code, stderr)
	}
}
