package render

import (
	"bytes"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/verify"
)

// whyCases are the verdicts, methods, reasons and DNS failures an address
// of a report can carry (verify's verifyOne and Settled, audit's
// addresses it could not check), with what the HTML report and the
// table's WHY column must say of each.
var whyCases = append([]whyCase{
	{verdict: verify.Genuine, method: verify.MethodFCrDNS, row: "resolves back to it", why: "fcrdns"},
	{verdict: verify.Genuine, method: verify.MethodIPList, row: "published IP list", why: "ip-list"},
	{verdict: verify.Genuine, method: verify.MethodIPList, failure: verify.DNSFailureTimeout, row: "published IP list (DNS did not answer in time)", why: "ip-list (dns timeout)"},
	{verdict: verify.Genuine, method: verify.MethodIPList, warnings: []string{verify.WarningFCrDNSFailed}, row: "published IP list", why: "ip-list (fcrdns-failed)"},
	{verdict: verify.Spoofed, method: verify.MethodIPList, reason: verify.ReasonIPv6, row: "IPv6 address", why: "ip-list: ipv6"},
	{verdict: verify.Spoofed, method: verify.MethodFCrDNS, reason: verify.ReasonNoPTR, row: "no PTR record", why: "fcrdns: no-ptr"},
	{verdict: verify.Spoofed, method: verify.MethodFCrDNS, reason: verify.ReasonPTRMismatch, row: "not the crawler's", why: "fcrdns: ptr-mismatch"},
	{verdict: verify.Spoofed, method: verify.MethodFCrDNS, reason: verify.ReasonForwardMismatch, row: "does not resolve back", why: "fcrdns: forward-mismatch"},
	{verdict: verify.Spoofed, method: verify.MethodIPList, reason: verify.ReasonNotInIPList, row: "not in the IP list", why: "ip-list: not-in-ip-list"},
	{verdict: verify.Unverified, method: verify.MethodIPList, reason: verify.ReasonNoIPList,
		card: "no IP list and no DNS check", row: "no IP list and DNS was not asked", why: "ip-list: no-ip-list"},
	{verdict: verify.Unverified, reason: verify.ReasonNotChecked, card: "not checked in this run", row: "not checked in this run", why: "not-checked"},
	{verdict: verify.Unverified, reason: verify.ReasonNotAnAddress, ip: "crawler.example.com", card: "no IP address logged", row: "the log has a host name", why: "not-an-address"},
	{verdict: verify.Unverified, reason: verify.ReasonNotAnAddress, ip: "-", card: "no IP address logged", row: "the log names no client", why: "not-an-address"},
	{verdict: verify.Unverified, reason: verify.ReasonNotAnAddress, ip: "fe80::1%eth0", card: "no IP address logged", row: "an address with a zone", why: "not-an-address"},
	{verdict: verify.Unverified, method: verify.MethodFCrDNS, reason: verify.ReasonDNSError,
		card: "DNS could not answer", row: "DNS could not answer and it is not in the IP list", why: "fcrdns: dns-error"},
}, dnsErrorCases()...)

type whyCase struct {
	verdict        verify.Verdict
	method, reason string
	failure        string
	warnings       []string
	ip             string // the address as the log has it; "" for 192.0.2.1
	// card is the unverified card's note; row a part of the address's
	// explanation; why the table's WHY cell.
	card, row, why string
}

// dnsErrorCases are the unverified addresses DNS could not answer for,
// one for each DNS failure.
func dnsErrorCases() []whyCase {
	var cases []whyCase
	for failure, card := range map[string]string{
		verify.DNSFailureTimeout:      "DNS did not answer in time",
		verify.DNSFailureServFail:     "DNS answered SERVFAIL",
		verify.DNSFailureRefused:      "DNS refused to answer",
		verify.DNSFailureForged:       "DNS answers did not match the question",
		verify.DNSFailureUnreachable:  "the DNS server could not be reached",
		verify.DNSFailureNoResolver:   "no DNS server was configured",
		verify.DNSFailureTooManyNames: "too many PTR names to check",
		verify.DNSFailureCanceled:     "the run stopped before DNS answered",
		verify.DNSFailureOther:        "DNS could not answer",
	} {
		cases = append(cases, whyCase{verdict: verify.Unverified, method: verify.MethodFCrDNS, reason: verify.ReasonDNSError, failure: failure,
			card: card, row: card + " and it is not in the IP list", why: "fcrdns: dns-error (dns " + failure + ")"})
	}
	return cases
}

// TestVerdictLabelsFollowReason: for every verdict and reason an address
// can carry, the HTML report's unverified card, the address's row and the
// table's WHY column say what is so: an address unverified for want of an
// IP list or of a check is not said to be one DNS could not answer.
func TestVerdictLabelsFollowReason(t *testing.T) {
	for _, tc := range whyCases {
		name := strings.Join([]string{string(tc.verdict), tc.method, tc.reason, tc.failure}, "/")
		ip := tc.ip
		if ip == "" {
			ip = "192.0.2.1"
		}
		a := Address{IP: ip, Verdict: string(tc.verdict), Method: tc.method, Reason: tc.reason, DNSFailure: tc.failure, Warnings: tc.warnings, Hits: 3}
		p := &Page{Summary: Summary{ClaimedHits: 3}, Addresses: slices.Values([]Address{a})}
		if tc.verdict == verify.Unverified {
			p.Summary.UnverifiedHits = 3
		}
		v := buildView(p)
		if tc.card != "" {
			if got := v.Cards[3].Note; v.Cards[3].Class != "u" || got != tc.card {
				t.Errorf("%s: unverified card says %q, want %q", name, got, tc.card)
			}
		}
		if got := v.Addr.Top[0].ReasonText; !strings.Contains(got, tc.row) {
			t.Errorf("%s: row says %q, want it to say %q", name, got, tc.row)
		}
		if tc.reason != verify.ReasonDNSError && tc.verdict == verify.Unverified {
			page := html.UnescapeString(string(render(t, p)))
			if strings.Contains(page, "DNS could not answer") || strings.Contains(page, "DNS did not answer") {
				t.Errorf("%s: the page says DNS failed", name)
			}
			if !strings.Contains(page, tc.card) {
				t.Errorf("%s: the page lacks %q", name, tc.card)
			}
		}

		r := &audit.Report{IPs: []audit.IPReport{{IP: a.IP, Verdict: tc.verdict, Method: tc.method, Reason: tc.reason, DNSFailure: tc.failure, Warnings: tc.warnings, Hits: 3}}}
		var out bytes.Buffer
		if err := writeReportText(NewText(&out, true, 0), r, 0); err != nil {
			t.Fatal(err)
		}
		if want := "| " + string(tc.verdict) + " | " + strings.ReplaceAll(tc.why, "_", `\_`) + " |"; !strings.Contains(out.String(), want) {
			t.Errorf("%s: the table lacks %q:\n%s", name, want, out.String())
		}
	}
}

// TestUnverifiedCardNamesTheReasons: with unverified addresses of several
// reasons the card names those of the most hits first; without any it
// says what unverified means.
func TestUnverifiedCardNamesTheReasons(t *testing.T) {
	addrs := []Address{
		{IP: "192.0.2.1", Verdict: "unverified", Method: "ip-list", Reason: verify.ReasonNoIPList, Hits: 5},
		{IP: "192.0.2.2", Verdict: "unverified", Method: "fcrdns", Reason: verify.ReasonDNSError, DNSFailure: verify.DNSFailureTimeout, Hits: 9},
		{IP: "192.0.2.3", Verdict: "unverified", Reason: verify.ReasonNotChecked, Hits: 1},
		{IP: "192.0.2.4", Verdict: "unverified", Method: "fcrdns", Reason: verify.ReasonDNSError, DNSFailure: verify.DNSFailureRefused, Hits: 1},
		{IP: "192.0.2.5", Verdict: "spoofed", Method: "fcrdns", Reason: verify.ReasonNoPTR, Hits: 100},
	}
	for _, tc := range []struct {
		addrs []Address
		want  string
	}{
		{addrs, "DNS did not answer in time; no IP list and no DNS check; and 2 more reasons"},
		{addrs[:2], "DNS did not answer in time; no IP list and no DNS check"},
		{addrs[4:], "DNS could not answer"},
	} {
		v := buildView(&Page{Addresses: slices.Values(tc.addrs), Limits: Limits{TopAddresses: 1}})
		if got := v.Cards[3].Note; got != tc.want {
			t.Errorf("%d addresses: card says %q, want %q", len(tc.addrs), got, tc.want)
		}
	}
	// Past the full rows, the compact list tells DNS failures apart.
	v := buildView(&Page{Addresses: slices.Values(addrs), Limits: Limits{TopAddresses: 1}})
	var labels []string
	for _, g := range v.Addr.Rest {
		labels = append(labels, g.Label)
	}
	want := []string{"unverified · dns-error (refused)", "unverified · dns-error (timeout)", "unverified · no-ip-list", "unverified · not-checked"}
	if !slices.Equal(labels, want) {
		t.Errorf("compact groups %q, want %q", labels, want)
	}
}

// TestWithProxy: a proxy's row names the proxy; other rows are as they
// were.
func TestWithProxy(t *testing.T) {
	if got := withProxy("proxy", verify.ReasonProxy, "cloudflare"); got != "proxy: cloudflare" {
		t.Errorf("got %q", got)
	}
	if got := withProxy("no PTR record", verify.ReasonNoPTR, "cloudflare"); got != "no PTR record" {
		t.Errorf("got %q", got)
	}
}
