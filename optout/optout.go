// Package optout writes the e-mail that asks a crawler's operator to keep
// a crawler off some domains (SPEC §15): the second way a crawler's page
// offers to be kept out, besides robots.txt. The message is an RFC 5322
// e-mail with one text/plain UTF-8 part, for the operator's own mail
// program; nothing here sends it.
//
// Every value that goes into a header is checked first: a domain is a
// host name (IDNA: Unicode names become punycode), an address is one
// addr-spec, and a carriage return or line feed anywhere is refused, so
// that no input can add a header or a recipient. Non-ASCII text (a
// display name, a Unicode domain) is written as RFC 2047 encoded words in
// headers and as quoted-printable in the body.
package optout

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Errors of the checks, matched with errors.Is.
var (
	// ErrDomain: a DOMAIN is not a host name.
	ErrDomain = errors.New("not a domain name")
	// ErrAddress: an address is not one plain e-mail address.
	ErrAddress = errors.New("not an e-mail address")
	// ErrNoDomain: a letter names no domain.
	ErrNoDomain = errors.New("no domain to opt out")
)

// MaxDomains is the most domains one letter lists.
const MaxDomains = 1000

// lookup maps a domain for lookup as RFC 5891 §5 says (lower case, NFC,
// STD3 letters, digits and hyphens, bidi rule) and checks the lengths of
// its labels and of the whole name.
var lookup = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true), idna.CheckHyphens(true), idna.CheckJoiners(true))

// Domain checks a domain as a user gives it and returns its ASCII form
// (punycode for Unicode labels), in lower case without a trailing dot.
// A name of one label, an IP address, a URL, a wildcard, and any control
// character (CR and LF above all) are refused with an error wrapping
// ErrDomain that says what to give instead.
func Domain(s string) (string, error) {
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return "", fmt.Errorf("%w: %q holds a control character (%U); give one name such as example.com", ErrDomain, s, []rune(s[i:])[0])
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: %q is not valid UTF-8", ErrDomain, s)
	}
	name := strings.TrimSpace(s)
	switch {
	case name == "":
		return "", fmt.Errorf("%w: empty; give one such as example.com", ErrDomain)
	case strings.Contains(name, "://") || strings.ContainsAny(name, "/?#@"):
		return "", fmt.Errorf("%w: %q looks like a URL or an address; give its host name alone, such as example.com", ErrDomain, s)
	case strings.HasPrefix(name, "*."):
		return "", fmt.Errorf("%w: %q is a wildcard; give the domain itself, such as %s", ErrDomain, s, name[2:])
	}
	name = strings.TrimSuffix(name, ".")
	if a, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		return "", fmt.Errorf("%w: %s is an IP address; a crawler's operator excludes domains, give the site's name", ErrDomain, a)
	}
	ascii, err := lookup.ToASCII(name)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrDomain, s, err)
	}
	if a, err := netip.ParseAddr(ascii); err == nil {
		return "", fmt.Errorf("%w: %q is the IP address %s; a crawler's operator excludes domains, give the site's name", ErrDomain, s, a)
	}
	labels := strings.Split(ascii, ".")
	if slices.Contains(labels, "") {
		return "", fmt.Errorf("%w: %q has an empty label; give a name such as example.com", ErrDomain, s)
	}
	if len(labels) < 2 {
		return "", fmt.Errorf("%w: %q has one label; give a full name such as example.com", ErrDomain, s)
	}
	return ascii, nil
}

// Display is the Unicode form of an ASCII domain as Domain returns it,
// for people; a name that is not punycode comes back unchanged.
func Display(ascii string) string {
	u, err := idna.Display.ToUnicode(ascii)
	if err != nil {
		return ascii
	}
	return u
}

// Address checks one e-mail address, with or without a display name
// ("Jörg Mustermann <webmaster@example.com>"), and returns it with its
// domain in ASCII. Groups, lists, comments that hide a second address,
// CR and LF, and a non-ASCII local part (which needs SMTPUTF8 of every
// server on the way) are refused with an error wrapping ErrAddress.
func Address(s string) (*mail.Address, error) {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return nil, fmt.Errorf("%w: %q holds a control character; give one address such as webmaster@example.com", ErrAddress, s)
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v; give one address such as webmaster@example.com", ErrAddress, s, err)
	}
	if strings.ContainsFunc(a.Name, unicode.IsControl) {
		return nil, fmt.Errorf("%w: %q: its name holds a control character", ErrAddress, s)
	}
	local, domain, ok := strings.Cut(a.Address, "@")
	if !ok || local == "" {
		return nil, fmt.Errorf("%w: %q has no local part and domain", ErrAddress, s)
	}
	for _, c := range local {
		if c >= utf8.RuneSelf {
			return nil, fmt.Errorf("%w: %q: a local part beyond ASCII needs SMTPUTF8, which not every server has; give an ASCII address", ErrAddress, s)
		}
	}
	d, err := Domain(domain)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: its domain: %w", ErrAddress, s, err)
	}
	return &mail.Address{Name: a.Name, Address: local + "@" + d}, nil
}

// Letter is one opt-out e-mail. Build it with checked values: From and To
// from Address, Domains from Domain.
type Letter struct {
	// From is the site operator asking; To the crawler operator's contact.
	From, To *mail.Address
	// Crawler is the crawler's name as its operator writes it
	// (its profile's title, such as "ExampleBot").
	Crawler string
	// Domains are the domains to exclude, in ASCII form, in the order
	// given (duplicates are listed once).
	Domains []string
	// Date is when the request is made: the Date header, and the time the
	// body names as the request's.
	Date time.Time
	// MessageID, when set, is the Message-ID without angle brackets;
	// when empty one is made of random bytes and From's domain.
	MessageID string
}

// WriteTo writes the letter as an RFC 5322 message with CRLF line ends.
func (l *Letter) WriteTo(w io.Writer) (int64, error) {
	msg, err := l.Bytes()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(msg)
	return int64(n), err
}

// Bytes returns the letter as an RFC 5322 message with CRLF line ends, or
// an error when it is not one that can be sent: no domain, no sender or
// recipient, or a value that did not pass the checks.
func (l *Letter) Bytes() ([]byte, error) {
	domains, err := l.domains()
	if err != nil {
		return nil, err
	}
	if l.From == nil || l.To == nil {
		return nil, fmt.Errorf("%w: a letter needs a sender and a recipient", ErrAddress)
	}
	from, err := Address(l.From.String())
	if err != nil {
		return nil, err
	}
	to, err := Address(l.To.String())
	if err != nil {
		return nil, err
	}
	if strings.ContainsFunc(l.Crawler, unicode.IsControl) || strings.TrimSpace(l.Crawler) == "" {
		return nil, fmt.Errorf("optout: crawler name %q: give the crawler's name without control characters", l.Crawler)
	}
	id := l.MessageID
	if id == "" {
		id = newMessageID(from.Address)
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '<' || r == '>' }) || !strings.Contains(id, "@") {
		return nil, fmt.Errorf("optout: message id %q: give id@domain in printable ASCII", id)
	}
	if l.Date.IsZero() {
		return nil, errors.New("optout: a letter needs its date")
	}
	body := l.body(domains, from)
	var b strings.Builder
	header := func(name, value string) {
		b.WriteString(fold(name + ": " + value))
		b.WriteString("\r\n")
	}
	header("From", from.String())
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", l.subject(domains)))
	header("Date", l.Date.Format(time.RFC1123Z))
	header("Message-ID", "<"+id+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	if isASCII(body) {
		header("Content-Transfer-Encoding", "7bit")
		b.WriteString("\r\n")
		b.WriteString(strings.ReplaceAll(body, "\n", "\r\n"))
		return []byte(b.String()), nil
	}
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	// Binary false: the writer turns each "\n" into CRLF, as RFC 2045
	// wants line breaks in text.
	if _, err := qp.Write([]byte(body)); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// domains returns l.Domains checked again and deduplicated, in order.
func (l *Letter) domains() ([]string, error) {
	if len(l.Domains) == 0 {
		return nil, ErrNoDomain
	}
	if len(l.Domains) > MaxDomains {
		return nil, fmt.Errorf("%w: %d domains; one letter lists at most %d", ErrDomain, len(l.Domains), MaxDomains)
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range l.Domains {
		a, err := Domain(d)
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// subject names the crawler and the first domain.
func (l *Letter) subject(domains []string) string {
	s := "Opt-out request: please exclude " + Display(domains[0])
	switch n := len(domains) - 1; n {
	case 0:
	case 1:
		s += " and 1 more domain"
	default:
		s += fmt.Sprintf(" and %d more domains", n)
	}
	return s + " from " + l.Crawler + "'s crawl"
}

// body is the letter's text, with "\n" line ends: what is asked, in the
// words crawler pages use for it (exclusion from the crawl, removal from
// the crawl list), the domains (Unicode names with their ASCII form), and
// the date.
func (l *Letter) body(domains []string, from *mail.Address) string {
	var b strings.Builder
	one := len(domains) == 1
	sites, its, them, what := "sites", "their", "them", "these domains have"
	if one {
		sites, its, them, what = "site", "its", "it", "this domain has"
	}
	wrap(&b, fmt.Sprintf("Hello,\n\nI am responsible for the web %s below and ask for %s immediate exclusion from %s's crawl: please remove %s from the crawl list, so that %s fetches nothing more from %s.",
		sites, its, l.Crawler, them, l.Crawler, them))
	for _, d := range domains {
		b.WriteString("  ")
		if u := Display(d); u != d {
			b.WriteString(u + " (" + d + ")")
		} else {
			b.WriteString(d)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	utc := l.Date.UTC()
	wrap(&b, fmt.Sprintf("This request is made on %s (%s). Please confirm when %s been removed from the crawl list.",
		utc.Format("2 January 2006"), utc.Format(time.RFC3339), what))
	b.WriteString("Thank you,\n")
	if from.Name != "" {
		b.WriteString(from.Name + "\n")
	}
	b.WriteString(from.Address + "\n")
	return b.String()
}

func plural(one bool, singular, many string) string {
	if one {
		return singular
	}
	return many
}

// wrap writes text's paragraphs ("\n\n" apart) filled to 72 columns, each
// followed by a blank line.
func wrap(b *strings.Builder, text string) {
	for _, para := range strings.Split(text, "\n\n") {
		col := 0
		for i, word := range strings.Fields(para) {
			n := utf8.RuneCountInString(word)
			if i > 0 && col+1+n > 72 {
				b.WriteString("\n")
				col = 0
			} else if i > 0 {
				b.WriteString(" ")
				col++
			}
			b.WriteString(word)
			col += n
		}
		b.WriteString("\n\n")
	}
}

// fold folds a header line at spaces so that its lines keep within 78
// characters where a space allows (RFC 5322 §2.2.3); a longer word stays
// whole (at most 998 characters, which the checks on values ensure).
func fold(line string) string {
	if len(line) <= 78 {
		return line
	}
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(line, " ") {
		if i > 0 {
			if col+1+len(word) > 78 {
				b.WriteString("\r\n")
				col = 0
			}
			b.WriteString(" ")
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// newMessageID makes a Message-ID (without brackets) of 16 random bytes at
// the domain of addr.
func newMessageID(addr string) string {
	var r [16]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	_, domain, _ := strings.Cut(addr, "@")
	return hex.EncodeToString(r[:]) + "@" + domain
}
