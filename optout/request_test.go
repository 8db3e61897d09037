package optout

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestRequestCompose: a request's values are checked in the order the
// command line gives them, each refusal a usage error naming what to
// give; a good one is the letter, its message and how its sender was
// chosen.
func TestRequestCompose(t *testing.T) {
	date := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	ok := Request{Name: "examplebot", Title: "ExampleBot", Contact: "Crawl Team <crawl@example.org>",
		Domains: []string{"Bücher.example", "example.com"}, Email: "web@example.com", Date: date}
	l, msg, how, err := ok.Compose()
	if err != nil {
		t.Fatal(err)
	}
	if l.To.Address != "crawl@example.org" || l.From.Address != "web@example.com" || how != "$EMAIL" || l.Crawler != "ExampleBot" ||
		strings.Join(l.Domains, " ") != "xn--bcher-kva.example example.com" || !l.Date.Equal(date) {
		t.Errorf("letter %+v, how %q", l, how)
	}
	if !bytes.Contains(msg, []byte("To: \"Crawl Team\" <crawl@example.org>\r\n")) || !bytes.Contains(msg, []byte("xn--bcher-kva.example")) {
		t.Errorf("message:\n%s", msg)
	}
	given := ok
	given.FromGiven, given.From = true, "ops@example.net"
	if l, _, how, err := given.Compose(); err != nil || l.From.Address != "ops@example.net" || how != "" {
		t.Errorf("--from: %v, %q, %v", l, how, err)
	}

	for _, tc := range []struct {
		name   string
		change func(*Request)
		want   string
	}{
		{"no contact", func(r *Request) { r.Contact = "" }, "crawler examplebot has no contact address to write to"},
		{"bad contact", func(r *Request) { r.Contact = "crawl@" }, "crawler examplebot: contact: "},
		{"bad domain", func(r *Request) { r.Domains = []string{"example.com", "https://example.net/"} }, "https://example.net/"},
		{"no domain", func(r *Request) { r.Domains = nil }, "no domain to exclude"},
		{"bad --from", func(r *Request) { r.FromGiven, r.From = true, "a@b\r\nBcc: c@d" }, "--from: "},
		{"bad $EMAIL", func(r *Request) { r.Email = "not an address" }, "$EMAIL: "},
	} {
		r := ok
		tc.change(&r)
		l, msg, _, err := r.Compose()
		if err == nil || fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), tc.want) || l != nil || msg != nil {
			t.Errorf("%s: %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
	r := ok
	r.Contact = ""
	if _, _, _, err := r.Compose(); !strings.Contains(fail.HintOf(err), "contact: ADDRESS") {
		t.Errorf("no contact: hint %q", fail.HintOf(err))
	}
}

// TestWriteFile: the e-mail is in place once written; a file that cannot
// be written is an output not written, and a cancelled write leaves none.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "optout.eml")
	if err := WriteFile(context.Background(), path, []byte("To: x\r\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "To: x\r\n" {
		t.Errorf("written %q, %v", b, err)
	}
	missing := filepath.Join(dir, "no", "optout.eml")
	err := WriteFile(context.Background(), missing, []byte("To: x\r\n"))
	if fail.KindOf(err) != fail.Unwritten || err.Error() != "cannot write the e-mail to "+missing+": no such file or directory" || fail.HintOf(err) == "" {
		t.Errorf("a missing directory: %v (kind %v, hint %q)", err, fail.KindOf(err), fail.HintOf(err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled := filepath.Join(dir, "cancelled.eml")
	if err := WriteFile(ctx, cancelled, []byte("To: x\r\n")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left: %v, want the e-mail only", entries)
	}
}
