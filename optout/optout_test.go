package optout

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"
)

func TestDomain(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"example.com", "example.com"},
		{"Example.COM.", "example.com"},
		{"  blog.example.org ", "blog.example.org"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"пример.бг", "xn--e1afmkfd.xn--90ae"},
		{"ＥＸＡＭＰＬＥ.com", "example.com"}, // full-width letters map for lookup
	} {
		got, err := Domain(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Domain(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"", " ", "localhost", "example.com\r\nBcc: victim@example.net", "example.com\n", "exa\x00mple.com",
		"https://example.com/", "example.com/path", "user@example.com", "*.example.com",
		"192.0.2.1", "[2001:db8::1]", "exa mple.com", "-bad-.example", "a..example",
		strings.Repeat("a", 64) + ".example", strings.Repeat("abcdefghi.", 26) + "example",
		"ex_ample.com", "\xff.example",
	} {
		if got, err := Domain(in); !errors.Is(err, ErrDomain) {
			t.Errorf("Domain(%q) = %q, %v; want ErrDomain", in, got, err)
		}
	}
}

func TestDisplay(t *testing.T) {
	if got := Display("xn--bcher-kva.example"); got != "bücher.example" {
		t.Errorf("Display = %q", got)
	}
	if got := Display("example.com"); got != "example.com" {
		t.Errorf("Display = %q", got)
	}
}

func TestAddress(t *testing.T) {
	for _, tc := range []struct{ in, name, addr string }{
		{"webmaster@example.com", "", "webmaster@example.com"},
		{"Jörg Müller <webmaster@bücher.example>", "Jörg Müller", "webmaster@xn--bcher-kva.example"},
		{`"Ops, Team" <ops@example.com>`, "Ops, Team", "ops@example.com"},
		{"=?utf-8?q?J=C3=B6rg?= <j@example.com>", "Jörg", "j@example.com"},
	} {
		a, err := Address(tc.in)
		if err != nil || a.Name != tc.name || a.Address != tc.addr {
			t.Errorf("Address(%q) = %+v, %v; want %q <%s>", tc.in, a, err, tc.name, tc.addr)
		}
	}
	for _, in := range []string{
		"", "not an address", "a@example.com, b@example.com", "Group: a@example.com, b@example.com;",
		"webmaster@example.com\r\nBcc: x@example.net", "Eve\n <e@example.com>",
		"=?utf-8?q?Eve=0D=0ABcc:_x@example.net?= <e@example.com>",
		"jörg@example.com", "root@localhost", "a@192.0.2.1",
	} {
		if a, err := Address(in); !errors.Is(err, ErrAddress) {
			t.Errorf("Address(%q) = %+v, %v; want ErrAddress", in, a, err)
		}
	}
}

// parsed is a letter read back with net/mail and mime.
type parsed struct {
	msg      *mail.Message
	from, to *mail.Address
	subject  string
	date     time.Time
	body     string
}

func readBack(t *testing.T, raw []byte) parsed {
	t.Helper()
	for i, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !bytes.HasSuffix(line, []byte("\r\n")) {
			t.Fatalf("line %d does not end in CRLF: %q", i+1, line)
		}
		if len(line) > 1000 {
			t.Fatalf("line %d is %d bytes long", i+1, len(line))
		}
		if bytes.ContainsFunc(bytes.TrimSuffix(line, []byte("\r\n")), func(r rune) bool { return r < ' ' && r != '\t' }) {
			t.Fatalf("line %d holds a control character: %q", i+1, line)
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail cannot read the letter: %v\n%s", err, raw)
	}
	var p parsed
	p.msg = m
	if p.from, err = mail.ParseAddress(m.Header.Get("From")); err != nil {
		t.Fatalf("From: %v", err)
	}
	to, err := m.Header.AddressList("To")
	if err != nil || len(to) != 1 {
		t.Fatalf("To: %v, %v", to, err)
	}
	p.to = to[0]
	dec := new(mime.WordDecoder)
	if p.subject, err = dec.DecodeHeader(m.Header.Get("Subject")); err != nil {
		t.Fatalf("Subject: %v", err)
	}
	if p.date, err = m.Header.Date(); err != nil {
		t.Fatalf("Date: %v", err)
	}
	if v := m.Header.Get("MIME-Version"); v != "1.0" {
		t.Errorf("MIME-Version %q", v)
	}
	ct, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || ct != "text/plain" || !strings.EqualFold(params["charset"], "utf-8") {
		t.Errorf("Content-Type %q: %s %v %v", m.Header.Get("Content-Type"), ct, params, err)
	}
	id := m.Header.Get("Message-ID")
	if !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, ">") || !strings.Contains(id, "@") {
		t.Errorf("Message-ID %q", id)
	}
	var body io.Reader = m.Body
	switch cte := m.Header.Get("Content-Transfer-Encoding"); cte {
	case "7bit":
	case "quoted-printable":
		body = quotedprintable.NewReader(m.Body)
	default:
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	p.body = strings.ReplaceAll(string(b), "\r\n", "\n")
	return p
}

func mustAddress(t *testing.T, s string) *mail.Address {
	t.Helper()
	a, err := Address(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestLetterReadsBack(t *testing.T) {
	date := time.Date(2026, 12, 4, 17, 30, 5, 0, time.FixedZone("EET", 2*3600))
	for _, tc := range []struct {
		name      string
		from      string
		domains   []string
		subject   string
		lines     []string
		qp        bool
		wantCount int
	}{
		{
			name:    "one ascii domain",
			from:    "webmaster@example.com",
			domains: []string{"example.com"},
			subject: "Opt-out request: please exclude example.com from LohiSoftBot's crawl",
			lines:   []string{"  example.com\n", "ask for its immediate exclusion from", "2026-12-04T15:30:05Z"},
		},
		{
			name:    "unicode name and domains",
			from:    "Jörg Müller <webmaster@bücher.example>",
			domains: []string{"bücher.example", "example.com", "xn--bcher-kva.example", "пример.бг"},
			subject: "Opt-out request: please exclude bücher.example and 2 more domains from LohiSoftBot's crawl",
			lines:   []string{"  bücher.example (xn--bcher-kva.example)\n  example.com\n  пример.бг (xn--e1afmkfd.xn--90ae)\n", "Jörg Müller\nwebmaster@xn--bcher-kva.example\n", "please remove them from the crawl list"},
			qp:      true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Letter{
				From: mustAddress(t, tc.from), To: mustAddress(t, "message@lohisoft.com"),
				Crawler: "LohiSoftBot", Domains: tc.domains, Date: date,
			}
			raw, err := l.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			p := readBack(t, raw)
			if p.to.Address != "message@lohisoft.com" || p.from.Address != l.From.Address || p.from.Name != l.From.Name {
				t.Errorf("from %+v to %+v", p.from, p.to)
			}
			if p.subject != tc.subject {
				t.Errorf("subject %q\nwant    %q", p.subject, tc.subject)
			}
			if !p.date.Equal(date) {
				t.Errorf("date %v, want %v", p.date, date)
			}
			flat := strings.Join(strings.Fields(p.body), " ")
			for _, want := range tc.lines {
				if !strings.Contains(p.body, want) && (strings.Contains(want, "\n") || !strings.Contains(flat, want)) {
					t.Errorf("body lacks %q:\n%s", want, p.body)
				}
			}
			if got := p.msg.Header.Get("Content-Transfer-Encoding") == "quoted-printable"; got != tc.qp {
				t.Errorf("quoted-printable %v, want %v", got, tc.qp)
			}
			if !strings.HasSuffix(p.msg.Header.Get("Message-ID"), "@"+strings.SplitN(l.From.Address, "@", 2)[1]+">") {
				t.Errorf("Message-ID %q not at the sender's domain", p.msg.Header.Get("Message-ID"))
			}
			for _, line := range strings.Split(p.body, "\n") {
				if n := len([]rune(line)); n > 76 {
					t.Errorf("body line of %d characters: %q", n, line)
				}
			}
		})
	}
}

func TestLetterFoldsLongHeaders(t *testing.T) {
	long := strings.Repeat("ü", 40) + ".example"
	l := &Letter{
		From: mustAddress(t, "webmaster@example.com"), To: mustAddress(t, "message@lohisoft.com"),
		Crawler: "LohiSoftBot", Domains: []string{long, "example.com"}, Date: time.Unix(0, 0),
	}
	raw, err := l.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		if len(line) > 78 {
			t.Errorf("header line of %d bytes: %q", len(line), line)
		}
	}
	p := readBack(t, raw)
	if want := "Opt-out request: please exclude " + long + " and 1 more domain from LohiSoftBot's crawl"; p.subject != want {
		t.Errorf("subject %q", p.subject)
	}
}

func TestLetterRefuses(t *testing.T) {
	good := func() *Letter {
		return &Letter{
			From: &mail.Address{Address: "webmaster@example.com"}, To: &mail.Address{Address: "message@lohisoft.com"},
			Crawler: "LohiSoftBot", Domains: []string{"example.com"}, Date: time.Unix(1e9, 0),
		}
	}
	if _, err := good().Bytes(); err != nil {
		t.Fatalf("good letter: %v", err)
	}
	for name, mod := range map[string]func(*Letter){
		"no domains":         func(l *Letter) { l.Domains = nil },
		"injected domain":    func(l *Letter) { l.Domains = []string{"example.com\r\nBcc: x@example.net"} },
		"injected name":      func(l *Letter) { l.From.Name = "Eve\r\nBcc: x@example.net" },
		"injected recipient": func(l *Letter) { l.To.Address = "a@example.com\r\nBcc: x@example.net" },
		"no sender":          func(l *Letter) { l.From = nil },
		"crawler with CR":    func(l *Letter) { l.Crawler = "Bot\rX" },
		"message id":         func(l *Letter) { l.MessageID = "a b@example.com" },
		"no date":            func(l *Letter) { l.Date = time.Time{} },
		"too many":           func(l *Letter) { l.Domains = make([]string, MaxDomains+1) },
	} {
		l := good()
		mod(l)
		if raw, err := l.Bytes(); err == nil {
			t.Errorf("%s: a letter was written:\n%s", name, raw)
		}
	}
}

func FuzzDomain(f *testing.F) {
	for _, s := range []string{"example.com", "bücher.example", "a\r\nb.example", "xn--bcher-kva.example", "*.x.y", "1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Domain(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(d, "\r\n\t ") || !isASCII(d) || d != strings.ToLower(d) || len(d) > 253 {
			t.Fatalf("Domain(%q) = %q", s, d)
		}
		again, err := Domain(d)
		if err != nil || again != d {
			t.Fatalf("Domain(%q) = %q, Domain of that = %q, %v", s, d, again, err)
		}
		l := &Letter{From: &mail.Address{Address: "a@example.com"}, To: &mail.Address{Address: "b@example.com"}, Crawler: "Bot", Domains: []string{d}, Date: time.Unix(0, 0)}
		raw, err := l.Bytes()
		if err != nil {
			t.Fatalf("letter for %q: %v", d, err)
		}
		m, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil || len(m.Header) != 8 {
			t.Fatalf("letter for %q reads back as %d headers, %v", d, len(m.Header), err)
		}
	})
}
