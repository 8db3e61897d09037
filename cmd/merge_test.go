package cmd

import (
	"bytes"
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
// over all of them, generated_at aside.
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
			var snaps []string
			for i, g := range sp.groups {
				snap := filepath.Join(dir, fmt.Sprintf("%s-%d.snap", strings.ReplaceAll(sp.name, " ", "-"), i))
				args := append(append(append([]string{"logs", "--snapshot", snap, "--server-name", fmt.Sprint("server", i)}, flags...), logFlags...), g...)
				if code, _, errOut := runInMemory(t, "", args...); code != 0 {
					t.Fatalf("fleet %d %s: logs --snapshot exit %d: %s", n, sp.name, code, errOut)
				}
				snaps = append(snaps, snap)
			}
			args = append(append([]string{"merge"}, flags...), snaps...)
			code, got, errOut := runInMemory(t, "", args...)
			if code != 0 {
				t.Fatalf("fleet %d %s: merge exit %d: %s", n, sp.name, code, errOut)
			}
			if w, g := reportWithoutTime(t, want), reportWithoutTime(t, got); w != g {
				t.Fatalf("fleet %d %s: merged report differs from one run's:\n%s", n, sp.name, lineDiff(w, g))
			}
		}
	}
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
