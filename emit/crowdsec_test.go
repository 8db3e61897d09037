package emit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/verify"
)

// decisionStrings shows decisions as "SCOPE:VALUE crawler [spoofers]".
func decisionStrings(ds []CrowdSecDecision) []string {
	var out []string
	for _, d := range ds {
		b := crowdsec.Ban{Prefix: d.Prefix}
		out = append(out, fmt.Sprintf("%s:%s %s %v", b.Scope(), b.Value(), d.Crawler, d.Spoofers))
	}
	return out
}

func TestCrowdSecDecisions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    Input
		want  []string
		notes []string
		skips []string
	}{
		{"the fixture", fixtureInput(BlockSpoofed), []string{
			"Ip:198.51.100.23 lohisoftbot [198.51.100.23]",
			"Ip:203.0.113.7 lohisoftbot [203.0.113.7]",
			"Ip:203.0.113.8 lohisoftbot [203.0.113.8]",
			"Ip:203.0.113.9 lohisoftbot [203.0.113.9]",
			"Range:2001:db8:bad::/64 lohisoftbot [2001:db8:bad::1 2001:db8:bad::2]",
			"Ip:2001:db8:bad::1 lohisoftbot [2001:db8:bad::1]",
			"Ip:2001:db8:bad::2 lohisoftbot [2001:db8:bad::2]",
			"Range:2001:db8:beef::/64 lohisoftbot [2001:db8:beef::1]",
			"Ip:2001:db8:beef::1 lohisoftbot [2001:db8:beef::1]",
		}, nil, []string{
			"0.0.0.0/32 unspecified", "10.0.0.5/32 private", "79.139.58.98/32 listed", "100.64.0.1/32 shared",
			"127.0.0.1/32 loopback", "169.254.1.1/32 link-local", "192.0.2.10/32 never-block",
			"198.51.100.200/32 genuine", "fe80::1/128 link-local",
		}},
		{"a /64 that holds what may not be banned", Input{
			Crawlers: []CrawlerInput{{
				Spoofed: addrs("2001:db8:1::5", "2001:db8:2::1:1", "2001:db8:3::1"),
				Genuine: addrs("2001:db8:1::9"),
				Listed:  prefixes("2001:db8:3:0:8000::/65"),
			}},
			NeverBlock: prefixes("2001:db8:2::/112"),
		}, []string{
			"Ip:2001:db8:1::5 lohisoftbot [2001:db8:1::5]",
			"Ip:2001:db8:2::1:1 lohisoftbot [2001:db8:2::1:1]",
			"Ip:2001:db8:3::1 lohisoftbot [2001:db8:3::1]",
		}, []string{"3 IPv6 spoofers are banned by address alone: part of its /64 is an address no decision may ban"}, nil},
		{"several crawlers: one decision per address, none for any crawler's own", Input{
			Named: true,
			Crawlers: []CrawlerInput{
				{Name: "googlebot", Spoofed: addrs("203.0.113.1", "203.0.113.2", "66.249.66.1"), Listed: prefixes("66.249.64.0/19")},
				{Name: "lohisoftbot", Spoofed: addrs("203.0.113.2", "203.0.113.3"), Listed: prefixes("79.139.58.0/24")},
			},
		}, []string{
			"Ip:203.0.113.1 googlebot [203.0.113.1]",
			"Ip:203.0.113.2 googlebot [203.0.113.2]",
			"Ip:203.0.113.3 lohisoftbot [203.0.113.3]",
		}, nil, []string{"66.249.66.1/32 listed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, plan, err := CrowdSecDecisions(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := decisionStrings(ds); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("decisions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Join(plan.Notes, "\n") != strings.Join(tc.notes, "\n") {
				t.Errorf("notes %q, want %q", plan.Notes, tc.notes)
			}
			var skips []string
			for _, s := range plan.Skipped {
				skips = append(skips, fmt.Sprintf("%s %s", s.Prefix, s.Reason))
			}
			if strings.Join(skips, "\n") != strings.Join(tc.skips, "\n") {
				t.Errorf("skipped\n%s\nwant\n%s", strings.Join(skips, "\n"), strings.Join(tc.skips, "\n"))
			}
		})
	}
	for _, m := range []Mode{BlockBot, AllowBot} {
		if _, _, err := CrowdSecDecisions(Input{Mode: m}); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "--mode block-spoofed") {
			t.Errorf("mode %s: %v", m, err)
		}
	}
}

// TestCrowdSecGolden pins the dry-run request, with the evidence of a
// report and the fixture's addresses.
func TestCrowdSecGolden(t *testing.T) {
	in := fixtureInput(BlockSpoofed)
	in.one().Spoofed = nil
	in.one().Genuine = nil
	in.Evidence = map[netip.Addr][]crowdsec.Evidence{}
	rep := &audit.Report{Tool: "lohibot-audit"}
	fixture := fixtureInput(BlockSpoofed)
	for _, a := range fixture.one().Spoofed {
		v := verify.Spoofed
		if a.String() == "198.51.100.200" {
			v = verify.Genuine
		}
		rep.IPs = append(rep.IPs, audit.IPReport{IP: a.String(), Verdict: v, Reason: "ptr-mismatch", PTR: []string{"host.evil.example"},
			Forward: []string{}, Hits: 3, FirstSeen: in.Generated.Add(-2 * 3600e9), LastSeen: in.Generated.Add(-3600e9),
			UserAgents: []string{"Mozilla/5.0 (compatible; LohiSoftBot/1.0; \x1b]0;pwned\x07)"}})
	}
	if skipped := in.AddReport(rep); len(skipped) != 0 {
		t.Fatal(skipped)
	}
	var buf bytes.Buffer
	if _, err := CrowdSec(&buf, in, CrowdSecOptions{}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "block-spoofed.crowdsec.json", buf.Bytes())
	if bytes.ContainsAny(buf.Bytes(), "\x1b\x07") {
		t.Error("a control character from the log reached the output")
	}
	// The mapped address's evidence is found under its IPv4 form.
	if !strings.Contains(buf.String(), `"message": "lohibot-audit 1.0.0: 203.0.113.9 claimed to be lohisoftbot in 3 requests`) {
		t.Errorf("no evidence for 203.0.113.9:\n%s", buf.String())
	}
}

// TestCrowdSecSafetyProperty reads the decisions back from the dry-run
// request made for random inputs and checks them with the safety checker
// every target is held to.
func TestCrowdSecSafetyProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 64))
	for i := range 300 {
		in := randomInput(r, BlockSpoofed)
		var buf bytes.Buffer
		if _, err := CrowdSec(&buf, in, CrowdSecOptions{}); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		var alerts []crowdsec.Alert
		if err := json.Unmarshal(buf.Bytes(), &alerts); err != nil {
			t.Fatal(err)
		}
		var rs ruleSets
		for _, a := range alerts {
			for _, d := range a.Decisions {
				q := mustPrefix(t, d.Value)
				if want := map[bool]string{true: "Ip", false: "Range"}[q.IsSingleIP()]; d.Scope != want || d.Type != "ban" {
					t.Errorf("input %d: decision %+v", i, d)
				}
				if !q.IsSingleIP() && (q.Addr().Is4() || q.Bits() != 64) {
					t.Errorf("input %d: range %s", i, q)
				}
				rs.block = append(rs.block, q)
			}
		}
		checkSafety(t, fmt.Sprintf("crowdsec input %d", i), in, rs)
	}
}
