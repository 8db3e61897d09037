package cmd

import (
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// completionValues is the annotation of a flag that lists the values
// shell completion offers for it (completeWith).
const completionValues = "lohibot-audit/values"

// failOnValues are the values of --fail-on.
var failOnValues = []string{"spoofed", "violations", "any"}

// completeWith makes shell completion offer values for the flag name of f.
func completeWith(f *pflag.FlagSet, name string, values ...string) {
	_ = f.SetAnnotation(name, completionValues, values)
}

// registerCompletions tells shell completion, for every command under
// root, the values of --format and --fail-on (as completeWith listed
// them), --log-format, and --crawler (the built-in crawlers, or a profile
// file).
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			var complete cobra.CompletionFunc
			switch {
			case len(fl.Annotations[completionValues]) > 0:
				values := fl.Annotations[completionValues]
				complete = cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
			case fl.Name == "log-format":
				complete = func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
					return parse.FormatCompletions(toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
				}
			case fl.Name == "crawler":
				complete = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					// A built-in name, or a profile file.
					return crawler.BuiltinNames(), cobra.ShellCompDirectiveDefault
				}
			default:
				return
			}
			_ = c.RegisterFlagCompletionFunc(fl.Name, complete)
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
