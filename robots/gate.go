package robots

import (
	"fmt"
	"io"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/gha"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/internal/stickyio"
	"github.com/lohisoft/lohibot-audit/parse"
)

// TestResult is what `robots test` says of one URL (its JSON line).
type TestResult struct {
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
	Line    int    `json:"line"`
	Rule    string `json:"rule"`
	Why     string `json:"why,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// Version is the version of a dated robots.txt that decided (its
	// name and the time it came into force).
	Version string `json:"version,omitempty"`
}

// Test decides each target for token by r; version names the dated
// version r is ("" for a single robots.txt).
func (r *Robots) Test(token string, targets []string, version string) []TestResult {
	out := make([]TestResult, 0, len(targets))
	for _, target := range targets {
		d := r.Decide(token, target)
		out = append(out, TestResult{URL: target, Allowed: d.Allowed, Line: d.Line, Rule: d.Rule, Why: d.Why, Agent: d.Agent, Version: version})
	}
	return out
}

// Reason is the deciding line or rule of the result, as Decision.Reason.
func (t TestResult) Reason() string { return Decision{Line: t.Line, Rule: t.Rule, Why: t.Why}.Reason() }

// InForce is the robots.txt of rs in force at when, and for dated
// versions the version that decides (nil for a single robots.txt, in
// force at every time). A time before the first version is a usage error.
func (rs *Source) InForce(when time.Time) (*Robots, *Version, error) {
	if rs.History == nil {
		return rs.Robots, nil, nil
	}
	rb, v := rs.At(when)
	if rb == nil {
		first := rs.History.Versions[0]
		return nil, nil, fail.Hinted(
			fmt.Errorf("robots.txt %s has no version in force at %s: the first is %s", rs.Name, when.UTC().Format(time.RFC3339), first.Label()),
			"give --at a time on or after "+first.From.UTC().Format(time.RFC3339))
	}
	return rb, v, nil
}

// ParseExpect reads an --expect value: whether the crawler must be
// allowed ("allowed") rather than blocked ("blocked").
func ParseExpect(v string) (wantAllowed bool, err error) {
	switch v {
	case "blocked":
		return false, nil
	case "allowed":
		return true, nil
	}
	return false, fail.Usagef("unknown --expect %q: use blocked or allowed", v)
}

// PathCheck is what `robots check` says of one path: its decision,
// whether it is the one expected, and the message that explains it.
type PathCheck struct {
	Path     string
	Decision Decision
	OK       bool
	Message  string
}

// Gate is what `robots check` found: whether Source blocks (WantAllowed
// false) or allows Token for each path, in the order given, and how many
// paths failed.
type Gate struct {
	Source      *Source
	Token       string
	WantAllowed bool
	Checks      []PathCheck
	Failed      int
}

// Check checks that rs blocks (wantAllowed false) or allows token for
// each path; no paths checks "/".
func (rs *Source) Check(token string, paths []string, wantAllowed bool) *Gate {
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	g := &Gate{Source: rs, Token: token, WantAllowed: wantAllowed}
	expect := "blocked"
	if wantAllowed {
		expect = "allowed"
	}
	for _, p := range paths {
		d := rs.Robots.Decide(token, p)
		c := PathCheck{Path: p, Decision: d, OK: d.Allowed == wantAllowed, Message: rs.Explain(token, p, d)}
		if !c.OK {
			c.Message += " (expected " + expect + ")"
			g.Failed++
		}
		g.Checks = append(g.Checks, c)
	}
	return g
}

// Failure says what failed: "robots.txt does not block ExampleBot for 1
// of 2 paths". Text from the command line is not escaped.
func (g *Gate) Failure() string {
	what := "block"
	if g.WantAllowed {
		what = "allow"
	}
	n := len(g.Checks)
	return fmt.Sprintf("%s does not %s %s for %d of %d %s", g.Source.Name, what, g.Token, g.Failed, n, nouns.Of(n, "path", "paths"))
}

// Annotation is the GitHub Actions error of a failed check, on the
// robots.txt line that decided it.
func (g *Gate) Annotation(c PathCheck) string {
	return gha.Command("error", g.Source.File, c.Decision.Line, "robots check", c.Message)
}

// Notice is the GitHub Actions notice of a gate that passed: "robots.txt
// blocks ExampleBot for all 2 paths checked".
func (g *Gate) Notice() string {
	what, paths := "blocks", fmt.Sprintf("all %d paths", len(g.Checks))
	if g.WantAllowed {
		what = "allows"
	}
	if len(g.Checks) == 1 {
		paths = "the 1 path"
	}
	return gha.Command("notice", g.Source.File, 0, "robots check", fmt.Sprintf("%s %s %s for %s checked", g.Source.Name, what, g.Token, paths))
}

// WarningAnnotations are the parser's warnings as GitHub Actions
// warnings, each on its line of the file when it names one.
func (rs *Source) WarningAnnotations() []string {
	var out []string
	for _, w := range rs.Robots.Warnings() {
		out = append(out, gha.Command("warning", rs.File, LineOf(w), "robots.txt", w))
	}
	return out
}

// Deciding is the robots.txt of a source that decides at a time, with
// what to say of the choice.
type Deciding struct {
	Robots *Robots
	// Version labels the dated version that decides ("" for a single
	// robots.txt), as TestResult.Version does.
	Version string
	// Note says which dated version decides at which time; Warning, that
	// --at changes nothing (a single robots.txt given --at). Each is ""
	// when there is nothing to say. Text from the command line is not
	// escaped.
	Note, Warning string
}

// DecidingAt is the robots.txt of rs in force at when, given --at (atGiven),
// else at now (InForce).
func (rs *Source) DecidingAt(when time.Time, atGiven bool, now time.Time) (Deciding, error) {
	var d Deciding
	if !atGiven {
		when = now
	} else if rs.History == nil {
		d.Warning = fmt.Sprintf("robots.txt %s is a single version: --at changes nothing", rs.Name)
	}
	rb, v, err := rs.InForce(when)
	if err != nil {
		return d, err
	}
	d.Robots = rb
	if v != nil {
		d.Version = v.Label()
		d.Note = fmt.Sprintf("robots.txt %s: %s decides at %s", rs.Name, d.Version, when.UTC().Format(time.RFC3339))
	}
	return d, nil
}

// Warnings are what stderr says of the gate: the source's (Source.Warnings),
// then one for each path checked on another host than the robots.txt URL
// (Source.OtherHostWarnings).
func (g *Gate) Warnings() []string {
	paths := make([]string, len(g.Checks))
	for i, c := range g.Checks {
		paths[i] = c.Path
	}
	return append(g.Source.Warnings(), g.Source.OtherHostWarnings(paths)...)
}

// Write writes the gate's result to w, a line for each path checked:
// "ok: MESSAGE" or "FAIL: MESSAGE", the message escaped. Within GitHub
// Actions (inGHA) the parser's warnings come first as warning annotations
// (WarningAnnotations), each failing path is followed by its error
// annotation, and a gate that passed ends with its notice. It returns the
// first write error.
func (g *Gate) Write(w io.Writer, inGHA bool) error {
	out := &stickyio.Writer{W: w}
	if inGHA {
		for _, a := range g.Source.WarningAnnotations() {
			fmt.Fprintln(out, a)
		}
	}
	for _, c := range g.Checks {
		status := "ok"
		if !c.OK {
			status = "FAIL"
		}
		fmt.Fprintf(out, "%s: %s\n", status, parse.EscapeControl(c.Message))
		if inGHA && !c.OK {
			fmt.Fprintln(out, g.Annotation(c))
		}
	}
	if inGHA && g.Failed == 0 {
		fmt.Fprintln(out, g.Notice())
	}
	return out.Err()
}
