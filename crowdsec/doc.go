// Package crowdsec pushes ban decisions to a CrowdSec Local API (LAPI), so
// that every bouncer of a fleet (nftables, nginx, Cloudflare, ...) enforces
// them. It talks to the LAPI as a machine (a "watcher"), with the login and
// password of CrowdSec's own credentials file, over plain net/http: the
// five requests it needs do not warrant CrowdSec's Go client and the
// dependencies it brings.
//
// # What it asks
//
//   - POST /v1/watchers/login {machine_id, password, scenarios} gives a
//     token (an hour by default) sent as "Authorization: Bearer"; a 401
//     later means it expired, and the client logs in again once.
//   - POST /v1/alerts takes an array of alerts, each holding its decisions;
//     the LAPI keeps decisions given in an alert as they are (its profiles
//     only make decisions for alerts without any). This is what
//     "cscli decisions add" does.
//   - GET /v1/alerts?has_active_decision=true&limit=0 (with scenario=, or
//     scope= and value=) lists the alerts with a decision in force, each
//     decision's "duration" being the time it has left ("-1.2s" once
//     ended).
//   - DELETE /v1/decisions/ID ends one decision.
//
// # What it pushes
//
// One alert per decision, so that each carries its own evidence: type ban,
// scope Ip for an address or Range for a CIDR range (CrowdSec's scope for a
// range: "cscli decisions add --range"), duration the TTL, scenario
// lohibot-audit/spoofed-CRAWLER (shown as the decision's reason by cscli),
// origin cscli, and the evidence in the alert's message and metadata. The
// origin is cscli, CrowdSec's origin for decisions that a person or a tool
// adds, because cscli decisions list (1.4, as Debian 12 ships it) shows only
// the origins crowdsec and cscli unless given --all, and because the LAPI
// shares such decisions with CrowdSec's Central API only when the console's
// share_manual_decisions is on: a site's own judgement stays with the site.
//
// A decision lasts from its alert's stop_at plus its duration, by the
// Local API's clock: alerts are stamped with that clock, as the Date header
// of its answers tells, so that a host whose clock is wrong still bans for
// the TTL.
//
// # Exactly once, extended, never shortened
//
// A Pusher looks up the decisions of ours in force for each value before
// pushing: none, and it adds one; one with at least nine tenths of the TTL
// left is kept; a shorter one is extended: a new decision for the whole
// TTL is pushed, and then the old one ended. Bouncers see no gap: the LAPI
// reports an ended decision to a bouncer only when no decision with a
// later end holds the same value. Two decisions of ours for one value (two
// hosts pushing at once) are brought back to one, the longest, the next
// time the value is pushed. A failed push stops at once and says so;
// nothing done is undone, and pushing again never pushes anything twice.
//
// A Queue does the same in the background for `watch`: bounded, retrying
// with a growing backoff while the LAPI is down or refusing, saying each
// outage once.
package crowdsec
