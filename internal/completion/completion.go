// Package completion tells shell completion what a command's flags take: a
// flag's fixed values are written on the flag itself (Values), where man
// pages can read them too (ValuesOf), and Register turns them, and any
// completion function the program gives by flag name, into cobra's
// completions for every command of a program.
package completion

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// annotation is the annotation of a flag that lists the values shell
// completion offers for it.
const annotation = "lohibot-audit/values"

// Values makes shell completion offer values for the flag name of f.
func Values(f *pflag.FlagSet, name string, values ...string) {
	_ = f.SetAnnotation(name, annotation, values)
}

// ValuesOf returns the values given to Values for fl, or nil.
func ValuesOf(fl *pflag.Flag) []string { return fl.Annotations[annotation] }

// Register registers shell completion for every flag of root and of the
// commands under it: the values given with Values, else byName's function
// of the flag's name, else none (cobra then offers files).
func Register(root *cobra.Command, byName map[string]cobra.CompletionFunc) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			complete := byName[fl.Name]
			if values := ValuesOf(fl); len(values) > 0 {
				complete = cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
			}
			if complete != nil {
				_ = c.RegisterFlagCompletionFunc(fl.Name, complete)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
