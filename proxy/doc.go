// Package proxy knows the proxies in front of a web server, so that an
// edge is never judged, or blocked, for what its clients do (SPEC §13).
//
// What is known:
//
//   - The CDNs that publish their edge ranges are built in: Cloudflare
//     (ips-v4, ips-v6 text lists), Fastly (public-ip-list JSON), Amazon
//     CloudFront (AWS ip-ranges.json, services CLOUDFRONT and
//     CLOUDFRONT_ORIGIN_FACING), Google Cloud's load balancers (their
//     documented health-check and Google Front End ranges; Google
//     publishes no list to fetch) and Bunny (its edge server lists). Each
//     list is fetched by `ips update` (Loader.Update) by the rules every
//     list of the tool is fetched by, and cached; a run uses the cached
//     copy, else the dated snapshot built into the binary (Loader.Load),
//     and never the network. Akamai publishes no complete list of its
//     edges: name an Akamai edge with --trusted-proxy CIDR.
//   - The ranges the operator trusts (--trusted-proxy NAME|CIDR: a built-in
//     CDN, private for RFC 1918 and fc00::/7, or a range), whose requests
//     carry the real client in a logged header, and --trust-xff, under
//     which every connecting address is a proxy of the operator's.
//
// What follows from it: a Set answers whether an address is a CDN edge or
// a trusted proxy (Proxy, named for messages), and whether a connecting
// address's real-client header is to be read (Trusts). The log reader
// reads the header (parse), verify gives such a claimant the verdict
// unverified with reason proxy, never spoofed, and emit's plan, which
// watch's guard asks too, keeps every range of the Set out of every block
// set.
//
// A published list is refused whole when any entry is not an address or
// range, or a range is wider than /8 (IPv4) or /16 (IPv6): such a list
// would make every client a proxy.
package proxy
