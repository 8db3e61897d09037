#!/bin/sh
# completions.sh writes the bash, zsh and fish completions of lohibot-audit
# into completions/ at the top of the repository, where goreleaser.yml picks
# them up for the archives and the deb/rpm packages. The directory is
# generated: it is emptied first and is not kept in git.
#
# Run from anywhere: sh packaging/completions.sh
set -eu

cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Build once for this machine, then ask the program for each script.
CGO_ENABLED=0 go build -o "$tmp/lohibot-audit" ./cmd/lohibot-audit

rm -rf completions
mkdir completions
for shell in bash zsh fish; do
	"$tmp/lohibot-audit" completion "$shell" >"$tmp/lohibot-audit.$shell"
	if ! [ -s "$tmp/lohibot-audit.$shell" ]; then
		echo "completions.sh: lohibot-audit completion $shell printed nothing" >&2
		exit 1
	fi
	mv "$tmp/lohibot-audit.$shell" "completions/lohibot-audit.$shell"
done
