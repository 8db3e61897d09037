package parse

// Container log prefixes in front of access log lines.
//
// A web server in a container logs to its standard output, and what
// reaches a file carries the container runtime's prefix:
//
//   - Kubernetes (containerd, CRI-O) writes /var/log/containers/*.log as
//     "2026-12-01T06:25:01.123456789Z stdout F " (CRI: the time, the
//     stream, F for a full line or P for part of a longer one);
//   - `docker compose logs` prints "web-1  | " (the service, padded, then
//     "| "), and with --timestamps the time after it;
//   - `docker logs --timestamps` prints "2026-12-01T06:25:01.123456789Z ".
//
// The prefix's time is when the runtime read the line; the request's own
// time, in the line, is the one used.

// containerHeaderLen returns the length of the container runtime's prefix
// at the start of line (up to the server's line), or -1 when line does
// not start with one. It does not allocate.
func containerHeaderLen(line []byte) int {
	if n := rfc3339Len(line, true); n > 0 {
		// CRI, or docker logs --timestamps.
		if n >= len(line) || line[n] != ' ' {
			return -1
		}
		i := n + 1
		if s := criStream(line[i:]); s > 0 {
			return i + s
		}
		return i
	}
	// docker compose logs: NAME, spaces, "| ".
	i := 0
	for i < len(line) && i <= 128 && isServiceByte(line[i]) {
		i++
	}
	if i == 0 || i > 128 || i >= len(line) || line[i] != ' ' {
		return -1
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if len(line)-i < 2 || line[i] != '|' || line[i+1] != ' ' {
		return -1
	}
	i += 2
	if n := rfc3339Len(line[i:], true); n > 0 && i+n < len(line) && line[i+n] == ' ' {
		i += n + 1
	}
	return i
}

// criStream returns the length of CRI's "stdout F " or "stderr P " at the
// start of b, or 0.
func criStream(b []byte) int {
	if len(b) < 9 || b[6] != ' ' || b[8] != ' ' || b[7] != 'F' && b[7] != 'P' {
		return 0
	}
	switch string(b[:6]) {
	case "stdout", "stderr":
		return 9
	}
	return 0
}

// isServiceByte reports whether c may be part of a compose service's or
// container's name as `docker compose logs` prints it.
func isServiceByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
