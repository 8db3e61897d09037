// Command lohibot-audit audits what a search crawler (by default the one
// whose operator the tool is named after), and those who pretend to be it,
// did on a web site. See the README or --help.
package main

import (
	"os"

	"github.com/lohisoft/lohibot-audit/cmd"
)

func main() { os.Exit(cmd.Main()) }
