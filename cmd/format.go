package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/logfiles"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// readOptions are the flags that say how log text is read, beside
// --log-format: the zone of times logged without an offset, and the most
// memory a decompressor may take.
type readOptions struct {
	TimeZone string
	MaxDict  string
}

func addReadFlags(f *pflag.FlagSet, o *readOptions) {
	f.StringVar(&o.TimeZone, "timezone", "", "IANA `ZONE` (Europe/Berlin, UTC) of logged times without a UTC offset (Apache %{…}t without %z, HAProxy); default the machine's zone")
	f.StringVar(&o.MaxDict, "max-dict", fmt.Sprintf("%dMiB", parse.DefaultMaxDict>>20), "most memory an xz or zstd decompressor may take for its dictionary or window (`SIZE`: 64MiB, 1GiB); a larger archive is refused")
}

// settings checks the flags (parse.ParseReadSettings).
func (o *readOptions) settings(getenv func(string) string) (parse.ReadSettings, error) {
	return parse.ParseReadSettings(o.TimeZone, o.MaxDict, getenv)
}

// formatOptions are the flags of `format test`.
type formatOptions struct {
	LogFormat string
	Lines     int
	Crawlers  []string
	readOptions
}

func newFormatCmd(env *Env) *cobra.Command {
	c := &cobra.Command{
		Use:   "format",
		Short: "See how a log format reads a log",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return c.Help()
		},
	}
	c.AddCommand(newFormatTestCmd(env))
	return c
}

func newFormatTestCmd(env *Env) *cobra.Command {
	o := &formatOptions{}
	c := &cobra.Command{
		Use:   "test [FILE|-]",
		Short: "Show how --log-format reads the first lines of a log, field by field, or where a line leaves it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runFormatTest(c.Context(), env, o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.LogFormat, "log-format", "auto", "the log format to test: auto, a built-in name, a preset with extra fields (combined+sec), 'nginx:<log_format>' or 'apache:<LogFormat>'")
	f.IntVar(&o.Lines, "lines", 10, "how many lines to show")
	addCrawlerFlag(f, &o.Crawlers)
	addReadFlags(f, &o.readOptions)
	return c
}

func runFormatTest(ctx context.Context, env *Env, o *formatOptions, args []string) error {
	given, err := parse.ParseFormatSpec(o.LogFormat)
	if err != nil {
		return fail.Hinted(err, "see 'lohibot-audit logs --help' for the formats")
	}
	if o.Lines < 1 {
		return fail.Usagef("--lines %d: give 1 or more", o.Lines)
	}
	read, err := o.readOptions.settings(env.Getenv)
	if err != nil {
		return err
	}
	profiles, err := crawler.Resolve(o.Crawlers)
	if err != nil {
		return err
	}
	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	if name == "-" && env.StdinTTY() {
		return fail.Hinted(errors.New("no log given"), "name a file, or pipe lines in: head access.log | lohibot-audit format test -")
	}
	logs, err := logfiles.Expand([]string{name})
	if err != nil {
		return err
	}
	if len(logs.Files) != 1 {
		return fail.Usagef("%s matches %d files: format test reads one", name, len(logs.Files))
	}
	name = logs.Files[0]
	in, _, err := logfiles.Opener(env.Stdin, name)(ctx)
	if err != nil {
		return fail.New(fail.Incomplete, fmt.Errorf("cannot read %s: %v", name, err), "")
	}
	defer in.Close()
	res, err := parse.TestFormat(in, given, parse.TestOptions{Name: name, Lines: o.Lines, Location: read.Location, MaxDict: read.MaxDict, Claims: parse.NewTokenSet(crawler.TokenGroups(profiles))})
	if res != nil {
		render.FormatTest(env.Stdout, res, read.ZoneName)
	}
	if err != nil {
		return fail.New(fail.Incomplete, err, "")
	}
	return nil
}
