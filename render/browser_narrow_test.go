package render

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// renderedTextJS lists the smallest rendered font size (CSS px on the
// screen) of the visible text of the page: HTML text by its computed size,
// SVG text by its size in user units times the drawing's scale.
const renderedTextJS = `(() => {
	let html = 1e9, svg = 1e9, where = {html: "", svg: ""};
	const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 };
	for (const e of document.querySelectorAll("body *")) {
		if (e instanceof SVGElement || !visible(e)) continue;
		if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== "")) continue;
		const px = parseFloat(getComputedStyle(e).fontSize);
		if (px < html) { html = px; where.html = e.tagName + "." + e.className }
	}
	for (const s of document.querySelectorAll("svg.tl")) {
		if (!visible(s)) continue;
		const k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
		for (const t of s.querySelectorAll("text")) {
			const px = parseFloat(getComputedStyle(t).fontSize) * k;
			if (px < svg) { svg = px; where.svg = s.getAttribute("class") + " " + t.getAttribute("class") + " " + t.textContent }
		}
	}
	return JSON.stringify({html, svg, where});
})()`

// tooWideJS lists the visible elements that reach past the viewport's
// edges.
const tooWideJS = `[...document.querySelectorAll("body *")].filter(e => {
	const r = e.getBoundingClientRect();
	return r.width > 0 && r.height > 0 && (r.right > window.innerWidth + 0.5 || r.left < -0.5);
}).slice(0, 10).map(e => e.tagName.toLowerCase() + "." + (e.getAttribute("class") || "") + " " + Math.round(e.getBoundingClientRect().left) + ".." + Math.round(e.getBoundingClientRect().right))`

// TestBrowserNarrow opens the sample report at 420 px, a phone's width:
// nothing reaches past the viewport's edges, every text is at least 11 px
// (the timelines' at least 9.5 px: the narrow drawings are drawn at about
// the size they are shown), the narrow drawings replace the wide ones, and
// their markers lead to the violations' rows. It writes a screenshot to
// $RENDER_SCREENSHOT_NARROW or into the test's temporary directory.
func TestBrowserNarrow(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, samplePage(t)); err != nil {
		t.Fatal(err)
	}
	lp := openInChromium(t, buf.Bytes())
	if _, err := chromedp.Run(lp.ctx, chromedp.EmulateViewport(420, 900, chromedp.EmulateMobile)); err != nil {
		t.Fatalf("viewport: %v", err)
	}
	if w := eval[int](lp, `window.innerWidth`); w != 420 {
		t.Fatalf("the window is %d px wide, want 420", w)
	}
	if w := eval[int](lp, `document.documentElement.scrollWidth`); w > 420 {
		t.Errorf("the page is %d px wide at 420 px", w)
	}
	if wide := eval[[]string](lp, tooWideJS); len(wide) > 0 {
		t.Errorf("elements reach past the edges of a 420 px window: %q", wide)
	}
	var sizes struct {
		HTML, SVG float64
		Where     struct{ HTML, SVG string }
	}
	if err := json.Unmarshal([]byte(eval[string](lp, renderedTextJS)), &sizes); err != nil {
		t.Fatal(err)
	}
	t.Logf("at 420 px: smallest text %.1f px (%s), smallest timeline text %.1f px (%s)", sizes.HTML, sizes.Where.HTML, sizes.SVG, sizes.Where.SVG)
	if sizes.HTML < 11 {
		t.Errorf("text of %.1f px (%s), want at least 11", sizes.HTML, sizes.Where.HTML)
	}
	if sizes.SVG < 9.5 {
		t.Errorf("timeline text of %.1f px (%s), want at least 9.5", sizes.SVG, sizes.Where.SVG)
	}
	for what, c := range map[string]struct {
		js   string
		want int
	}{
		"narrow drawings shown":         {`[...document.querySelectorAll("svg.tl.narrow")].filter(s => s.getBoundingClientRect().width > 0).length`, 3},
		"wide drawings shown":           {`[...document.querySelectorAll("svg.tl.wide")].filter(s => s.getBoundingClientRect().width > 0).length`, 0},
		"violation rows as cards":       {`[...document.querySelectorAll("table.violations tbody tr")].filter(r => getComputedStyle(r).display === "block").length`, 7},
		"header rows shown":             {`[...document.querySelectorAll("thead")].filter(h => h.getBoundingClientRect().height > 0).length`, 0},
		"narrow markers without target": {`[...document.querySelectorAll("svg.tl.narrow a.vm")].filter(a => !document.getElementById(a.getAttribute("href").slice(1))).length`, 0},
		"SVG text out of its drawing":   {`[...document.querySelectorAll("svg.tl.narrow")].flatMap(s => { const b = s.getBoundingClientRect(); return [...s.querySelectorAll("text")].filter(x => { const r = x.getBoundingClientRect(); return r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1 }) }).length`, 0},
	} {
		if got := eval[int](lp, c.js); got != c.want {
			t.Errorf("%s: got %d, want %d", what, got, c.want)
		}
	}
	if n := eval[int](lp, `document.querySelectorAll("svg.tl.narrow a.vm").length`); n == 0 {
		t.Error("the narrow drawings mark no violation")
	}
	// Each card names its cells: the kind of violation 1 reads "kind robots".
	if got := eval[string](lp, `getComputedStyle(document.querySelector("#site-1-v1 td:nth-child(3)"), "::before").content`); got != `"kind"` {
		t.Errorf("the kind cell of a violation card is labelled %s, want \"kind\"", got)
	}

	shot, err := chromedp.Run(lp.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	small, err := paletted(shot)
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("RENDER_SCREENSHOT_NARROW")
	if out == "" {
		out = filepath.Join(t.TempDir(), "report-sample-420.png")
	}
	if err := os.WriteFile(out, small, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot at 420 px (%d bytes): %s", len(small), out)
}

// TestBrowserPrint prints the sample report to PDF as Chromium's print
// dialog would: landscape pages, the wide drawings, the navigation left
// out, hidden lists opened.
func TestBrowserPrint(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, samplePage(t)); err != nil {
		t.Fatal(err)
	}
	lp := openInChromium(t, buf.Bytes())
	_, err := chromedp.Run(lp.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
		return err
	}))
	if err != nil {
		t.Fatalf("print media: %v", err)
	}
	for what, c := range map[string]struct {
		js   string
		want int
	}{
		"wide drawings printed":     {`[...document.querySelectorAll("svg.tl.wide")].filter(s => s.getBoundingClientRect().width > 0).length`, 3},
		"narrow drawings printed":   {`[...document.querySelectorAll("svg.tl.narrow")].filter(s => s.getBoundingClientRect().width > 0).length`, 0},
		"navigation printed":        {`document.querySelector("nav").getBoundingClientRect().height > 0 ? 1 : 0`, 0},
		"closed lists printed shut": {`[...document.querySelectorAll("details:not([open])")].filter(d => [...d.children].some(c => c.tagName !== "SUMMARY" && c.getBoundingClientRect().height === 0)).length`, 0},
	} {
		if got := eval[int](lp, c.js); got != c.want {
			t.Errorf("%s: got %d, want %d", what, got, c.want)
		}
	}
	var pdf []byte
	_, err = chromedp.Run(lp.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		yes := true
		res, err := cdp.Call(ctx, tg, page.PrintToPDF, page.PrintToPDFParams{PreferCSSPageSize: &yes, PrintBackground: &yes})
		if err == nil {
			pdf = res.Data
		}
		return err
	}))
	if err != nil {
		t.Fatalf("printing: %v", err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("the print is not a PDF: %.20q", pdf)
	}
	boxes := regexp.MustCompile(`/MediaBox\s*\[\s*0 0 ([0-9.]+) ([0-9.]+)\s*\]`).FindAllSubmatch(pdf, -1)
	if len(boxes) == 0 {
		t.Fatal("the PDF names no page size")
	}
	for _, b := range boxes {
		w, _ := strconv.ParseFloat(string(b[1]), 64)
		h, _ := strconv.ParseFloat(string(b[2]), 64)
		if w <= h {
			t.Errorf("a printed page is %.0f×%.0f pt, want landscape", w, h)
		}
	}
	t.Logf("printed: %d pages, %d bytes of PDF", len(boxes), len(pdf))
}
