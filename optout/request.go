package optout

import (
	"context"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// Request is an opt-out e-mail as the command line asks for it: to the
// crawler Name, called Title in the text, at its profile's Contact, for
// Domains as given, dated Date, from From when FromGiven (--from), else
// from Email ($EMAIL), else from webmaster@ the first domain (Sender).
type Request struct {
	Name, Title, Contact string
	Domains              []string
	FromGiven            bool
	From, Email          string
	Date                 time.Time
}

// Compose checks every value of r and returns the letter, the message it
// is, and how its sender was chosen when --from was not given (Sender;
// "" when it was). A value that cannot go into the letter is a usage
// error that says what to give instead.
func (r Request) Compose() (l *Letter, msg []byte, how string, err error) {
	if r.Contact == "" {
		return nil, nil, "", fail.Hinted(
			fmt.Errorf("crawler %s has no contact address to write to", r.Name),
			"give a profile file with contact: ADDRESS, or use robots.txt to keep it out")
	}
	to, err := Address(r.Contact)
	if err != nil {
		return nil, nil, "", fail.Usagef("crawler %s: contact: %v", r.Name, err)
	}
	var domains []string
	for _, a := range r.Domains {
		d, err := Domain(a)
		if err != nil {
			return nil, nil, "", fail.Usagef("%v", err)
		}
		domains = append(domains, d)
	}
	if len(domains) == 0 {
		return nil, nil, "", fail.Usagef("no domain to exclude: give at least one DOMAIN")
	}
	sender, how, err := Sender(r.FromGiven, r.From, r.Email, domains[0])
	if err != nil {
		return nil, nil, "", err
	}
	l = &Letter{From: sender, To: to, Crawler: r.Title, Domains: domains, Date: r.Date}
	if msg, err = l.Bytes(); err != nil {
		return nil, nil, "", fail.Usagef("%v", err)
	}
	return l, msg, how, nil
}

// WriteFile writes the e-mail msg to path atomically (-o FILE). Cancelled
// before the rename, ctx's error is returned and no file is left; any
// other failure is an output not written (internal/fail) that says so.
// Should the program be made to end at once meanwhile, no temporary file
// stays (atomicfile.RemoveTempOnForcedExit).
func WriteFile(ctx context.Context, path string, msg []byte) error {
	defer atomicfile.RemoveTempOnForcedExit(path)()
	_, err := atomicfile.Write(ctx, path, msg, 0o644, nil)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fail.New(fail.Unwritten,
		fmt.Errorf("cannot write the e-mail to %s: %w", path, fail.PathCause(err)),
		"check that the directory exists, is writable and has room")
}
