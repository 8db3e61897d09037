package emit

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/lohisoft/lohibot-audit/verify"
)

func TestDecodeReport(t *testing.T) {
	tests := []struct {
		name string
		data string
		want error // nil: accepted
	}{
		{"report", `{"tool":"lohibot-audit","ips":[]}`, nil},
		{"not JSON", `[`, ErrReportJSON},
		{"wrong shape", `{"tool":"lohibot-audit","ips":{}}`, ErrReportJSON},
		{"another tool", `{"tool":"goaccess"}`, ErrNotReport},
		{"an IP list", `{"prefixes":[]}`, ErrNotReport},
		{"empty", ``, ErrReportJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := DecodeReport([]byte(tc.data))
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("DecodeReport = %v, %v; want %v", rep, err, tc.want)
			}
			if err == nil && (rep == nil || rep.Tool != "lohibot-audit") {
				t.Errorf("DecodeReport = %+v, want the report", rep)
			}
		})
	}
}

func TestAddReport(t *testing.T) {
	rep, err := DecodeReport([]byte(`{"tool":"lohibot-audit","ips":[
		{"ip":"203.0.113.7","verdict":"spoofed"},
		{"ip":"::ffff:203.0.113.8","verdict":"spoofed","in_ip_list":true},
		{"ip":"79.139.58.98","verdict":"genuine","in_ip_list":true},
		{"ip":"2001:db8::1%eth0","verdict":"genuine"},
		{"ip":"198.51.100.1","verdict":"unverified"},
		{"ip":"198.51.100.2","verdict":"maybe"},
		{"ip":"unix:/run/app.sock","verdict":"spoofed"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Crawlers: []CrawlerInput{{Tokens: lohiTokens, Listed: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}}}
	skipped := in.AddReport(rep)
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	if want := addrs("203.0.113.7", "::ffff:203.0.113.8"); !slices.Equal(in.one().Spoofed, want) {
		t.Errorf("Spoofed = %v, want %v", in.one().Spoofed, want)
	}
	if want := addrs("79.139.58.98", "2001:db8::1%eth0"); !slices.Equal(in.one().Genuine, want) {
		t.Errorf("Genuine = %v, want %v", in.one().Genuine, want)
	}
	wantListed := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("203.0.113.8/32"), netip.MustParsePrefix("79.139.58.98/32")}
	if !slices.Equal(in.one().Listed, wantListed) {
		t.Errorf("Listed = %v, want %v: the list in force kept, listed addresses added unmapped", in.one().Listed, wantListed)
	}
	wantSkipped := []string{
		`198.51.100.2 has the unknown verdict "maybe"; it is not blocked`,
		`skipping "unix:/run/app.sock": not an IP address`,
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped = %q, want %q", skipped, wantSkipped)
	}
	// The plan made from it blocks the spoofed addresses only: the one in
	// the IP list is spared as the crawler's.
	p, err := NewPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32")}; !slices.Equal(p.Block, want) {
		t.Errorf("Block = %v, want %v", p.Block, want)
	}
	var none Input
	if s := none.AddReport(nil); s != nil || none.Crawlers != nil {
		t.Errorf("AddReport(nil) = %q and changed the input", s)
	}
}

// FuzzDecodeReport feeds arbitrary bytes to the report decoder: it never
// panics, what it accepts always names the tool, and the addresses it
// yields always make a plan.
func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"tool":"lohibot-audit","ips":[{"ip":"203.0.113.7","verdict":"spoofed"}]}`))
	f.Add([]byte(`{"tool":"lohibot-audit","ips":[{"ip":"::ffff:1.2.3.4%eth0","verdict":"genuine","in_ip_list":true}]}`))
	f.Add([]byte(`{"prefixes":[]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := DecodeReport(data)
		if err != nil {
			if !errors.Is(err, ErrReportJSON) && !errors.Is(err, ErrNotReport) {
				t.Fatalf("DecodeReport error %v matches neither sentinel", err)
			}
			return
		}
		if rep.Tool != "lohibot-audit" {
			t.Fatalf("accepted a report of tool %q", rep.Tool)
		}
		var in Input
		in.AddReport(rep)
		if _, err := NewPlan(in); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFromReport: a report read from stdin (-) is named so in the
// sources and in its warnings; offline, without a cache, the crawler's
// built-in list is in force.
func TestFromReport(t *testing.T) {
	rep, err := DecodeReport([]byte(`{"tool":"lohibot-audit","warnings":["an earlier warning"],"ips":[
		{"ip":"203.0.113.7","verdict":"spoofed"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, shown := range map[string]string{"-": "stdin", "audit.json": "audit.json"} {
		var in Input
		warnings, err := in.FromReport(context.Background(), rep, name, nil, &verify.Settings{Offline: true, NoCache: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(in.Sources, []string{"report " + shown}) || !slices.Contains(warnings, "report "+shown+": an earlier warning") {
			t.Errorf("%s: sources %q, warnings %q", name, in.Sources, warnings)
		}
		if len(in.Crawlers) != 1 || !slices.Equal(in.one().Spoofed, []netip.Addr{netip.MustParseAddr("203.0.113.7")}) || in.IPListSource == "" {
			t.Errorf("%s: crawlers %+v, list %q", name, in.Crawlers, in.IPListSource)
		}
	}
}
