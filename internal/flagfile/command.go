package flagfile

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// LoadCommand is Load for the flags of the command c: the keys the file
// may hold are the flags of every command of c's program (its root and
// all the commands under it), so that one file serves them all.
func LoadCommand(c *cobra.Command, explicit string, getenv func(string) string) error {
	return Load(c.Flags(), commandFlags(c.Root()), explicit, getenv)
}

// commandFlags returns the names of the flags of root and of every
// command under it.
func commandFlags(root *cobra.Command) map[string]bool {
	names := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return names
}
