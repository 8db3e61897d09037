package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/spf13/cobra"
)

func newRobotsCmd(env *Env) *cobra.Command {
	c := &cobra.Command{
		Use:   "robots",
		Short: "Test URLs against a robots.txt, or gate CI on it",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return c.Help()
		},
	}
	c.AddCommand(newRobotsTestCmd(env), newRobotsCheckCmd(env))
	return c
}

func newRobotsTestCmd(env *Env) *cobra.Command {
	var userAgent, crawlerName, format, onFetchError, at string
	c := &cobra.Command{
		Use:   "test ROBOTS URL...",
		Short: "Say whether the crawler may fetch each URL, and which robots.txt line decides",
		Args: func(c *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return fail.Hinted(
					errors.New("robots test needs a robots.txt (ROBOTS) and at least one URL or path to test"),
					"lohibot-audit robots test robots.txt /private/ /blog/")
			case 1:
				return fail.Hinted(
					fmt.Errorf("robots test needs at least one URL or path to test against %s", args[0]),
					"name them after ROBOTS: lohibot-audit robots test robots.txt /private/ https://example.com/blog/")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			token, err := crawler.RobotsToken(crawlerName, c.Flags().Changed("user-agent"), userAgent)
			if err != nil {
				return err
			}
			write, err := render.PickRobotsTest(format)
			if err != nil {
				return err
			}
			policy, err := robots.ParseOnFetchError(onFetchError)
			if err != nil {
				return err
			}
			when, err := audit.ParseBound("at", at, env.Now())
			if err != nil {
				return err
			}
			src, err := loadRobots(c.Context(), env, args[0], policy)
			if err != nil {
				return err
			}
			warnEach(env, src.Warnings())
			rb, err := src.DecidingAt(when, c.Flags().Changed("at"), env.Now())
			if rb.Warning != "" {
				warnf(env, "%s", rb.Warning)
			}
			if err != nil {
				return err
			}
			if rb.Note != "" {
				fmt.Fprintf(env.Stderr, "lohibot-audit: %s\n", sanitize(rb.Note))
			}
			warnEach(env, src.OtherHostWarnings(args[1:]))
			results := rb.Robots.Test(token, args[1:], rb.Version)
			if c.Context().Err() != nil {
				return errInterrupted
			}
			if err := write(env.Stdout, results); err != nil {
				return writeFailed("the results", err)
			}
			return nil
		},
	}
	addRobotsTokenFlags(c, &crawlerName, &userAgent)
	c.Flags().StringVar(&format, "format", "text", "output format: text or json")
	completeWith(c.Flags(), "format", "text", "json")
	c.Flags().StringVar(&at, "at", "", "with dated versions (ROBOTS a directory or git:REPO:PATH), test the version in force at `TIME` (RFC 3339, a date, or a duration back from now; default now)")
	addOnFetchErrorFlag(c, &onFetchError)
	return c
}

// addOnFetchErrorFlag adds --on-fetch-error to a robots command.
func addOnFetchErrorFlag(c *cobra.Command, v *string) {
	c.Flags().StringVar(v, "on-fetch-error", "fail", "a ROBOTS URL that answers 5xx, times out or cannot be reached: fail (exit 3, could not check) or rfc (RFC 9309: disallow all)")
}

func newRobotsCheckCmd(env *Env) *cobra.Command {
	var userAgent, crawlerName, expect, onFetchError string
	var paths []string
	c := &cobra.Command{
		Use:   "check ROBOTS",
		Short: "Exit 1 unless robots.txt blocks (or allows) the crawler as expected",
		Args: func(c *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return fail.Hinted(
					errors.New("robots check needs a robots.txt (ROBOTS): a file, - for stdin, or an http(s):// URL"),
					"lohibot-audit robots check public/robots.txt --path /private/")
			case len(args) > 1:
				return fail.Hinted(
					fmt.Errorf("robots check takes one ROBOTS, not %d arguments", len(args)),
					"give each path to check with --path: lohibot-audit robots check robots.txt --path /private/ --path /admin/")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			token, err := crawler.RobotsToken(crawlerName, c.Flags().Changed("user-agent"), userAgent)
			if err != nil {
				return err
			}
			wantAllowed, err := robots.ParseExpect(expect)
			if err != nil {
				return err
			}
			policy, err := robots.ParseOnFetchError(onFetchError)
			if err != nil {
				return err
			}
			src, err := loadRobots(c.Context(), env, args[0], policy)
			if err != nil {
				return err
			}
			if c.Context().Err() != nil {
				return errInterrupted
			}
			gate := src.Check(token, paths, wantAllowed)
			warnEach(env, gate.Warnings())
			if err := gate.Write(env.Stdout, env.Getenv("GITHUB_ACTIONS") == "true"); err != nil {
				return writeFailed("the results", err)
			}
			if gate.Failed > 0 {
				fmt.Fprintf(env.Stderr, "lohibot-audit: robots check failed: %s\n", sanitize(gate.Failure()))
				return errFindings
			}
			return nil
		},
	}
	c.Flags().StringVar(&expect, "expect", "blocked", "what robots.txt must do for the crawler: blocked or allowed")
	c.Flags().StringArrayVar(&paths, "path", nil, "`PATH` (or URL) to check, repeatable (default /)")
	addRobotsTokenFlags(c, &crawlerName, &userAgent)
	addOnFetchErrorFlag(c, &onFetchError)
	return c
}

// addRobotsTokenFlags adds --crawler and --user-agent to a robots command.
func addRobotsTokenFlags(c *cobra.Command, crawlerName, userAgent *string) {
	c.Flags().StringVar(crawlerName, "crawler", crawler.Default, "the crawler whose robots.txt token to use: `NAME` of a built-in profile ("+strings.Join(crawler.BuiltinNames(), ", ")+") or a profile FILE")
	c.Flags().StringVar(userAgent, "user-agent", "", "the product `TOKEN` to test instead of the crawler's (a version such as /1.0 is ignored; * asks the * group)")
}
