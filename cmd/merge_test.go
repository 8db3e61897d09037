package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// fleetFormat is the nginx log format of the fleet tests: the virtual
// host, the duration and Retry-After logged.
const fleetFormat = `nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $host $request_time "$sent_http_retry_after" "$http_x_forwarded_for"`

// fleetLine is one request of a fleet's logs.
type fleetLine struct {
	end  time.Time
	text string
}

// fleetLogs makes the logs of a fleet: servers × days files, each a day of
// nginx lines in the order they ended: the genuine crawler's requests to a
// few sites spread over the servers (so that some conduct is broken only
// across servers), spoofers, a second crawler's claims, unclaimed requests
// from the crawler's addresses, other clients and malformed lines.
func fleetLogs(rng *rand.Rand, servers, days int) [][][]fleetLine {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	out := make([][][]fleetLine, servers)
	for s := range out {
		out[s] = make([][]fleetLine, days)
	}
	sites := []string{"a.example", "b.example", "c.example"}[:1+rng.IntN(3)]
	paths := []string{"/", "/robots.txt", "/private/x", "/a", "/b", "/account", "/busy"}
	genuine := []string{"79.139.58.98", "79.139.58.121"}
	spoofers := []string{"203.0.113.7", "198.51.100.1", "2001:db8::5", "192.0.2.44"}
	uas := []string{"LohiSoftBot/1.0 (+https://lohisoft.com/bot)", "Mozilla/5.0 (compatible; LohiSoftBot/1.1)"}
	xff := "-"
	add := func(s, d int, start time.Time, dur time.Duration, client, path string, status int, ua, user, retry string) {
		end := start.Add(dur)
		if user == "" {
			user = "-"
		}
		if retry == "" {
			retry = "-"
		}
		text := client + " - " + user + " [" + end.Format("02/Jan/2006:15:04:05 -0700") + `] "GET ` + path + ` HTTP/1.1" ` +
			fmt.Sprint(status) + ` 100 "-" "` + ua + `" ` + sites[rng.IntN(len(sites))] + " " +
			fmt.Sprintf("%.3f", dur.Seconds()) + ` "` + retry + `" "` + xff + "\"\n"
		out[s][d] = append(out[s][d], fleetLine{end, text})
	}
	for d := range days {
		day := base.Add(time.Duration(d) * 24 * time.Hour)
		// The genuine crawler: crawls of a few minutes, requests a few
		// seconds apart (now and then less than a second, or at once),
		// each to a server at random.
		for range 1 + rng.IntN(3) {
			t := day.Add(time.Duration(rng.IntN(20)) * time.Hour).Add(time.Duration(rng.IntN(3600)) * time.Second)
			client := genuine[rng.IntN(2)]
			for range 3 + rng.IntN(25) {
				dur := time.Duration(rng.IntN(3000)) * time.Millisecond
				status := []int{200, 200, 200, 304, 404, 429, 503, 403}[rng.IntN(8)]
				retry := ""
				if status == 429 && rng.IntN(2) == 0 {
					retry = "60"
				}
				user := ""
				if rng.IntN(40) == 0 {
					user = "bob"
				}
				add(rng.IntN(servers), d, t, dur, client, paths[rng.IntN(len(paths))], status, uas[rng.IntN(2)], user, retry)
				t = t.Add(time.Duration(rng.IntN(8000)) * time.Millisecond)
			}
		}
		// Spoofers, a second crawler's claims, others.
		for range rng.IntN(30) {
			t := day.Add(time.Duration(rng.IntN(86400)) * time.Second)
			s := rng.IntN(servers)
			switch rng.IntN(5) {
			case 0, 1:
				add(s, d, t, 10*time.Millisecond, spoofers[rng.IntN(len(spoofers))], paths[rng.IntN(len(paths))], 200, uas[rng.IntN(2)], "", "")
			case 2:
				add(s, d, t, 10*time.Millisecond, spoofers[rng.IntN(len(spoofers))], "/", 200, "Googlebot/2.1 (+http://www.google.com/bot.html)", "", "")
			case 3:
				add(s, d, t, 10*time.Millisecond, genuine[rng.IntN(2)], "/feed", 200, "curl/8.0", "", "")
				// Through a proxy of the operator's (10.0.0.0/8): with
				// the client in X-Forwarded-For, or without one.
				xff = []string{"-", spoofers[0], "not-an-address"}[rng.IntN(3)]
				add(s, d, t, 10*time.Millisecond, "10.0.0.5", "/", 200, uas[0], "", "")
				xff = "-"
			default:
				add(s, d, t, 10*time.Millisecond, "192.0.2.9", "/", 200, "Mozilla/5.0", "", "")
			}
		}
		for s := range servers {
			sort.SliceStable(out[s][d], func(i, j int) bool { return out[s][d][i].end.Before(out[s][d][j].end) })
			if rng.IntN(4) == 0 && len(out[s][d]) > 0 {
				i := rng.IntN(len(out[s][d]))
				out[s][d] = slices.Insert(out[s][d], i, fleetLine{out[s][d][i].end, "this is not a log line LohiSoftBot\n"})
			}
		}
	}
	return out
}

// writeLog writes lines to a file of dir.
func writeLog(t *testing.T, dir, name string, lines []fleetLine) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// reportWithoutTime is a JSON report without its generated_at.
func reportWithoutTime(t *testing.T, out string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not a JSON report: %v\n%s", err, out)
	}
	delete(m, "generated_at")
	b, _ := json.MarshalIndent(m, "", " ")
	return string(b)
}

// TestMergeEqualsOneRun is the property of SPEC §14: the same logs, split
// across snapshots in any way (by server, by day, line by line at random,
// files grouped at random), merge into the JSON report of one logs run
// over all of them, generated_at aside: with --clock-skew 0, or with
// snapshots of one server (whose logs share a clock).
func TestMergeEqualsOneRun(t *testing.T) {
	fleets := 10
	if testing.Short() {
		fleets = 3
	}
	for n := range fleets {
		rng := rand.New(rand.NewPCG(uint64(n), 17))
		servers, days := 1+rng.IntN(3), 1+rng.IntN(3)
		logs := fleetLogs(rng, servers, days)
		dir := t.TempDir()
		robots := filepath.Join(dir, "robots.txt")
		os.WriteFile(robots, []byte("User-agent: LohiSoftBot\nDisallow: /private/\n"), 0o644)
		flags := []string{"--format", "json", "--robots", robots, "--budget", "6", "--max-violations", "0"}
		logFlags := []string{"--offline", "--no-cache", "--log-format", fleetFormat}
		if n%3 == 1 {
			flags = append(flags, "--crawler", "lohisoftbot", "--crawler", "googlebot")
		}
		if n%4 == 2 {
			logFlags = append(logFlags, "--since", "2026-12-01T12:00:00Z")
		}
		if n%5 == 3 {
			flags = append(flags, "--opted-out", "a.example=2026-12-01T12:00:00Z", "--opt-out-grace", "1h")
		}
		if n%2 == 0 {
			logFlags = append(logFlags, "--trusted-proxy", "private")
		}
		// The files by server and day, as each server writes them.
		var files [][]string // by server
		for s := range servers {
			var fs []string
			for d := range days {
				fs = append(fs, writeLog(t, dir, fmt.Sprintf("web%d-day%d.log", s+1, d+1), logs[s][d]))
			}
			files = append(files, fs)
		}
		// The same lines dealt at random into new files, each keeping the
		// order of the lines it gets.
		var all []fleetLine
		for s := range logs {
			for d := range logs[s] {
				all = append(all, logs[s][d]...)
			}
		}
		deal := make([][]fleetLine, 2+rng.IntN(4))
		for _, l := range all {
			k := rng.IntN(len(deal))
			deal[k] = append(deal[k], l)
		}
		var dealt []string
		for k, lines := range deal {
			dealt = append(dealt, writeLog(t, dir, fmt.Sprintf("dealt%d.log", k+1), lines))
		}
		var byFile [][]string
		for _, fs := range files {
			for _, f := range fs {
				byFile = append(byFile, []string{f})
			}
		}
		var flat []string
		for _, fs := range files {
			flat = append(flat, fs...)
		}
		var random [][]string
		for _, f := range flat {
			if len(random) == 0 || rng.IntN(2) == 0 {
				random = append(random, nil)
			}
			random[len(random)-1] = append(random[len(random)-1], f)
		}
		var dealtSplit [][]string
		for _, f := range dealt {
			dealtSplit = append(dealtSplit, []string{f})
		}
		splits := []struct {
			name   string
			groups [][]string
		}{
			{"by server", files},
			{"by day", byFile},
			{"files grouped at random", random},
			{"lines dealt at random", dealtSplit},
		}
		for _, sp := range splits {
			var inOrder []string
			for _, g := range sp.groups {
				inOrder = append(inOrder, g...)
			}
			args := append(append(append([]string{"logs"}, flags...), logFlags...), inOrder...)
			code, want, errOut := runInMemory(t, "", args...)
			if code != 0 {
				t.Fatalf("fleet %d %s: logs exit %d: %s", n, sp.name, code, errOut)
			}
			// Snapshots of as many servers, compared as logged (the skew
			// 0), or of one server (the default skew applies to none).
			oneServer := n%2 == 1
			var snaps []string
			for i, g := range sp.groups {
				snap := filepath.Join(dir, fmt.Sprintf("%s-%d.snap", strings.ReplaceAll(sp.name, " ", "-"), i))
				server := fmt.Sprint("server", i)
				if oneServer {
					server = "web"
				}
				args := append(append(append([]string{"logs", "--snapshot", snap, "--server-name", server}, flags...), logFlags...), g...)
				if code, _, errOut := runInMemory(t, "", args...); code != 0 {
					t.Fatalf("fleet %d %s: logs --snapshot exit %d: %s", n, sp.name, code, errOut)
				}
				snaps = append(snaps, snap)
			}
			args = append([]string{"merge"}, flags...)
			if !oneServer {
				args = append(args, "--clock-skew", "0")
			}
			args = append(args, snaps...)
			code, got, errOut := runInMemory(t, "", args...)
			if code != 0 {
				t.Fatalf("fleet %d %s: merge exit %d: %s", n, sp.name, code, errOut)
			}
			if w, g := reportWithoutTime(t, want), reportWithoutTime(t, got); w != g {
				t.Fatalf("fleet %d %s: merged report differs from one run's:\n%s", n, sp.name, lineDiff(w, g))
			}
			if oneServer {
				continue
			}
			// With the default skew, what the servers' clocks may hide is
			// taken away, nothing added: a request it finds sent at once
			// with another or too soon after one (concurrency, pause) was
			// found so with the skew 0 (a concurrency may become a pause),
			// and the robots rules are the same. (Not so for backoff and
			// auth: an answer whose next request another server logged
			// within the skew of it waits for the next request surely
			// after it, which may then be the one at fault.)
			code, skewed, errOut := runInMemory(t, "", append(append([]string{"merge"}, flags...), snaps...)...)
			if code != 0 {
				t.Fatalf("fleet %d %s: merge with the default skew: exit %d: %s", n, sp.name, code, errOut)
			}
			exact, wide := faultsOf(t, got), faultsOf(t, skewed)
			for at, kinds := range wide {
				if kinds["concurrency"]+kinds["pause"] > 0 && exact[at]["concurrency"]+exact[at]["pause"] == 0 {
					t.Errorf("fleet %d %s: with the default skew %s is at fault (%v); with the skew 0 it is not (%v)", n, sp.name, at, kinds, exact[at])
				}
			}
			for at, kinds := range exact {
				if kinds["robots"] != wide[at]["robots"] {
					t.Errorf("fleet %d %s: %s: %d robots violations with the skew 0, %d with the default", n, sp.name, at, kinds["robots"], wide[at]["robots"])
				}
			}
		}
	}
}

// faultsOf counts a JSON report's violations by file and line, then kind.
func faultsOf(t *testing.T, out string) map[string]map[string]int {
	t.Helper()
	var r struct {
		Violations []struct {
			Kind, File string
			Line       int64
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not a JSON report: %v", err)
	}
	m := map[string]map[string]int{}
	for _, v := range r.Violations {
		at := fmt.Sprintf("%s:%d", v.File, v.Line)
		if m[at] == nil {
			m[at] = map[string]int{}
		}
		m[at][v.Kind]++
	}
	return m
}

// lineDiff shows the first lines where a and b differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out bytes.Buffer
	shown := 0
	for i := 0; i < max(len(al), len(bl)) && shown < 20; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d:\n  one run: %s\n  merged:  %s\n", i+1, x, y)
			shown++
		}
	}
	return out.String()
}

// fleetReq is one request of a handmade fleet log.
type fleetReq struct {
	end    string // 10:00:05 on 2026-12-01
	dur    time.Duration
	client string
	path   string
	ua     string
}

// handLog writes a log of reqs in the fleet format, site www.example.org.
func handLog(t *testing.T, dir, name string, reqs ...fleetReq) string {
	t.Helper()
	var lines []fleetLine
	for _, r := range reqs {
		end, err := time.Parse(time.DateTime, "2026-12-01 "+r.end)
		if err != nil {
			t.Fatal(err)
		}
		client, ua := r.client, r.ua
		if client == "" {
			client = "79.139.58.98"
		}
		if ua == "" {
			ua = "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
		}
		lines = append(lines, fleetLine{end, client + ` - - [` + end.Format("02/Jan/2006:15:04:05 -0700") + `] "GET ` + r.path + ` HTTP/1.1" 200 100 "-" "` +
			ua + `" www.example.org ` + fmt.Sprintf("%.3f", r.dur.Seconds()) + ` "-" "-"` + "\n"})
	}
	return writeLog(t, dir, name, lines)
}

// jsonReport runs a command that prints a JSON report.
func jsonReport(t *testing.T, wantCode int, args ...string) (map[string]any, string) {
	t.Helper()
	code, out, errOut := runInMemory(t, "", args...)
	if code != wantCode {
		t.Fatalf("%s: exit %d, want %d: %s", strings.Join(args, " "), code, wantCode, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return m, errOut
}

// violationsOf lists a report's violations as "kind path: detail".
func violationsOf(m map[string]any) []string {
	var out []string
	vs, _ := m["violations"].([]any)
	for _, v := range vs {
		x := v.(map[string]any)
		out = append(out, fmt.Sprintf("%s %s: %s", x["kind"], x["path"], x["detail"]))
	}
	return out
}

// twoServers writes the logs of one crawl that two servers split: each
// alone shows no broken promise; together, a pause too short and two
// requests at once between the servers, and more pages than a budget of
// 3.
func twoServers(t *testing.T, dir string) (web1, web2 string) {
	web1 = handLog(t, dir, "web1.log",
		fleetReq{end: "10:00:10", dur: 200 * time.Millisecond, path: "/a"},
		fleetReq{end: "10:01:10", dur: 10 * time.Second, path: "/slow"},
		fleetReq{end: "10:02:00", dur: 100 * time.Millisecond, path: "/d"})
	web2 = handLog(t, dir, "web2.log",
		fleetReq{end: "10:00:11", dur: 1500 * time.Millisecond, path: "/b"},
		fleetReq{end: "10:01:04", dur: 100 * time.Millisecond, path: "/c"})
	return web1, web2
}

// TestMergeFindsWhatOnlyTheUnionShows: a pause too short and two requests
// at once between two servers, and a budget spent across them, are in the
// merged report, each naming the other server's file and line; neither
// server's own report has them.
func TestMergeFindsWhatOnlyTheUnionShows(t *testing.T) {
	dir := t.TempDir()
	web1, web2 := twoServers(t, dir)
	logFlags := []string{"logs", "--offline", "--no-cache", "--format", "json", "--budget", "3", "--log-format", fleetFormat}
	for i, f := range []string{web1, web2} {
		snap := filepath.Join(dir, fmt.Sprintf("web%d.snap", i+1))
		m, _ := jsonReport(t, 0, append(logFlags, "--snapshot", snap, "--server-name", fmt.Sprint("web", i+1), f)...)
		for _, v := range violationsOf(m) {
			if !strings.HasPrefix(v, "robots-not-fetched") {
				t.Errorf("web%d alone: %s", i+1, v)
			}
		}
	}
	snaps := []string{filepath.Join(dir, "web1.snap"), filepath.Join(dir, "web2.snap")}
	concurrency := "concurrency /c: 2 requests at once: this one started 6.1s before the one on line 2 of " + web1 + " ended"
	budget := "budget /c: 5 pages within 24h, more than the budget of 3: this is page 4 of the window that began at 2026-12-01T10:00:09.5Z (line 1); pages by log: " + web1 + " 3, " + web2 + " 2"
	pause := "pause /a: started 1.2s before the request on line 1 of " + web2 + " ended"
	for _, tc := range []struct {
		skew          string
		want, wantNot []string
	}{
		// The servers' clocks taken to agree: as one run over both logs.
		{"0", []string{pause, concurrency, budget}, nil},
		// A second apart, at most: the pause (logged to the second) is
		// no longer proven, the rest is.
		{"1s", []string{concurrency, budget}, []string{"pause"}},
	} {
		m, _ := jsonReport(t, 0, append([]string{"merge", "--format", "json", "--budget", "3", "--clock-skew", tc.skew}, snaps...)...)
		got := strings.Join(violationsOf(m), "\n")
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("--clock-skew %s: the merged report lacks %q; it has:\n%s", tc.skew, want, got)
			}
		}
		for _, not := range tc.wantNot {
			if strings.Contains(got, not) {
				t.Errorf("--clock-skew %s: the merged report has %q:\n%s", tc.skew, not, got)
			}
		}
	}
}

// snapshotOf writes a snapshot of logs with extra flags and returns its
// path.
func snapshotOf(t *testing.T, dir, name string, extra []string, logs ...string) string {
	t.Helper()
	snap := filepath.Join(dir, name)
	args := append(append([]string{"logs", "--offline", "--no-cache", "--format", "json", "--log-format", fleetFormat, "--snapshot", snap}, extra...), logs...)
	if code, _, errOut := runInMemory(t, "", args...); code != 0 {
		t.Fatalf("logs --snapshot %s: exit %d: %s", name, code, errOut)
	}
	return snap
}

// TestMergeRefuses: a snapshot of another format version, of another
// crawler set (or another than --crawler), or a file that is no snapshot
// is refused with exit 2 and nothing printed; a damaged one is left out,
// said, and the others reported, with exit 3.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	web1, web2 := twoServers(t, dir)
	good := snapshotOf(t, dir, "good.snap", []string{"--server-name", "web1"}, web1)
	other := snapshotOf(t, dir, "other.snap", []string{"--server-name", "web2", "--crawler", "googlebot"}, web2)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	magic := len("lohibot-audit snapshot\n")
	v2 := bytes.Clone(data)
	v2[magic] = 2
	damaged := bytes.Clone(data)
	damaged[len(damaged)/2] ^= 0x40
	cut := data[:len(data)-10]
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"version", []string{write("v2.snap", v2)}, 2, "v2.snap: a snapshot of format version 2, and this lohibot-audit reads version 1"},
		{"crawler set", []string{good, other}, 2, "other.snap: made with another crawler set (googlebot) than " + good + " (lohisoftbot)"},
		{"--crawler", []string{"--crawler", "googlebot", good}, 2, "good.snap: made with another crawler set (lohisoftbot) than --crawler gives (googlebot)"},
		{"not a snapshot", []string{web1}, 2, "web1.log: not a lohibot-audit snapshot"},
		{"missing", []string{filepath.Join(dir, "nothing.snap")}, 2, "nothing.snap"},
		{"none", nil, 2, "no snapshots given"},
	} {
		code, out, errOut := runInMemory(t, "", append([]string{"merge", "--format", "json"}, tc.args...)...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.err) {
			t.Errorf("%s: exit %d, stdout %.80q, stderr %q; want exit %d and %q", tc.name, code, out, errOut, tc.code, tc.err)
		}
	}
	for _, bad := range []string{write("damaged.snap", damaged), write("cut.snap", cut)} {
		m, errOut := jsonReport(t, 3, "merge", "--format", "json", bad, other2(t, dir, web2))
		if !strings.Contains(errOut, "cannot read snapshot "+bad) || !strings.Contains(errOut, "none of it was merged") {
			t.Errorf("%s: stderr %q", bad, errOut)
		}
		s := m["summary"].(map[string]any)
		if s["incomplete"] != true || s["claimed_hits"].(float64) != 2 {
			t.Errorf("%s: summary %v, want the other snapshot's 2 hits, incomplete", bad, s)
		}
	}
}

// other2 is a snapshot of web2's log, made once per test directory.
func other2(t *testing.T, dir, web2 string) string {
	p := filepath.Join(dir, "web2.snap")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return snapshotOf(t, dir, "web2.snap", []string{"--server-name", "web2"}, web2)
}

// TestMergeDuplicates: a snapshot given twice, or a copy of it, and a log
// that two snapshots hold alike, are said and counted once.
func TestMergeDuplicates(t *testing.T) {
	dir := t.TempDir()
	web1, web2 := twoServers(t, dir)
	a := snapshotOf(t, dir, "a.snap", []string{"--server-name", "web1"}, web1)
	b := snapshotOf(t, dir, "b.snap", []string{"--server-name", "web1"}, web1, web2) // web1.log again
	data, _ := os.ReadFile(a)
	cp := filepath.Join(dir, "copy.snap")
	os.WriteFile(cp, data, 0o644)
	once, _ := jsonReport(t, 0, "merge", "--format", "json", a)
	twice, errOut := jsonReport(t, 0, "merge", "--format", "json", a, cp, a)
	if !strings.Contains(errOut, cp+" is the same snapshot as "+a+": read once") {
		t.Errorf("stderr %q", errOut)
	}
	if fmt.Sprint(once["summary"]) != fmt.Sprint(twice["summary"]) {
		t.Errorf("twice: %v, once: %v", twice["summary"], once["summary"])
	}
	both, errOut := jsonReport(t, 0, "merge", "--format", "json", a, b)
	if !strings.Contains(errOut, web1+" in "+b+" is the same log as in "+a) {
		t.Errorf("stderr %q", errOut)
	}
	if s := both["summary"].(map[string]any); s["claimed_hits"].(float64) != 5 || s["files"].(float64) != 2 {
		t.Errorf("summary %v, want 5 claimed hits in 2 files", s)
	}
}

// TestMergeSharedFileNames: servers write their logs under the same name;
// the merged report tells them apart by server, and says so.
func TestMergeSharedFileNames(t *testing.T) {
	dir := t.TempDir()
	web1, web2 := twoServers(t, dir)
	shared := filepath.Join(dir, "access.log")
	var snaps []string
	for i, f := range []string{web1, web2} {
		data, _ := os.ReadFile(f)
		os.WriteFile(shared, data, 0o644)
		snaps = append(snaps, snapshotOf(t, dir, fmt.Sprintf("s%d.snap", i), []string{"--server-name", fmt.Sprint("web", i+1)}, shared))
	}
	m, errOut := jsonReport(t, 0, append([]string{"merge", "--format", "json", "--budget", "3"}, snaps...)...)
	if !strings.Contains(errOut, "named after its server (or snapshot): web1:"+shared+", web2:"+shared) {
		t.Errorf("stderr %q", errOut)
	}
	var files []string
	for _, in := range m["inputs"].([]any) {
		files = append(files, in.(map[string]any)["file"].(string))
	}
	if want := []string{"web1:" + shared, "web2:" + shared}; !slices.Equal(files, want) {
		t.Errorf("inputs %q, want %q", files, want)
	}
	if got := strings.Join(violationsOf(m), "\n"); !strings.Contains(got, "concurrency /c: 2 requests at once: this one started 6.1s before the one on line 2 of web1:"+shared) {
		t.Errorf("violations:\n%s", got)
	}
}

// TestSnapshotWholeOrNot: an interrupted logs --snapshot leaves no file
// (nor a temporary one), whatever phase it was in; a snapshot that cannot
// be written stops the run before it reads (exit 3), and --server-name
// without --snapshot is a usage error.
func TestSnapshotWholeOrNot(t *testing.T) {
	logDir := t.TempDir()
	web1, _ := twoServers(t, logDir)
	for _, phase := range []string{phaseIPList, phaseRead, phaseDNS, phaseConduct, phaseWrite} {
		dir := t.TempDir()
		release := make(chan struct{})
		code, out, errOut := runCancelled(t, strings.NewReader(""), func(cancel context.CancelFunc, env *Env) {
			env.onPhase = func(p string) {
				if p == phase {
					cancel()
					if p == phaseConduct {
						<-release
					}
				}
			}
		}, "logs", "--offline", "--no-cache", "--format", "json", "--log-format", fleetFormat, "--snapshot", filepath.Join(dir, "x.snap"), web1)
		close(release)
		assertInterrupted(t, code, out, errOut)
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("interrupted in %s: left %v", phase, entries)
		}
	}
	code, out, errOut := runInMemory(t, "", "logs", "--offline", "--format", "json", "--snapshot", filepath.Join(logDir, "no", "such", "dir", "x.snap"), web1)
	if code != 3 || out != "" || !strings.Contains(errOut, "cannot write the snapshot") {
		t.Errorf("unwritable: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runInMemory(t, "", "logs", "--offline", "--format", "json", "--server-name", "web1", web1)
	if code != 2 || !strings.Contains(errOut, "give --snapshot FILE too") {
		t.Errorf("--server-name alone: exit %d, %q", code, errOut)
	}
}

// TestMergedReportToEmit: emit --report takes a merged report: the
// spoofers of every server are blocked, the genuine crawler never.
func TestMergedReportToEmit(t *testing.T) {
	dir := t.TempDir()
	web1 := handLog(t, dir, "web1.log", fleetReq{end: "10:00:00", path: "/", client: "203.0.113.7"}, fleetReq{end: "10:00:05", path: "/"})
	web2 := handLog(t, dir, "web2.log", fleetReq{end: "10:00:00", path: "/", client: "198.51.100.1"})
	a := snapshotOf(t, dir, "a.snap", []string{"--server-name", "web1"}, web1)
	b := snapshotOf(t, dir, "b.snap", []string{"--server-name", "web2"}, web2)
	code, out, errOut := runInMemory(t, "", "merge", "--format", "json", a, b)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	report := filepath.Join(dir, "fleet.json")
	os.WriteFile(report, []byte(out), 0o644)
	code, rules, errOut := runInMemory(t, "", "emit", "nftables", "--offline", "--no-cache", "--report", report)
	if code != 0 {
		t.Fatalf("emit --report: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"203.0.113.7", "198.51.100.1"} {
		if !strings.Contains(rules, want) {
			t.Errorf("rules lack %s:\n%s", want, rules)
		}
	}
	if strings.Contains(rules, "79.139.58.98") {
		t.Errorf("rules block the genuine crawler:\n%s", rules)
	}
}

// TestMergeOptedOut: --opted-out is a conduct flag of the merge: a value
// that does not name its crawler is refused (exit 2) when the snapshots
// audit several, once they are read; named, its violations are reported.
func TestMergeOptedOut(t *testing.T) {
	dir := t.TempDir()
	web1 := handLog(t, dir, "web1.log", fleetReq{end: "10:00:00", path: "/a"}, fleetReq{end: "10:05:00", path: "/b"})
	two := []string{"--crawler", "lohisoftbot", "--crawler", "googlebot"}
	snap := snapshotOf(t, dir, "two.snap", two, web1)
	code, out, errOut := runInMemory(t, "", "merge", "--format", "json", "--opted-out", "www.example.org=2026-12-01T10:01:00Z", snap)
	if code != 2 || out != "" || !strings.Contains(errOut, "the run audits 2 crawlers") {
		t.Errorf("unnamed --opted-out over two crawlers: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runInMemory(t, "", append([]string{"merge", "--opted-out", "nosuchbot:www.example.org=2026-12-01"}, append(two, snap)...)...)
	if code != 2 || !strings.Contains(errOut, "not audited") {
		t.Errorf("--opted-out of a crawler not audited: exit %d, %q", code, errOut)
	}
	m, _ := jsonReport(t, 0, "merge", "--format", "json", "--opted-out", "lohisoftbot:www.example.org=2026-12-01T10:01:00Z", "--opt-out-grace", "1m", snap)
	if got := strings.Join(violationsOf(m), "\n"); !strings.Contains(got, "opt-out /b") || strings.Contains(got, "opt-out /a") {
		t.Errorf("violations:\n%s", got)
	}
}
