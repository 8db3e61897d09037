package cmd

import (
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/completion"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// completeWith makes shell completion offer values for the flag name of f
// (completion.Values).
func completeWith(f *pflag.FlagSet, name string, values ...string) {
	completion.Values(f, name, values...)
}

// registerCompletions tells shell completion, for every command under
// root, the values of --format and --fail-on (as completeWith listed
// them), --log-format, and --crawler (the built-in crawlers, or a profile
// file).
func registerCompletions(root *cobra.Command) {
	completion.Register(root, map[string]cobra.CompletionFunc{
		"log-format": func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return parse.FormatCompletions(toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		},
		"crawler": func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			// A built-in name, or a profile file.
			return crawler.BuiltinNames(), cobra.ShellCompDirectiveDefault
		},
	})
}
