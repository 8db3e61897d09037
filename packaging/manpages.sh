#!/bin/sh
# manpages.sh writes the man pages of lohibot-audit (one per command, from
# the cobra command tree) into manpages/ at the top of the repository,
# gzipped, where goreleaser.yml picks them up for the deb/rpm packages. The
# directory is generated: it is emptied first and is not kept in git.
#
# Run from anywhere: sh packaging/manpages.sh [VERSION [UNIX-TIME]]
# VERSION goes into the pages' footer; UNIX-TIME (the commit's time, as
# goreleaser.yml passes it) is their date, so that a rebuild of a commit
# gives the same pages.
set -eu

cd "$(dirname "$0")/.."

if [ -n "${2:-}" ]; then
	SOURCE_DATE_EPOCH=$2
	export SOURCE_DATE_EPOCH
fi
rm -rf manpages
go run ./scripts/mangen -dir manpages -version "${1:-}"
for page in manpages/*.1; do
	gzip -9 -n "$page"
done
if ! [ -s manpages/lohibot-audit.1.gz ]; then
	echo "manpages.sh: no lohibot-audit.1 was written" >&2
	exit 1
fi
