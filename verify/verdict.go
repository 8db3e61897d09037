package verify

// Verdict is what an address claiming to be the crawler turned out to be.
type Verdict string

// The verdicts of SPEC §3. A claimed hit's address gets exactly one.
const (
	Genuine    Verdict = "genuine"
	Spoofed    Verdict = "spoofed"
	Unverified Verdict = "unverified"
)

// Methods and reasons, as they appear in the report's "method" and "reason"
// fields.
const (
	MethodFCrDNS = "fcrdns"
	MethodIPList = "ip-list"

	ReasonIPv6            = "ipv6"
	ReasonNoPTR           = "no-ptr"
	ReasonPTRMismatch     = "ptr-mismatch"
	ReasonForwardMismatch = "forward-mismatch"
	ReasonNotInIPList     = "not-in-ip-list"
	// ReasonNotInSnapshot: decided without DNS, the address is not in a
	// list in force that is (in part) a built-in snapshot, perhaps months
	// old: the crawler may have used it since, so it is unverified, never
	// spoofed, and never blocked for it.
	ReasonNotInSnapshot = "not-in-snapshot"
	ReasonDNSError      = "dns-error"
	// ReasonNotChecked: the address was not verified in this run.
	ReasonNotChecked = "not-checked"
	// ReasonNotAnAddress: the log's client field holds no IP address (a
	// host name, with Apache's HostnameLookups On); such a client is never
	// looked up and never blocked.
	ReasonNotAnAddress = "not-an-address"
	// ReasonProxy: the address is a CDN's edge or a proxy the operator
	// trusts (SPEC §13): the request was forwarded, so the address says
	// nothing of who claimed to be the crawler. Result.Proxy names the
	// proxy. Such an address is never looked up, never spoofed and never
	// blocked.
	ReasonProxy = "proxy"

	// WarningFCrDNSFailed marks a listed address that failed FCrDNS
	// definitively; it stays genuine.
	WarningFCrDNSFailed = "fcrdns-failed"
)
