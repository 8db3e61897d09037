package crawler

import (
	"fmt"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// A PTR suffix is trusted to name the crawler's machines only: anyone who
// can get a forward-confirmed PTR name under it passes FCrDNS. So a
// suffix must belong to one owner, which the Public Suffix List and a
// short list of cloud zones decide (checkSuffixOwner).

// customerZones are zones, not public suffixes by the Public Suffix List,
// under which a cloud provider gives every customer's machine a PTR name
// that resolves back to its address: a suffix at, above or below one of
// them would make any rented machine genuine.
var customerZones = []struct{ zone, who string }{
	// Compute Engine: every VM with an external address has the PTR name
	// A.B.C.D.bc.googleusercontent.com, forward-confirmed. Google's own
	// fetchers use gae.googleusercontent.com, which stays allowed.
	{"bc.googleusercontent.com", "Google Compute Engine names every customer's VM"},
	// EC2: ec2-A-B-C-D.compute-1.amazonaws.com (us-east-1) and
	// ec2-A-B-C-D.REGION.compute.amazonaws.com, forward-confirmed.
	{"compute-1.amazonaws.com", "Amazon EC2 names every customer's instance"},
	{"compute.amazonaws.com", "Amazon EC2 names every customer's instance"},
	// Azure: a VM's public address takes a DNS label the customer chooses
	// (NAME.REGION.cloudapp.azure.com), and its reverse name with it.
	{"cloudapp.azure.com", "Azure names every customer's VM"},
}

// checkSuffixOwner refuses a PTR suffix (normalised: lower case, no dots
// at the ends) that more than one owner can have names under: a public
// suffix or a name that is not below one (co.uk, github.io, com), a name
// with public suffixes right below it (compute-1.amazonaws.com, whose
// every child is one), and a cloud zone of customers' machines or a name
// above or below one (googleusercontent.com, amazonaws.com).
func checkSuffixOwner(s string) error {
	if _, err := publicsuffix.EffectiveTLDPlusOne(s); err != nil {
		return fmt.Errorf("%q is a public suffix (Public Suffix List): anyone can register a name under it and pass FCrDNS; give a domain the crawler's operator owns, such as crawl.example.net", clip(s))
	}
	const probe = "x--lohibot-audit-probe"
	if ps, _ := publicsuffix.PublicSuffix(probe + "." + s); ps == probe+"."+s {
		return fmt.Errorf("%q: every name right below it is a public suffix (Public Suffix List), each with its own owners; give a domain the crawler's operator owns, such as crawl.example.net", clip(s))
	}
	for _, z := range customerZones {
		if s == z.zone || strings.HasSuffix(s, "."+z.zone) || strings.HasSuffix(z.zone, "."+s) {
			return fmt.Errorf("%q: %s under %s, so any machine rented there would pass FCrDNS; give the crawler's own zone, such as crawl.example.net", clip(s), z.who, z.zone)
		}
	}
	return nil
}
