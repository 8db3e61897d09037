// Command benchlog writes synthetic access logs for benchmarks.
//
// The default kind, mixed, is a combined log of about -size with realistic
// lines, about 0.5 % of them claiming to be the default crawler (half from the
// crawler's addresses, half from impostors):
//
//	go run ./scripts/benchlog -size 1GiB -o /tmp/bench.log
//
// Two more kinds measure memory rather than speed; every line of them
// claims to be the crawler:
//
//	go run ./scripts/benchlog -kind spoofers -n 1000000 -o /tmp/spoofers.log
//	go run ./scripts/benchlog -kind genuine -n 1000000 -sites 100000 -o /tmp/genuine.log
//
// spoofers is a combined log of -n hits from -n distinct addresses (a
// botnet rotating through addresses: public IPv4 space, one in ten IPv6),
// none of them the crawler's, so an --offline run finds them all spoofed.
// genuine is a vhost_combined log of -n hits from the crawler's listed
// addresses (79.139.58.98 and 79.139.58.121) spread over -sites virtual
// hosts, as a hosting provider's log would hold them: each site is crawled
// in rounds, /robots.txt first, then pages with distinct paths, minutes
// apart, so that the conduct checks have a whole crawl to judge.
//
// crawl is what one large site sees of a search engine's crawler in a
// month (-days): -n hits from the crawler's listed addresses, as nginx
// writes them with the request's duration and Retry-After (CrawlFormat):
//
//	go run ./scripts/benchlog -kind crawl -n 1000000 -o /tmp/crawl.log
//	lohibot-audit logs --offline --site www.example.com \
//	  --log-format "nginx:$(go run ./scripts/benchlog -print-format)" /tmp/crawl.log
//
// The crawler fetches in bursts over a few connections at once (so that
// pause and concurrency violations are common, as with a large engine's
// crawler), reads /robots.txt about once a day (once answered 503 for
// an hour), mostly gets 200 and 304 with some 301, 404 and 410, and now
// and then a 429 (Retry-After: 120) or a 5xx that it mostly, not always,
// waits out; a few pages under /account/ answer 403 and once in a while
// 200 later. Lines are written when their request ends, so that a line's
// start time may come before the previous line's, as in a real nginx log.
package main

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
)

func main() {
	size := flag.String("size", "1GiB", "approximate size of the log (e.g. 100MiB, 1GiB)")
	out := flag.String("o", "", "output file (default stdout)")
	claimed := flag.Float64("claimed", 0.005, "mixed: fraction of lines claiming to be the default crawler")
	others := flag.Float64("others", -1, "mixed: fraction of lines claiming to be Googlebot, and as many bingbot, none of the other lines naming either; -1: Googlebot's User-Agent is one of the six of the other lines")
	kind := flag.String("kind", "mixed", "mixed, spoofers, genuine or crawl")
	n := flag.Int("n", 1000000, "spoofers, genuine: number of claimed hits")
	sites := flag.Int("sites", 100000, "genuine: number of sites the hits are spread over")
	days := flag.Int("days", 30, "crawl: the days the hits are spread over")
	printFormat := flag.Bool("print-format", false, "print the nginx log_format of the crawl kind and exit")
	flag.Parse()
	if *printFormat {
		fmt.Println(CrawlFormat)
		return
	}
	var limit int64
	switch *kind {
	case "mixed":
		var err error
		if limit, err = parseSize(*size); err != nil {
			fmt.Fprintln(os.Stderr, "benchlog:", err)
			os.Exit(2)
		}
	case "spoofers", "genuine", "crawl":
		if *n < 1 || *sites < 1 || *days < 1 {
			fmt.Fprintln(os.Stderr, "benchlog: -n, -sites and -days must be 1 or more")
			os.Exit(2)
		}
	default:
		fmt.Fprintf(os.Stderr, "benchlog: unknown -kind %q: use mixed, spoofers, genuine or crawl\n", *kind)
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
	var err error
	switch *kind {
	case "mixed":
		err = writeMixed(bw, limit, *claimed, *others)
	case "spoofers":
		err = writeSpoofers(bw, *n)
	case "genuine":
		err = writeGenuine(bw, *n, *sites)
	case "crawl":
		err = writeCrawl(bw, *n, time.Duration(*days)*24*time.Hour)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchlog:", err)
		os.Exit(1)
	}
}

// writeMixed writes realistic combined lines up to limit bytes, a fraction
// claimed of them claiming to be the crawler. With others at 0 or more, a
// fraction others claims to be Googlebot and as many bingbot, and the rest
// carry browsers' and tools' User-Agents only.
func writeMixed(bw *bufio.Writer, limit int64, claimed, others float64) error {
	rng := rand.New(rand.NewPCG(1, 2))
	uas := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
		"curl/8.5.0",
	}
	bot := botAgents[:2]
	var googlebot, bingbot string
	if others >= 0 {
		googlebot, bingbot = uas[3], "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
		uas = append(uas[:3:3], uas[4:]...)
	}
	paths := []string{"/", "/index.html", "/blog/2026/11/some-post", "/static/app.js", "/static/style.css", "/images/logo.png", "/search?q=go+parsers", "/api/v1/items?page=2", "/about", "/contact"}
	statuses := []int{200, 200, 200, 200, 304, 404, 301, 500}
	t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("", 3600))
	var written int64
	line := make([]byte, 0, 512)
	for written < limit {
		t = t.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
		var ip, ua string
		if rng.Float64() < claimed {
			ua = bot[rng.IntN(2)]
			if rng.IntN(2) == 0 {
				ip = []string{"79.139.58.98", "79.139.58.121"}[rng.IntN(2)]
			} else {
				ip = fmt.Sprintf("%d.%d.%d.%d", 1+rng.IntN(220), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
			}
		} else if others >= 0 && rng.Float64() < 2*others {
			ua = googlebot
			if rng.IntN(2) == 0 {
				ua = bingbot
			}
			ip = fmt.Sprintf("%d.%d.%d.%d", 1+rng.IntN(220), rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
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
			return err
		}
		written += int64(n)
	}
	return nil
}

// botAgents are the crawler's User-Agents, and a few that impostors write.
var botAgents = func() []string {
	t := crawler.DefaultTitle()
	return []string{
		t + "/1.0 (+message@lohisoft.com)",
		t + "/1.0 (+https://lohisoft.com/bot)",
		"Mozilla/5.0 (compatible; " + t + "/1.0; +https://lohisoft.com/bot)",
		t + "/2.0",
		strings.ToLower(t),
	}
}()

// spooferAddr returns the i-th of a sequence of distinct public addresses:
// IPv4 from a bijection of the counter over the address space, skipping
// the ranges no rule blocks and the crawler's own /24; every tenth an IPv6
// address in 2a01:4f8::/32.
func spooferAddr(i int, next *uint32) netip.Addr {
	if i%10 == 9 {
		var b [16]byte
		b[0], b[1], b[2], b[3] = 0x2a, 0x01, 0x04, 0xf8
		binary.BigEndian.PutUint64(b[8:], uint64(i)*0x9e3779b97f4a7c15)
		return netip.AddrFrom16(b)
	}
	for {
		*next++
		v := *next * 2654435761 // odd: a bijection of uint32
		a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		if a.IsGlobalUnicast() && !a.IsPrivate() && v>>24 != 0 && v>>24 < 224 && v>>24 != 127 &&
			v>>22 != 100<<2|1 && v>>8 != 79<<16|139<<8|58 {
			return a
		}
	}
}

// writeSpoofers writes n combined lines claiming the token, each from an
// address of its own, a second apart at most.
func writeSpoofers(bw *bufio.Writer, n int) error {
	rng := rand.New(rand.NewPCG(3, 4))
	t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	paths := []string{"/", "/wp-login.php", "/admin/", "/search?q=cheap", "/.env", "/blog/2026/11/some-post", "/xmlrpc.php"}
	var next uint32
	line := make([]byte, 0, 256)
	for i := 0; i < n; i++ {
		t = t.Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
		line = line[:0]
		line = spooferAddr(i, &next).AppendTo(line)
		line = append(line, " - - ["...)
		line = t.AppendFormat(line, "02/Jan/2006:15:04:05 -0700")
		line = append(line, "] \"GET "...)
		line = append(line, paths[rng.IntN(len(paths))]...)
		line = append(line, " HTTP/1.1\" "...)
		line = strconv.AppendInt(line, int64([]int{200, 403, 404, 301}[rng.IntN(4)]), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(rng.IntN(20000)), 10)
		line = append(line, " \"-\" \""...)
		line = append(line, botAgents[rng.IntN(len(botAgents))]...)
		line = append(line, "\"\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// writeGenuine writes n vhost_combined lines from the crawler's addresses
// over the given number of sites. Round r visits every site once, site by
// site, 10 ms apart: a site's requests are sites×10 ms apart (1000 s for
// 100,000 sites), its first one /robots.txt, the others pages of their
// own.
func writeGenuine(bw *bufio.Writer, n, sites int) error {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	words := []string{"news", "blog", "shop", "docs", "about", "products", "help", "events", "archive", "team"}
	crawler := []string{"79.139.58.98", "79.139.58.121"}
	line := make([]byte, 0, 256)
	for i := 0; i < n; i++ {
		round, site := i/sites, i%sites
		t := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		line = line[:0]
		line = append(line, "site"...)
		line = strconv.AppendInt(line, int64(site), 10)
		line = append(line, ".example:443 "...)
		line = append(line, crawler[rng.IntN(2)]...)
		line = append(line, " - - ["...)
		line = t.AppendFormat(line, "02/Jan/2006:15:04:05 -0700")
		line = append(line, "] \"GET "...)
		status := 200
		if round == 0 {
			line = append(line, "/robots.txt"...)
		} else {
			line = append(line, '/')
			line = append(line, words[rng.IntN(len(words))]...)
			line = append(line, "/2026/"...)
			line = strconv.AppendInt(line, int64(rng.IntN(1000000)), 10)
			line = append(line, "-"...)
			line = append(line, words[rng.IntN(len(words))]...)
			line = append(line, ".html"...)
			if rng.IntN(50) == 0 {
				status = 404
			}
		}
		line = append(line, " HTTP/1.1\" "...)
		line = strconv.AppendInt(line, int64(status), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(rng.IntN(50000)), 10)
		line = append(line, " \"-\" \""...)
		line = append(line, botAgents[rng.IntN(2)]...)
		line = append(line, "\"\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// CrawlFormat is the nginx log_format of the crawl kind.
const CrawlFormat = `$host $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time "$sent_http_retry_after"`

// crawlReq is one request of the crawl kind, written when it ends.
type crawlReq struct {
	start, end time.Time
	line       []byte // all but the time
	path       string
	status     int
	retry      string
}

// byEnd orders requests by when they end, for writing.
type byEnd []*crawlReq

func (h byEnd) Len() int           { return len(h) }
func (h byEnd) Less(i, j int) bool { return h[i].end.Before(h[j].end) }
func (h byEnd) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byEnd) Push(x any)        { *h = append(*h, x.(*crawlReq)) }
func (h *byEnd) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// writeCrawl writes n requests of a crawler to one site over span (see
// the package documentation), in the order nginx logs them: by end.
func writeCrawl(bw *bufio.Writer, n int, span time.Duration) error {
	rng := rand.New(rand.NewPCG(7, 8))
	const site = "www.example.com"
	crawler := []string{"79.139.58.98", "79.139.58.121"}
	words := []string{"garden", "kitchen", "lamp", "chair", "table", "shelf", "rug", "mirror", "sofa", "desk", "bed", "vase"}
	t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("", 3600))
	// The mean gap between bursts, so that n requests fill the span.
	const perBurst = 6
	gap := span * 4 / 5 / time.Duration(n/perBurst+1)
	nextRobots := t
	robotsDown := rng.IntN(n) // the request at which /robots.txt answers 503 for an hour
	var downUntil time.Time   // robots.txt answers 503 until then
	var waitUntil time.Time   // after a 429 or 5xx the crawler waits, mostly
	denied := []string{}      // paths that answered 403
	pending := &byEnd{}
	write := func(r *crawlReq) error {
		line := append([]byte(nil), site...)
		line = append(line, ' ')
		line = append(line, r.line...)
		line = append(line, " - - ["...)
		line = r.end.AppendFormat(line, "02/Jan/2006:15:04:05 -0700")
		line = append(line, "] \"GET "...)
		line = append(line, r.path...)
		line = append(line, " HTTP/1.1\" "...)
		line = strconv.AppendInt(line, int64(r.status), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(200+rng.IntN(80000)), 10)
		line = append(line, " \"-\" \""...)
		line = append(line, botAgents[rng.IntN(2)]...)
		line = append(line, "\" "...)
		line = strconv.AppendFloat(line, r.end.Sub(r.start).Seconds(), 'f', 3, 64)
		line = append(line, " \""...)
		if r.retry == "" {
			line = append(line, '-')
		} else {
			line = append(line, r.retry...)
		}
		line = append(line, "\"\n"...)
		_, err := bw.Write(line)
		return err
	}
	for i := 0; i < n; {
		// A burst: a few connections, each fetching pages one after another.
		t = t.Add(time.Duration(rng.ExpFloat64() * float64(gap)))
		if t.Before(waitUntil) && rng.IntN(20) != 0 {
			t = waitUntil.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
		}
		conns := 1 + rng.IntN(3)
		size := 1 + rng.IntN(2*perBurst-1)
		starts := make([]time.Time, conns)
		for c := range starts {
			starts[c] = t.Add(time.Duration(rng.IntN(300)) * time.Millisecond)
		}
		for k := 0; k < size && i < n; k, i = k+1, i+1 {
			c := rng.IntN(conns)
			start := starts[c]
			dur := time.Duration(math.Exp(rng.NormFloat64()*0.8+math.Log(0.12)) * float64(time.Second))
			if rng.IntN(1000) == 0 {
				dur = time.Duration(2+rng.IntN(28)) * time.Second
			}
			dur = dur.Round(time.Millisecond)
			r := &crawlReq{start: start, end: start.Add(dur), status: 200,
				line: []byte(crawler[rng.IntN(len(crawler))])}
			switch {
			case i == robotsDown:
				downUntil = start.Add(time.Hour)
				fallthrough
			case !start.Before(nextRobots):
				r.path = "/robots.txt"
				if start.Before(downUntil) {
					r.status = 503
				}
				nextRobots = start.Add(20*time.Hour + time.Duration(rng.IntN(8*3600))*time.Second)
			default:
				r.path, r.status = crawlPage(rng, words, &denied)
			}
			switch {
			case r.status == 429:
				r.retry = "120"
				waitUntil = r.end.Add(120 * time.Second)
			case r.status >= 500:
				waitUntil = r.end.Add(time.Duration(30+rng.IntN(60)) * time.Second)
			}
			starts[c] = r.end.Add(time.Duration(50+rng.IntN(400)) * time.Millisecond)
			heap.Push(pending, r)
			for pending.Len() > 0 && (*pending)[0].end.Before(t) {
				if err := write(heap.Pop(pending).(*crawlReq)); err != nil {
					return err
				}
			}
		}
	}
	for pending.Len() > 0 {
		if err := write(heap.Pop(pending).(*crawlReq)); err != nil {
			return err
		}
	}
	return nil
}

// crawlPage returns a page of a large shop and the status it answers.
func crawlPage(rng *rand.Rand, words []string, denied *[]string) (string, int) {
	w := func() string { return words[rng.IntN(len(words))] }
	var path string
	switch x := rng.IntN(100); {
	case x < 45:
		path = "/product/" + strconv.Itoa(rng.IntN(2000000)) + "-" + w() + "-" + w()
	case x < 65:
		path = "/category/" + w() + "?page=" + strconv.Itoa(1+rng.IntN(400))
	case x < 80:
		path = fmt.Sprintf("/blog/20%02d/%02d/%s-%s-%s", 15+rng.IntN(12), 1+rng.IntN(12), w(), w(), w())
	case x < 88:
		path = "/images/" + strconv.Itoa(rng.IntN(5000000)) + ".webp"
	case x < 92:
		path = "/sitemap-" + strconv.Itoa(rng.IntN(300)) + ".xml.gz"
	case x < 93:
		if len(*denied) > 0 && rng.IntN(10) == 0 {
			return (*denied)[rng.IntN(len(*denied))], 200
		}
		path = "/account/" + strconv.Itoa(rng.IntN(100000)) + "/orders"
		if len(*denied) < 10000 {
			*denied = append(*denied, path)
		}
		return path, 403
	default:
		path = "/search?q=" + w() + "+" + w()
	}
	switch x := rng.IntN(1000); {
	case x < 70:
		return path, 304
	case x < 100:
		return path, 301
	case x < 140:
		return path, 404
	case x < 145:
		return path, 410
	case x < 147:
		return path, 429
	case x < 150:
		return path, []int{500, 502, 503}[rng.IntN(3)]
	}
	return path, 200
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
