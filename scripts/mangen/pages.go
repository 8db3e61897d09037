package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// writePages writes a man page (section 1) for root and each of its
// visible commands into dir.
func writePages(root *cobra.Command, dir string, when time.Time) error {
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{
		Title:   "LOHIBOT-AUDIT",
		Section: "1",
		Date:    &when,
		Source:  "lohibot-audit",
		Manual:  "lohibot-audit manual",
	}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("writing man pages into %s: %w", dir, err)
	}
	return nil
}

// pageDate is the date printed in the pages: date (YYYY-MM-DD) when given,
// else SOURCE_DATE_EPOCH (seconds), so that a release build is
// reproducible, else today.
func pageDate(date, epoch string) (time.Time, error) {
	switch {
	case date != "":
		t, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return time.Time{}, fmt.Errorf("-date %q: give a date such as 2026-12-02", date)
		}
		return t, nil
	case epoch != "":
		s, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", epoch)
		}
		return time.Unix(s, 0).UTC(), nil
	}
	return time.Now().UTC(), nil
}
