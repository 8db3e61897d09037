package cmd

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/robots/robotstest"
	"github.com/miekg/dns"
)

// robotsFetchCases are the robots.txt URLs of the auditor's trouble (the
// server is down, unreachable, or never answers) and, beside them, the
// answers that do say something about the site.
type robotsFetchCase struct {
	name   string
	url    string
	client *http.Client
	// unavailable is the reason a fetch failed, "" for an answer.
	unavailable string
}

func robotsFetchCases(t *testing.T) (*robotstest.Server, []robotsFetchCase) {
	srv := newRobotsServer(t)
	closedURL := robotstest.ClosedURL()
	return srv, []robotsFetchCase{
		{name: "5xx", url: srv.URL + "/down/robots.txt", unavailable: "answered 503"},
		{name: "closed port", url: closedURL + "/robots.txt", unavailable: "could not be fetched (dial tcp"},
		// The server never answers; the client's deadline is injected.
		{name: "timeout", url: srv.URL + "/slow/robots.txt", client: srv.ShortClient(20 * time.Millisecond), unavailable: "could not be fetched (timed out)"},
		{name: "404 allows all", url: srv.URL + "/gone/robots.txt"},
		{name: "200 disallows", url: srv.URL + "/ok/robots.txt"},
	}
}

// TestLogsRobotsFetchError checks that a robots.txt the auditor cannot
// fetch now never makes the crawler's pages violations: the robots check
// is skipped for the site, with a warning saying why, and --fail-on
// violations does not fire. A robots.txt that answers still counts.
func TestLogsRobotsFetchError(t *testing.T) {
	srv, cases := robotsFetchCases(t)
	refused := serveDNS(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		w.WriteMsg(m)
	}))
	log := testutil.TempFile(t, "shop.log", sitesCrawl(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), 5))
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	for _, tc := range cases {
		for _, cmdArgs := range [][]string{
			{"logs", "--format", "json", "--fail-on", "violations"},
			{"emit", "nftables"},
		} {
			t.Run(tc.name+"/"+cmdArgs[0], func(t *testing.T) {
				client := tc.client
				if client == nil {
					client = srv.Client()
				}
				var out, errb bytes.Buffer
				env := &Env{Stdout: &out, Stderr: &errb, HTTPClient: client, Now: func() time.Time { return fixedNow }}
				args := append(append([]string{}, cmdArgs...), "--no-cache", "--resolver", refused, "--dns-retries", "0",
					"--ip-list", list, "--robots", tc.url, log)
				code := Run(context.Background(), env, args)
				if cmdArgs[0] == "emit" {
					if code != fail.ExitOK {
						t.Fatalf("exit %d, want 0; stderr:\n%s", code, errb.String())
					}
					if want := "robots.txt " + tc.url + " " + tc.unavailable; tc.unavailable != "" && !strings.Contains(errb.String(), want) {
						t.Errorf("stderr does not say %q:\n%s", want, errb.String())
					}
					return
				}
				r := sitesReport(t, out.String())
				var robotsViolations int
				for _, v := range r.Violations {
					if v.Kind == conduct.KindRobots {
						robotsViolations++
					}
				}
				if len(r.Sites) != 1 || r.Sites[0].Pages != 5 {
					t.Fatalf("sites %+v, want shop.log with 5 pages", r.Sites)
				}
				skipped := slices.Contains(r.Sites[0].ChecksSkipped, conduct.KindRobots)
				var warning string
				for _, w := range r.Warnings {
					if strings.Contains(w, tc.url) {
						warning = w
					}
				}
				switch {
				case tc.unavailable != "":
					if code != fail.ExitOK {
						t.Errorf("exit %d, want 0: the auditor's trouble is not a violation; stderr:\n%s", code, errb.String())
					}
					if robotsViolations != 0 || !skipped {
						t.Errorf("%d robots violations, robots skipped %v; want none and skipped", robotsViolations, skipped)
					}
					for _, s := range []string{tc.unavailable, "now: the robots check is skipped for every site"} {
						if !strings.Contains(warning, s) {
							t.Errorf("warning %q does not say %q", warning, s)
						}
					}
				case tc.name == "404 allows all":
					if code != fail.ExitOK || robotsViolations != 0 || skipped {
						t.Errorf("exit %d, %d robots violations, skipped %v; want 0, none, checked", code, robotsViolations, skipped)
					}
					if !strings.Contains(warning, "answered 404: RFC 9309 §2.3.1.3 says allow all") {
						t.Errorf("the allow-all is not said: %q", r.Warnings)
					}
				default:
					if code != fail.ExitFindings || robotsViolations != 5 || skipped {
						t.Errorf("exit %d, %d robots violations, skipped %v; want 1, 5, checked", code, robotsViolations, skipped)
					}
				}
			})
		}
	}
}

// TestRobotsCommandsFetchError checks that robots test and robots check
// cannot pass on a robots.txt they could not fetch: exit 3, unless
// --on-fetch-error rfc asks for RFC 9309's disallow-all.
func TestRobotsCommandsFetchError(t *testing.T) {
	srv, cases := robotsFetchCases(t)
	for _, tc := range cases {
		if tc.unavailable == "" {
			continue
		}
		for _, sub := range [][]string{{"robots", "check", tc.url}, {"robots", "test", tc.url, "/"}, {"robots", "test", "--format", "json", tc.url, "/"}} {
			t.Run(tc.name+"/"+strings.Join(sub[:2], " "), func(t *testing.T) {
				client := tc.client
				if client == nil {
					client = srv.Client()
				}
				got := runRobotsCmd(t, client, nil, "", sub...)
				if got.code != fail.ExitIncomplete || got.stdout != "" {
					t.Errorf("exit %d, stdout %q; want 3 and nothing", got.code, got.stdout)
				}
				want := "lohibot-audit: error: could not check: robots.txt " + tc.url + " " + tc.unavailable
				if !strings.HasPrefix(got.stderr, want) || !strings.Contains(got.stderr, "\nlohibot-audit: hint: ") {
					t.Errorf("stderr %q, want %q and a hint", got.stderr, want)
				}
				rfc := runRobotsCmd(t, client, nil, "", append([]string{sub[0], sub[1], "--on-fetch-error", "rfc"}, sub[2:]...)...)
				if rfc.code != fail.ExitOK || !strings.Contains(rfc.stderr, "RFC 9309 §2.3.1.4 says disallow all") {
					t.Errorf("with --on-fetch-error rfc: exit %d, stderr %q; want 0 and the disallow-all said", rfc.code, rfc.stderr)
				}
			})
		}
	}
}
