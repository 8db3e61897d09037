package parse

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedLines adds every line of the test logs to a fuzz corpus.
func seedLines(f *testing.F) {
	files, err := filepath.Glob("../testdata/logs/*")
	if err != nil || len(files) == 0 {
		f.Fatalf("no test logs to seed from: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			f.Add(sc.Text())
		}
	}
}

// FuzzLine feeds arbitrary lines to every built-in format: no panic, and
// a line that parses gives a record whose fields are consistent.
func FuzzLine(f *testing.F) {
	seedLines(f)
	formats := append([]*Format{}, autoCandidates...)
	timed, err := CompileNginx(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $host $request_time "$sent_http_retry_after"`)
	if err != nil {
		f.Fatal(err)
	}
	formats = append(formats, timed)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		for _, fm := range formats {
			lp := newLineParser(fm, nil, "s", false)
			var rec Record
			keep, reason := lp.parse([]byte(line), &rec)
			if keep && reason != "" {
				t.Fatalf("%s: kept a malformed line", fm.Name())
			}
			if !keep {
				continue
			}
			if rec.Claimed != strings.Contains(strings.ToLower(rec.UserAgent), "lohisoftbot") {
				t.Fatalf("%s: claimed=%v for user agent %q", fm.Name(), rec.Claimed, rec.UserAgent)
			}
			if rec.Time.IsZero() {
				t.Fatalf("%s: kept a record without a time: %q", fm.Name(), line)
			}
			if rec.End.Before(rec.Start) {
				t.Fatalf("%s: ends before it starts", fm.Name())
			}
			if rec.Host == "" {
				t.Fatalf("%s: no site", fm.Name())
			}
		}
	})
}

// FuzzCompileFormat compiles arbitrary format strings: an error or a plan,
// never a panic, and a plan then survives the seed lines.
func FuzzCompileFormat(f *testing.F) {
	for _, s := range []string{
		apacheCommon, apacheCombined, apacheVhostCombined, nginxMain,
		`"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D"`,
		`%400,501{User-agent}i %{end:msec}t %h`,
		`'$remote_addr [$time_local] "$http_user_agent"' '$request_time'`,
		`log_format json escape=json '{"a":"$remote_addr","t":"$msec"}';`,
		`${remote_addr}x$time_iso8601`,
	} {
		f.Add(s, "1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] \"GET / HTTP/1.1\" 200 1 \"-\" \"LohiSoftBot\"")
	}
	f.Fuzz(func(t *testing.T, spec, line string) {
		for _, c := range []func(string) (*Format, error){CompileNginx, CompileApache} {
			fm, err := c(spec)
			if err != nil {
				if strings.Contains(err.Error(), "\n") && !strings.Contains(spec, "\n") {
					t.Fatalf("multi-line error: %q", err)
				}
				continue
			}
			if len(fm.items) == 0 || len(fm.items) > maxItems {
				t.Fatalf("plan of %d items", len(fm.items))
			}
			for i := 1; i < len(fm.items); i++ {
				if !fm.items[i].isLit && !fm.items[i-1].isLit {
					t.Fatalf("two fields side by side in %q", spec)
				}
			}
			lp := newLineParser(fm, nil, "s", false)
			var rec Record
			lp.parse([]byte(line), &rec)
		}
	})
}

// FuzzReader reads arbitrary input in small chunks: the line count is the
// number of lines in the input and every record points at a real line.
func FuzzReader(f *testing.F) {
	seedLines(f)
	f.Add("\n\n\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewReader(strings.NewReader(in), Options{Name: "f", Format: Combined, ChunkSize: 64, Workers: 2})
		if strings.HasPrefix(in, "\x1f\x8b") {
			// read as gzip: it ends in a ReadError or in what it holds
			for r.Scan() {
			}
			if err := r.Err(); err != nil && !errors.Is(err, ErrTruncated) {
				t.Fatalf("gzip input: %v", err)
			}
			return
		}
		var lines []string
		if in != "" {
			lines = strings.Split(strings.TrimSuffix(in, "\n"), "\n")
		}
		n := 0
		for r.Scan() {
			rec := r.Record()
			if rec.Line < 1 || rec.Line > int64(len(lines)) {
				t.Fatalf("record at line %d of %d", rec.Line, len(lines))
			}
			if !ContainsToken([]byte(lines[rec.Line-1])) && !strings.Contains(lines[rec.Line-1], `\x`) {
				t.Fatalf("record at line %d, which has no token: %q", rec.Line, lines[rec.Line-1])
			}
			n++
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		st := r.Stats()
		if st.Lines != int64(len(lines)) || st.Malformed+int64(n) > st.Lines || st.Bytes != int64(len(in)) {
			t.Fatalf("stats %+v for %d lines, %d records", st, len(lines), n)
		}
	})
}
