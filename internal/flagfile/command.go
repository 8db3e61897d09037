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

// Reload reads the config file explicit again for the command c, as a
// running command does when asked to (watch's SIGHUP): fresh, a new
// command with c's flags none of which is set, takes the values c's
// command line gave, then the file's for the others (Load, with the keys
// of c's program: fresh need not be part of it).
func Reload(c, fresh *cobra.Command, explicit string, getenv func(string) string) error {
	var err error
	c.Flags().Visit(func(fl *pflag.Flag) {
		nf := fresh.Flags().Lookup(fl.Name)
		if nf == nil || err != nil {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			err = nf.Value.(pflag.SliceValue).Replace(sv.GetSlice())
		} else {
			err = nf.Value.Set(fl.Value.String())
		}
		nf.Changed = true
	})
	if err != nil {
		return err
	}
	return Load(fresh.Flags(), commandFlags(c.Root()), explicit, getenv)
}
