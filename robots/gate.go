package robots

import (
	"fmt"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// PathCheck is what `robots check` says of one path: its decision,
// whether it is the one expected, and the message that explains it.
type PathCheck struct {
	Path     string
	Decision Decision
	OK       bool
	Message  string
}

// Check checks that rs blocks (wantAllowed false) or allows token for
// each path; expect words what was wanted ("blocked", "allowed").
func (rs *Source) Check(token string, paths []string, wantAllowed bool, expect string) (checks []PathCheck, failed int) {
	for _, p := range paths {
		d := rs.Robots.Decide(token, p)
		c := PathCheck{Path: p, Decision: d, OK: d.Allowed == wantAllowed, Message: rs.Explain(token, p, d)}
		if !c.OK {
			c.Message += " (expected " + expect + ")"
			failed++
		}
		checks = append(checks, c)
	}
	return checks, failed
}
