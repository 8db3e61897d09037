// Package manual is the lohibot-audit manual: each command's description
// and examples, as --help and its man page say them (help/*.txt, one file a
// command, filled in with the default crawler's facts by Describe), and what
// the man pages say beyond --help: how the command exits, and the files and
// environment variables it reads (Of). Those entries follow from the
// command's path and its flags, so they stay true as the commands change.
package manual

import (
	"slices"
	"strconv"

	"github.com/lohisoft/lohibot-audit/internal/completion"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/watchstate"
	"github.com/spf13/cobra"
)

// Manual is what a command's man page says beyond its --help: how it
// exits, and the files and environment variables it reads. The entries
// follow from the command's exit codes and flags, so they stay true as
// the commands change.
type Manual struct {
	Exit        []Entry // Name is the exit status
	Files       []Entry
	Environment []Entry
}

// Entry is one item of a man page's list: a name and what it means.
type Entry struct {
	Name, Text string
}

// The files the packages install, and the configuration's places.
const (
	userConfigFile   = "$XDG_CONFIG_HOME/lohibot-audit/config.yaml"
	systemConfigFile = "/etc/lohibot-audit/config.yaml"
	defaultsFile     = "/etc/default/lohibot-audit"
	rulesService     = "/usr/lib/systemd/system/lohibot-rules.service"
	rulesTimer       = "/usr/lib/systemd/system/lohibot-rules.timer"
	watchService     = "/usr/lib/systemd/system/lohibot-audit-watch.service"
	rulesFile        = "/etc/nftables.d/lohibot.nft"
)

// Of returns the manual entries of c, a command of the lohibot-audit
// program.
func Of(c *cobra.Command) Manual {
	var m Manual
	code := func(n int, text string) {
		m.Exit = append(m.Exit, Entry{strconv.Itoa(n), text})
	}
	const (
		usage       = "usage or configuration error (a bad flag, a named file that does not exist, a config file that does not load), said in one line on stderr; nothing was done."
		interrupted = "interrupted by SIGINT or SIGTERM: it stopped within a second and wrote no report and no partial -o file."
		unwritable  = "the output could not be written (disk full, an unwritable -o target)."
		unreadable  = "an input could not be read whole (an unreadable file, a truncated or damaged archive, an archive that needs more memory than the decompressor allows, a format that cannot be detected): everything read is still reported; or " + unwritable
	)
	// fails are the codes of a command that can be interrupted, past its
	// codes of success: usage errors, incomplete runs, interruptions.
	fails := func(usage, incomplete string) {
		code(fail.ExitUsage, usage)
		code(fail.ExitIncomplete, incomplete)
		code(fail.ExitInterrupted, interrupted)
	}
	switch c.CommandPath() {
	case "lohibot-audit":
		code(fail.ExitOK, "done; for robots check, the expectation holds.")
		code(fail.ExitFindings, "robots check: the expectation failed; logs and verify: --fail-on matched.")
		code(fail.ExitUsage, usage)
		code(fail.ExitIncomplete, unreadable+" robots check: robots.txt could not be fetched.")
		code(fail.ExitInterrupted, interrupted+" watch ends with 0 on SIGTERM and SIGINT, its normal way to stop.")
	case "lohibot-audit logs":
		code(fail.ExitOK, "the report was written, and --fail-on (if given) did not match.")
		code(fail.ExitFindings, "--fail-on matched: the report holds spoofed hits, violations, or either (--fail-on spoofed, violations, any); the report is written all the same.")
		fails(usage, unreadable)
	case "lohibot-audit verify":
		code(fail.ExitOK, "the verdicts were written, and --fail-on (if given) did not match.")
		code(fail.ExitFindings, "--fail-on spoofed (or any) matched: an address is spoofed.")
		fails(usage+" An argument that is not an IP address is one too.", unwritable)
	case "lohibot-audit emit":
		code(fail.ExitOK, "the rules were written (with -o: the file was written, or left as it was because only its header's time would change).")
		m.Exit = append(m.Exit, Entry{"N", "with -o and --changed-exit N: the file changed (0 then means it did not)."})
		fails(usage, unreadable)
	case "lohibot-audit robots", "lohibot-audit robots check":
		code(fail.ExitOK, "robots.txt blocks (or, with --expect allowed, allows) the crawler on every --path.")
		code(fail.ExitFindings, "it does not, for at least one path: the deciding lines are said.")
		fails(usage, "robots.txt could not be checked: the URL answered 5xx, timed out or could not be reached (unless --on-fetch-error rfc); or "+unwritable)
	case "lohibot-audit robots test":
		code(fail.ExitOK, "each URL was tested, whatever the answers.")
		fails(usage, "the robots.txt URL answered 5xx, timed out or could not be reached (unless --on-fetch-error rfc); or "+unwritable)
	case "lohibot-audit ips update":
		code(fail.ExitOK, "the list was fetched and cached, or the cached copy is current (304).")
		fails(usage, "the list could not be fetched, or was rejected (the cached or built-in list stays in force); or "+unwritable)
	case "lohibot-audit watch":
		code(fail.ExitOK, "stopped by SIGTERM or SIGINT (its normal way to stop), or standard input ended.")
		code(fail.ExitUsage, usage+" Bad options are found at start, before anything is followed: among them a --state-dir another watch holds or that cannot be used, and a --metrics address that cannot be bound.")
	case "lohibot-audit watch status":
		code(fail.ExitOK, "the status was shown: the running watch's, or the state the last one left.")
		code(fail.ExitUsage, usage)
		code(fail.ExitIncomplete, "nothing to show: no watch runs with the state directory and none left a state there, or it cannot be read or asked; or "+unwritable)
	case "lohibot-audit unblock":
		code(fail.ExitOK, "every address was taken out of the blocks and is held out of blocking for --ttl.")
		code(fail.ExitUsage, usage+" An argument that is not an IP address is one too.")
		code(fail.ExitIncomplete, "not everything could be undone (each address's errors are said), or the state directory cannot be used; or "+unwritable)
	case "lohibot-audit merge":
		code(fail.ExitOK, "the merged report was written, and --fail-on (if given) did not match.")
		code(fail.ExitFindings, "--fail-on matched, as for logs.")
		fails(usage+" A snapshot that is not one, or of another layout, is one too.", unreadable)
	default:
		code(fail.ExitOK, "done.")
		code(fail.ExitUsage, usage)
		if c.Flags().Lookup("format") != nil {
			code(fail.ExitIncomplete, unwritable)
		}
	}

	file := func(name, text string) { m.Files = append(m.Files, Entry{name, text}) }
	env := func(name, text string) { m.Environment = append(m.Environment, Entry{name, text}) }
	root := !c.HasParent()
	has := func(flag string) bool { return c.Flags().Lookup(flag) != nil }
	if has("config") || root {
		file(userConfigFile, "the user's configuration ($HOME/.config/lohibot-audit/config.yaml when XDG_CONFIG_HOME is not set): YAML whose keys are the long flags (log-format, never-block, resolver, ...). Flags given on the command line win over it.")
		file(systemConfigFile, "the system's configuration, read when the user has none; the packages install a commented one.")
	}
	if has("cache-dir") || root {
		file("$XDG_CACHE_HOME/lohibot-audit/", "the cache ($HOME/.cache/lohibot-audit when XDG_CACHE_HOME is not set; --cache-dir, --no-cache): DNS answers kept for their TTL and the fetched IP lists, between runs.")
	}
	switch c.CommandPath() {
	case "lohibot-audit", "lohibot-audit emit":
		file(defaultsFile, "the logs lohibot-rules.service reads (LOHIBOT_LOGS, patterns allowed) and more arguments for emit (LOHIBOT_EMIT_ARGS).")
		file(rulesService, "regenerates "+rulesFile+" from the logs and loads it with nft -f.")
		file(rulesTimer, "starts lohibot-rules.service every night.")
		file(rulesFile, "the rules lohibot-rules.service writes and loads.")
	}
	switch c.CommandPath() {
	case "lohibot-audit", "lohibot-audit watch", "lohibot-audit watch status", "lohibot-audit unblock":
		file(watchstate.DefaultDir+"/", "watch's state (--state-dir; $STATE_DIRECTORY when set, as the service sets it): the verdicts that still stand, what was blocked where, the addresses unblocked, and the control socket that watch status and unblock ask.")
	}
	switch c.CommandPath() {
	case "lohibot-audit", "lohibot-audit watch":
		file(watchService, "runs watch --nftables on the logs of LOHIBOT_WATCH_LOGS in "+defaultsFile+", with CAP_NET_ADMIN only; systemctl reload sends SIGHUP.")
	}

	if has("config") || root {
		env("XDG_CONFIG_HOME", "where the user's configuration is looked for.")
	}
	if has("cache-dir") || root {
		env("XDG_CACHE_HOME", "where the cache is kept unless --cache-dir says.")
	}
	if has("state-dir") || root {
		env("STATE_DIRECTORY", "watch's state directory when --state-dir is not given (systemd sets it from the service's StateDirectory=).")
	}
	if has("config") || has("cache-dir") || root {
		env("HOME", "the base of both when XDG_CONFIG_HOME or XDG_CACHE_HOME is not set.")
	}
	if f := c.Flags().Lookup("format"); root || f != nil && slices.Contains(completion.ValuesOf(f), "table") {
		env("COLUMNS", "the width tables fit on a terminal (else the terminal's own).")
	}
	if has("no-progress") || c.CommandPath() == "lohibot-audit verify" || root {
		env("CI", "when set, no progress line is drawn on stderr.")
		env("TERM", "dumb: no progress line is drawn on stderr.")
	}
	if c.CommandPath() == "lohibot-audit robots check" || c.CommandPath() == "lohibot-audit robots" || root {
		env("GITHUB_ACTIONS", "true: robots check also writes each failing path as a GitHub Actions error annotation on the deciding line.")
	}
	return m
}
