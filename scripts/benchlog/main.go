// Command benchlog writes a synthetic combined access log for benchmarks:
// realistic lines with about 0.5 % of them claiming to be LohiSoftBot
// (half from the crawler's addresses, half from impostors).
//
//	go run ./scripts/benchlog -size 1GiB -o /tmp/bench.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	size := flag.String("size", "1GiB", "approximate size of the log (e.g. 100MiB, 1GiB)")
	out := flag.String("o", "", "output file (default stdout)")
	claimed := flag.Float64("claimed", 0.005, "fraction of lines claiming to be LohiSoftBot")
	flag.Parse()
	limit, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchlog:", err)
		os.Exit(2)
	}
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchlog:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	defer bw.Flush()

	rng := rand.New(rand.NewPCG(1, 2))
	uas := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
		"curl/8.5.0",
	}
	bot := []string{"LohiSoftBot/1.0 (+message@lohisoft.com)", "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"}
	paths := []string{"/", "/index.html", "/blog/2026/11/some-post", "/static/app.js", "/static/style.css", "/images/logo.png", "/search?q=go+parsers", "/api/v1/items?page=2", "/about", "/contact"}
	statuses := []int{200, 200, 200, 200, 304, 404, 301, 500}
	t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("", 3600))
	var written int64
	line := make([]byte, 0, 512)
	for written < limit {
		t = t.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
		var ip, ua string
		if rng.Float64() < *claimed {
			ua = bot[rng.IntN(2)]
			if rng.IntN(2) == 0 {
				ip = []string{"79.139.58.98", "79.139.58.121"}[rng.IntN(2)]
			} else {
				ip = fmt.Sprintf("%d.%d.%d.%d", 1+rng.IntN(220), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
			}
		} else {
			ua = uas[rng.IntN(len(uas))]
			ip = fmt.Sprintf("%d.%d.%d.%d", 1+rng.IntN(220), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
		}
		line = line[:0]
		line = append(line, ip...)
		line = append(line, " - - ["...)
		line = t.AppendFormat(line, "02/Jan/2006:15:04:05 -0700")
		line = append(line, "] \"GET "...)
		line = append(line, paths[rng.IntN(len(paths))]...)
		line = append(line, " HTTP/1.1\" "...)
		line = strconv.AppendInt(line, int64(statuses[rng.IntN(len(statuses))]), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(rng.IntN(50000)), 10)
		line = append(line, " \"https://example.com/\" \""...)
		line = append(line, ua...)
		line = append(line, "\"\n"...)
		n, err := bw.Write(line)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchlog:", err)
			os.Exit(1)
		}
		written += int64(n)
	}
}

func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"", 1}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("bad size %q: use a number with KiB, MiB or GiB", s)
			}
			return int64(n * float64(u.mult)), nil
		}
	}
	return 0, fmt.Errorf("bad size %q", s)
}
