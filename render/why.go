package render

import (
	"strings"

	"github.com/lohisoft/lohibot-audit/verify"
)

// Why is a verdict's method and reason for people, with why DNS could not
// answer and the warnings: "fcrdns: ptr-mismatch", "ip-list
// (fcrdns-failed)", "fcrdns: dns-error (dns timeout)".
func Why(method, reason, dnsFailure string, warnings []string) string {
	why := method
	if reason != "" {
		why = strings.TrimPrefix(why+": "+reason, ": ")
	}
	var notes []string
	if dnsFailure != "" {
		notes = append(notes, "dns "+dnsFailure)
	}
	notes = append(notes, warnings...)
	if len(notes) > 0 {
		why = strings.TrimPrefix(why+" ("+strings.Join(notes, ", ")+")", " ")
	}
	return why
}

// dnsFailureText says in words why DNS could not answer, from a
// dns_failure value (verify's DNSFailure constants); "DNS could not
// answer" for any other value.
func dnsFailureText(failure string) string {
	switch failure {
	case verify.DNSFailureTimeout:
		return "DNS did not answer in time"
	case verify.DNSFailureServFail:
		return "DNS answered SERVFAIL"
	case verify.DNSFailureRefused:
		return "DNS refused to answer"
	case verify.DNSFailureForged:
		return "DNS answers did not match the question"
	case verify.DNSFailureUnreachable:
		return "the DNS server could not be reached"
	case verify.DNSFailureNoResolver:
		return "no DNS server was configured"
	case verify.DNSFailureTooManyNames:
		return "too many PTR names to check"
	case verify.DNSFailureCanceled:
		return "the run stopped before DNS answered"
	}
	return "DNS could not answer"
}

// unverifiedText says in a few words why an address stayed unverified:
// its reason, and for dns-error its dns_failure. An unknown reason is
// given as it is.
func unverifiedText(reason, dnsFailure string) string {
	switch reason {
	case verify.ReasonDNSError, "":
		return dnsFailureText(dnsFailure)
	case verify.ReasonNoIPList:
		return "no IP list and no DNS check"
	case verify.ReasonNotInSnapshot:
		return "not in the built-in snapshot of its IP list"
	case verify.ReasonNotChecked:
		return "not checked in this run"
	case verify.ReasonNotAnAddress:
		return "no IP address logged"
	case verify.ReasonProxy:
		return "a CDN edge or proxy"
	}
	return cut(reason, 60)
}

// reasonText explains the verdict reasons of SPEC §3 in words, for an
// address's row.
var reasonText = map[string]string{
	verify.MethodFCrDNS:          "its PTR name is the crawler's and resolves back to it",
	verify.MethodIPList:          "in the crawler's published IP list",
	verify.ReasonIPv6:            "an IPv6 address the IP list does not cover",
	verify.ReasonNoPTR:           "no PTR record",
	verify.ReasonPTRMismatch:     "its PTR name is not the crawler's",
	verify.ReasonForwardMismatch: "its PTR name does not resolve back to it",
	verify.ReasonNotInIPList:     "not in the IP list (decided without DNS)",
	verify.ReasonNotInSnapshot:   "not in the built-in snapshot of the crawler's IP list, which may be older than the address (decided without DNS; run 'lohibot-audit ips update')",
	verify.ReasonNoIPList:        "the crawler has no IP list and DNS was not asked (offline, or the crawler has no PTR names to check)",
	verify.ReasonNotChecked:      "not checked in this run",
	verify.ReasonProxy:           "a CDN's edge or a proxy, which forwards others' requests: never judged, never blocked",
}

// addressReasonText explains an address's verdict in words: its reason
// (its method when it has none), with why DNS could not answer.
func addressReasonText(a Address) string {
	switch {
	case a.Reason == verify.ReasonDNSError:
		return dnsFailureText(a.DNSFailure) + " and it is not in the IP list"
	case a.Reason == verify.ReasonNotAnAddress:
		return notAnAddressText(a.IP)
	case a.Reason != "":
		return reasonText[a.Reason]
	case a.Method == verify.MethodIPList && a.DNSFailure != "":
		return "in the crawler's published IP list (" + dnsFailureText(a.DNSFailure) + ")"
	}
	return reasonText[a.Method]
}

// notAnAddressText says what a client that is no IP address is, from the
// text the log holds for it: "-" (no client logged: Envoy's default
// format takes the client from X-Forwarded-For, which a request from
// inside does not carry), an address with a zone, or a host name
// (Apache's HostnameLookups On).
func notAnAddressText(client string) string {
	switch {
	case client == "" || client == "-":
		return "the log names no client (\"-\" where its address would be, as when the client is read from an X-Forwarded-For the request did not carry): never looked up, never blocked"
	case strings.Contains(client, "%"):
		return "the log has an address with a zone, which cannot be looked up"
	}
	return "the log has a host name, not an address"
}

// withProxy names the proxy after the reason proxy: "proxy: cloudflare".
func withProxy(why, reason, proxy string) string {
	if reason == verify.ReasonProxy && proxy != "" {
		return why + ": " + proxy
	}
	return why
}
