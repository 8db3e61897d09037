// Package gha writes GitHub Actions workflow commands ("::error
// file=robots.txt,line=3,title=robots check::message"), which a runner
// shows as annotations on the lines they name. Every value is escaped as
// the runner expects, and control characters are made visible first, so
// that text from a file can neither end a command nor start another.
package gha

import (
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot-audit/parse"
)

// Command formats a workflow command of kind (error, warning, notice) on
// file at line, with title and message msg; file "" and line 0 are left
// out (a line without a file means nothing to the runner).
func Command(kind, file string, line int, title, msg string) string {
	var props []string
	if file != "" {
		props = append(props, "file="+escapeProperty(file))
		if line > 0 {
			props = append(props, "line="+strconv.Itoa(line))
		}
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(title))
	}
	cmd := "::" + kind
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + escapeData(parse.EscapeControl(msg))
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	s = escapeData(parse.EscapeControl(s))
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}
