// Command mangen writes the lohibot-audit man pages, one per command
// (lohibot-audit.1, lohibot-audit-logs.1, ...), from the cobra command tree
// and internal/manual, so that they always say what --help says: NAME,
// SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, FILES, ENVIRONMENT,
// EXAMPLES and SEE ALSO, in the man(7) macros.
//
//	go run ./scripts/mangen -dir manpages
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lohisoft/lohibot-audit/cmd"
)

func main() {
	dir := flag.String("dir", "manpages", "directory to write the pages into (created when missing)")
	date := flag.String("date", "", "date to print in the pages, YYYY-MM-DD (default: SOURCE_DATE_EPOCH, else today)")
	version := flag.String("version", "", "version to print in the pages' footer (default: none)")
	flag.Parse()
	if err := run(*dir, *date, *version); err != nil {
		fmt.Fprintf(os.Stderr, "mangen: error: %v\n", err)
		os.Exit(1)
	}
}

func run(dir, date, version string) error {
	when, err := pageDate(date, os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writePages(cmd.NewRootCommand(), dir, when, version)
}
