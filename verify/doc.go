// Package verify decides who an address that claims to be a crawler
// really is (SPEC §3): genuine, spoofed or unverified, with the evidence.
//
// # The decision
//
// A [Verifier] judges addresses against one crawler's profile
// (crawler.Profile): its forward-confirmed reverse DNS suffixes, whether
// it uses IPv6, and its IP list in force ([IPList]). For each address:
//
//   - FCrDNS passes (a PTR name strictly under one of the suffixes, at a
//     label boundary, whose A or AAAA records hold the address): genuine,
//     method fcrdns.
//   - FCrDNS fails definitively but the IP list covers the address:
//     genuine, method ip-list, with the warning fcrdns-failed.
//   - DNS could not answer and the list covers the address: genuine,
//     method ip-list.
//   - FCrDNS fails definitively (no PTR, no name under the suffixes, a
//     forward lookup without the address): spoofed, with the reason.
//   - DNS could not answer and the list does not cover the address:
//     unverified (dns-error). A DNS failure never makes an address
//     spoofed.
//
// Some addresses need no DNS ([Verifier.Settled]): an IPv6 address of a
// crawler that makes no IPv6 requests and is not listed (spoofed, ipv6);
// and, with Offline or for a crawler with no suffixes, every address,
// which the list alone decides (not-in-ip-list; not-in-snapshot,
// unverified, when the list in force is an old built-in snapshot;
// no-ip-list when there is no list at all). At most sixteen PTR names are
// looked at, those under the suffixes first.
//
// # DNS
//
// Queries go to the configured servers in turn (UDP, TCP when truncated),
// each with a timeout and retries; an answer that does not answer its
// query (another id or question) is ignored and the real one waited for.
// Each query carries a random id and a random letter case of its name
// (0x20; a resolver that does not echo the case is noticed and matched
// without it), and goes out on a connected UDP socket with a random
// source port; a socket serves one query at a time and is kept for the
// next only when its answer came alone (at most 128 queries and 2 s): a
// stray, forged or late packet, or a timeout, retires it (dnswire.go).
// Addresses left unverified for want of an answer are tried once more at
// the end with a longer timeout. Answers are kept for their TTL in a
// [DNSCache] between runs. A resolver that says NXDOMAIN even for the
// root zone is not trusted. Each distinct address is looked up once per
// Verifier.
//
// # Several crawlers
//
// An [Identity] holds a run's crawlers, a Verifier each, all sharing one
// resolver, the run's DNS answers and the cache; [LoadIdentity] builds it
// from an [IdentityConfig], loading each crawler's IP lists
// ([ListLoader]: fetched over HTTPS with revalidation, cached, or the
// profile's built-in list as the last fallback) and reading the system's
// resolvers when none is given ([SystemServers]). Trouble with a list, the
// resolver or the cache is a warning with a fallback in force, never an
// error; only a list file that cannot be read is one.
package verify
