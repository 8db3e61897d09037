package render

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// findChromium returns Debian's chromium, or skips the test when it is
// missing and CI is not set (with CI set, a missing browser fails).
func findChromium(t *testing.T) string {
	return testutil.NeedTool(t, ".ci/install-browser", "chromium", "chromium-browser")
}

// countingProxy accepts connections on loopback, notes the first line of
// each (the proxy request: GET http://… or CONNECT host:443) and closes
// them: nothing is forwarded anywhere.
type countingProxy struct {
	ln    net.Listener
	conns atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	first []string
}

func startCountingProxy(t *testing.T) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				p.mu.Lock()
				p.first = append(p.first, strings.TrimSpace(line))
				p.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *countingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.first)
}

// loadedPage is a page open in headless Chromium, with what the browser
// reported while it loaded.
type loadedPage struct {
	t   *testing.T
	ctx context.Context
	url string

	mu       sync.Mutex
	console  []string // console calls, exceptions and browser log entries
	requests []string // every request the page's target sent
	proxy    *countingProxy
}

// openInChromium writes html to a file and opens it from a file:// URL in
// headless Chromium, in a browser context of its own whose proxy counts
// every connection the page makes (requests, prefetches, preconnects).
// Chromium itself talks to Google's services at start (the account list of
// the profile, the component updater) whatever its flags say; that goes to
// another proxy that is not counted, so nothing leaves the machine.
func openInChromium(t *testing.T, html []byte) *loadedPage {
	t.Helper()
	chromium := findChromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	lp := &loadedPage{t: t, url: (&url.URL{Scheme: "file", Path: file}).String()}

	sink := startCountingProxy(t)
	lp.proxy = startCountingProxy(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "NetworkTimeServiceQuerying"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.ProxyServer("http://" + sink.ln.Addr().String()),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	// Only to detect a hang: a report opens in well under a second on an
	// idle machine, but a test run on a machine busy with other work
	// (load 30 on 2 cores) has taken 90 s for the whole session.
	actx, cancelTimeout := context.WithTimeout(actx, 10*time.Minute)
	t.Cleanup(cancelTimeout)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("chromium did not start: %v", err)
	}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
		p.ProxyServer = "http://" + lp.proxy.ln.Addr().String()
		p.ProxyBypassList = "<-loopback>" // loopback too goes through it
	}))
	t.Cleanup(cancel)
	lp.ctx = ctx

	err := chromedp.Listen(ctx, func(ev any) {
		lp.mu.Lock()
		defer lp.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value))
			}
			lp.console = append(lp.console, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		case *runtime.EventExceptionThrown:
			lp.console = append(lp.console, "exception: "+e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			lp.console = append(lp.console, fmt.Sprintf("log %s %s: %s (%s)", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		case *network.EventRequestWillBeSent:
			lp.requests = append(lp.requests, e.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(lp.url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("chromium did not load the page within 10 minutes: %v", err)
		}
		t.Fatalf("chromium: %v", err)
	}
	return lp
}

// eval evaluates a JavaScript expression in the page (through DevTools:
// the page's policy, which forbids scripts, does not apply to it).
func eval[T any](lp *loadedPage, js string) T {
	lp.t.Helper()
	v, err := chromedp.Run(lp.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		lp.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// otherRequests returns the requests other than the page's own document.
func (lp *loadedPage) otherRequests() []string {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	var out []string
	for _, u := range lp.requests {
		if u != lp.url {
			out = append(out, u)
		}
	}
	return out
}

func (lp *loadedPage) consoleMessages() []string {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return slices.Clone(lp.console)
}

// TestBrowserSample opens the sample report in headless Chromium and checks
// that it loads nothing, logs nothing, has its sections and marks, and fits
// the window. It writes a screenshot to $RENDER_SCREENSHOT (a PNG path; the
// README's is docs/report-sample.png) or into the test's temporary
// directory.
func TestBrowserSample(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, samplePage(t)); err != nil {
		t.Fatal(err)
	}
	lp := openInChromium(t, buf.Bytes())

	shot, err := chromedp.Run(lp.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	small, err := paletted(shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := os.Getenv("RENDER_SCREENSHOT")
	if out == "" {
		out = filepath.Join(t.TempDir(), "report-sample.png")
	}
	if err := os.WriteFile(out, small, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the sample report (%d bytes): %s", len(small), out)

	for _, c := range lp.consoleMessages() {
		t.Errorf("the page logged: %s", c)
	}
	if r := lp.otherRequests(); len(r) > 0 {
		t.Errorf("the page requested %q", r)
	}
	if n := lp.proxy.conns.Load(); n != 0 {
		t.Errorf("the page opened %d connections, want none: %q", n, lp.proxy.requests())
	}
	checks := []struct {
		what string
		js   string
		want int
	}{
		{"sections", `document.querySelectorAll("section#summary, section#sites, section#addresses, section#malformed, section#warnings").length`, 5},
		{"timeline drawings (the overview and crawls 1 and 2)", `document.querySelectorAll("svg.tl.wide").length`, 3},
		// The overview clusters the seven violations of a four-minute crawl
		// on a 28-hour axis into one marker; crawl 2 shows each of them.
		{"violation markers", `document.querySelectorAll("svg.tl.wide a.vm").length`, 1 + 7},
		{"robots.txt marks (the overview and crawl 1)", `document.querySelectorAll("svg.tl.wide circle.rb").length`, 2},
		{"budget windows over budget", `document.querySelectorAll("svg.tl.wide g.band.over").length`, 1},
		{"lanes of the overview (genuine and spoofed)", `document.querySelector("svg.tl.wide").querySelectorAll("rect.lane").length`, 2},
		{"violation rows", `document.querySelectorAll("table.violations tbody tr[id]").length`, 7},
		{"address rows", `document.querySelectorAll("table.addresses tbody tr").length`, 6},
		{"malformed rows", `document.querySelectorAll("table.malformed tbody tr").length`, 2},
		{"warnings", `document.querySelectorAll("ul.warnings li").length`, 1},
		{"scripts", `document.scripts.length`, 0},
		{"marker targets that exist", `[...document.querySelectorAll("svg.tl.wide a.vm")].filter(a => document.getElementById(a.getAttribute("href").slice(1))).length`, 8},
		{"SVG text that spills out of its drawing", `[...document.querySelectorAll("svg.tl")].flatMap(s => { const b = s.getBoundingClientRect(); return [...s.querySelectorAll("text")].filter(x => { const r = x.getBoundingClientRect(); return r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1 }) }).length`, 0},
	}
	for _, c := range checks {
		if got := eval[int](lp, c.js); got != c.want {
			t.Errorf("%s: got %d, want %d", c.what, got, c.want)
		}
	}
	if w, inner := eval[int](lp, `document.documentElement.scrollWidth`), eval[int](lp, `window.innerWidth`); w > inner {
		t.Errorf("the page is wider than the window: %d > %d", w, inner)
	}
	if title := eval[string](lp, `document.title`); !strings.Contains(title, "www.example.org") {
		t.Errorf("title %q does not name the site", title)
	}
	// The hostile strings of the sample are shown, escaped, as text.
	if got := eval[string](lp, `document.querySelector("table.violations tr#site-1-v7 td.path").textContent`); got != `/search/|<script>[x](javascript:1)\x1b]0;owned\x07` {
		t.Errorf("path of violation 7 reads %q", got)
	}
}

// TestBrowserHostile opens the page of hostile strings: nothing runs,
// nothing loads, and the strings neither add elements nor widen the page
// past the window.
func TestBrowserHostile(t *testing.T) {
	lp := openInChromium(t, render(t, hostilePage(t)))
	for _, c := range lp.consoleMessages() {
		t.Errorf("the page logged: %s", c)
	}
	if r := lp.otherRequests(); len(r) > 0 {
		t.Errorf("the page requested %q", r)
	}
	if n := lp.proxy.conns.Load(); n != 0 {
		t.Errorf("the page opened %d connections, want none: %q", n, lp.proxy.requests())
	}
	for what, js := range map[string]string{
		"scripts":            `document.scripts.length`,
		"images":             `document.images.length`,
		"iframes":            `document.querySelectorAll("iframe").length`,
		"handlers":           `[...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.startsWith("on"))).length`,
		"links off the page": `[...document.querySelectorAll("a")].filter(a => !a.getAttribute("href").startsWith("#")).length`,
	} {
		if n := eval[int](lp, js); n != 0 {
			t.Errorf("%s: %d, want none", what, n)
		}
	}
	if w, inner := eval[int](lp, `document.documentElement.scrollWidth`), eval[int](lp, `window.innerWidth`); w > inner {
		t.Errorf("the hostile strings widen the page past the window: %d > %d", w, inner)
	}
}

// TestBrowserHarnessSeesRequests checks that the harness of
// TestBrowserSample notices a page that loads something: a page without
// the policy that fetches an image, preconnects and writes to the console.
func TestBrowserHarnessSeesRequests(t *testing.T) {
	page := []byte(`<!DOCTYPE html><html><head><title>leaky</title>
<link rel="preconnect" href="http://198.51.100.7/">
</head><body><img src="http://192.0.2.1/pixel.png" alt="">
<script>console.warn("warned")</script></body></html>`)
	lp := openInChromium(t, page)
	// The image request is made by the time the load event fires; the
	// preconnect may come later, so it is not required here.
	if r := lp.otherRequests(); !slices.Contains(r, "http://192.0.2.1/pixel.png") {
		t.Errorf("the harness did not see the image request: %q", r)
	}
	if n := lp.proxy.conns.Load(); n == 0 {
		// The connection may still be on its way to the proxy: wait for it
		// (only a hang fails, at the test's timeout).
		for lp.proxy.conns.Load() == 0 {
			if lp.ctx.Err() != nil {
				t.Fatal("the page's proxy never saw a connection")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if c := lp.consoleMessages(); !slices.ContainsFunc(c, func(s string) bool { return strings.Contains(s, "warned") }) {
		t.Errorf("the harness did not see the console warning: %q", c)
	}
}

// paletted re-encodes a screenshot with at most 256 colours, those used
// most, each pixel taking the nearest: a page of text and flat colours
// keeps its look at a fraction of the size.
func paletted(pngData []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	type cc struct {
		c color.RGBA
		n int
	}
	var all []cc
	for c, n := range counts {
		all = append(all, cc{c, n})
	}
	key := func(c color.RGBA) uint32 {
		return uint32(c.R)<<24 | uint32(c.G)<<16 | uint32(c.B)<<8 | uint32(c.A)
	}
	slices.SortFunc(all, func(a, b cc) int { return cmp.Or(-cmp.Compare(a.n, b.n), cmp.Compare(key(a.c), key(b.c))) })
	var pal color.Palette
	for i := 0; i < len(all) && i < 256; i++ {
		pal = append(pal, all[i].c)
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
