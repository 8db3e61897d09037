// Command lohibot-audit audits what the LohiSoftBot crawler, and those who
// pretend to be it, did on a web site. See the README or --help.
package main

import (
	"os"

	"github.com/lohisoft/lohibot-audit/cmd"
)

func main() { os.Exit(cmd.Main()) }
