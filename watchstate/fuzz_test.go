package watchstate

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzDecode: a state file is read without panicking whatever it holds,
// and what it keeps writes and reads back the same.
func FuzzDecode(f *testing.F) {
	var b bytes.Buffer
	Encode(&b, sample())
	f.Add(b.String())
	n := now.Unix()
	f.Add(withRecords(fmt.Sprintf(`{"block":{"ip":"2001:db8::1","crawler":"c","target":"crowdsec","prefix":"2001:db8::/64","at":%d,"until":%d}}`, n-10, n+10)))
	f.Add(withRecords(`{"verdict":{"ip":"1.2.3.4","crawler":"\u0000","verdict":"spoofed","judged":1,"expires":2}}`))
	f.Add(withRecords(`{"status":{"pid":1,"files":[{"name":"x"}]}}`))
	f.Add(`{"format":"lohibot-audit watch state","version":1}` + "\n")
	f.Fuzz(func(t *testing.T, data string) {
		l, err := Decode(bytes.NewReader([]byte(data)), now)
		if err != nil {
			if l != nil {
				t.Fatalf("a state with an error: %v", err)
			}
			return
		}
		for _, v := range l.Verdicts {
			if !v.Addr.IsValid() || v.Addr.Zone() != "" || v.Addr.Is4In6() || !v.Expires.After(now) {
				t.Fatalf("kept %+v", v)
			}
		}
		for _, x := range l.Blocks {
			if !x.Addr.IsValid() || x.Addr.Is4In6() || (x.Prefix.IsValid() && !x.Prefix.Contains(x.Addr)) {
				t.Fatalf("kept %+v", x)
			}
		}
		var again bytes.Buffer
		if err := Encode(&again, l.State); err != nil {
			t.Fatal(err)
		}
		l2, err := Decode(&again, now)
		if err != nil {
			t.Fatalf("what was kept does not read back: %v", err)
		}
		if len(l2.Verdicts) != len(l.Verdicts) || len(l2.Blocks) != len(l.Blocks) || len(l2.Holds) != len(l.Holds) || l2.Skipped.Total() != 0 {
			t.Fatalf("read back %d/%d/%d (%+v), want %d/%d/%d", len(l2.Verdicts), len(l2.Blocks), len(l2.Holds), l2.Skipped, len(l.Verdicts), len(l.Blocks), len(l.Holds))
		}
	})
}
