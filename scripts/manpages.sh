#!/bin/sh
# Makes the man pages relinkd(8) and relinkctl(1) from the programs' own
# --help and --version texts (help2man), so they say what the binaries say.
# relinkctl's page also gets a COMMANDS section with every subcommand's
# `relinkctl help COMMAND` text (less the options every command shares).
#
#   scripts/manpages.sh [BINDIR [OUTDIR]]
#
# BINDIR  the built relinkd and relinkctl (default .build/release)
# OUTDIR  where relinkd.8 and relinkctl.1 go (default .build/man, where
#         scripts/install.sh looks for them)
# SOURCE_DATE_EPOCH, when set, dates the pages (help2man reads it).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
bindir=${1:-$here/.build/release}
outdir=${2:-$here/.build/man}

command -v help2man > /dev/null || { echo "manpages.sh: help2man not found (scripts/setup.sh installs it)" >&2; exit 1; }
for binary in relinkd relinkctl; do
    [ -x "$bindir/$binary" ] || { echo "manpages.sh: $bindir/$binary not found; build first" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$outdir"

# help2man reads GNU-style help: "Usage:" makes the SYNOPSIS, "Options:" the
# OPTIONS section, and an option is parted from its text by two spaces.
# swift-argument-parser writes "OVERVIEW:", "USAGE:", "OPTIONS:" and, for a
# long option, one space; this filter bridges the two.
cat > "$work/gnu-help.sed" <<'SED'
s/^OVERVIEW: //
s/^USAGE: /Usage: /
s/^OPTIONS:$/Options:/
s/^SUBCOMMANDS:$/Commands:/
s/^ARGUMENTS:$/Arguments:/
s/^\(  --*[A-Za-z0-9-]*\( <[^>]*>\)\{0,1\}\) \([^ <]\)/\1\
                          \3/
SED
for binary in relinkd relinkctl; do
    cat > "$work/$binary" <<WRAPPER
#!/bin/sh
# --version prints the bare version; help2man wants "NAME VERSION".
case "\$1" in
    --version) printf '%s %s\n' $binary "\$("$bindir/$binary" --version)" ;;
    *) "$bindir/$binary" "\$@" | sed -f "$work/gnu-help.sed" ;;
esac
WRAPPER
    chmod 0755 "$work/$binary"
done

# Roff-escapes plain text: backslashes, hyphens, and a leading . or ' (requests).
roff_escape() {
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'
}

# relinkctl: one subsection per command, from `relinkctl help COMMAND`.
commands=$("$bindir/relinkctl" --help | sed -n '/^SUBCOMMANDS:$/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$commands" ] || { echo "manpages.sh: no commands in relinkctl --help" >&2; exit 1; }
{
    echo '[COMMANDS]'
    printf '%s\n' 'Every command also takes the options above (\fB\-\-bus\-address\fR, \fB\-\-json\fR), before or after it.'
    for command in $commands; do
        echo ".SS \"$command\""
        echo '.nf'
        "$bindir/relinkctl" help "$command" | sed 's/^OVERVIEW: //' | awk '
            # Drop the options every command shares (and an OPTIONS: heading
            # left with none); keep the rest as it is.
            /^  --bus-address/ || /^  --json/ || /^  --version/ || /^  -h, --help/ { skip = 1; next }
            skip && /^                          / { next }
            /^OPTIONS:$/ { heading = $0; next }
            /^$/ { blank++; next }
            {
                if (heading != "" && !/^  -/) heading = ""
                for (; blank > 0; blank--) print ""
                if (heading != "") { print heading; heading = "" }
                skip = 0; print
            }
        ' | roff_escape
        echo '.fi'
    done
    echo '[SEE ALSO]'
    echo '.BR relinkd (8),'
    echo '.BR journalctl (1);'
    echo '/usr/share/doc/relink/README.md'
} > "$work/relinkctl.h2m"

{
    echo '[FILES]'
    echo '.TP'
    echo '.I /var/lib/relink'
    echo 'the restore store (the unit'"'"'s StateDirectory=, given to relinkd as $STATE_DIRECTORY)'
    echo '.TP'
    echo '.I /lib/systemd/system/relinkd.service'
    echo 'the systemd unit; relinkd runs as the system user relink'
    echo '[SEE ALSO]'
    echo '.BR relinkctl (1),'
    echo '.BR systemctl (1),'
    echo '.BR journalctl (1);'
    echo '/usr/share/doc/relink/README.md'
} > "$work/relinkd.h2m"

help2man --no-info --section=8 --name="keep Bluetooth LE links alive across restarts" \
    --include="$work/relinkd.h2m" --output="$outdir/relinkd.8" "$work/relinkd"
help2man --no-info --section=1 --name="drive and inspect relinkd, the Bluetooth LE link keeper" \
    --include="$work/relinkctl.h2m" --output="$outdir/relinkctl.1" "$work/relinkctl"
echo "man pages in $outdir: relinkd.8 relinkctl.1"
