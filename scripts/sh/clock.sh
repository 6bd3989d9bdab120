# Runs tests with the wall clock moved, to prove that none depends on today's date (STYLE.md
# "Tests"). Sourced after common.sh, not run.
#
# Debian's libfaketime is preloaded into the command and every process it starts (node, vitest's
# forks and worker threads, child processes): Date and the realtime clock move by one fixed offset,
# so all of them agree. The monotonic clock (timers, performance.now, process.hrtime) is left alone:
# it measures durations, not dates.

faketime_lib() { dpkg -L libfaketime 2>/dev/null | grep -m1 '/libfaketime\.so\.1$'; }

ensure_faketime() {
  [ -n "$(faketime_lib)" ] && return
  log "installing Debian's faketime (the unit tests also run with the clock a year ahead)"
  apt_install faketime
  [ -n "$(faketime_lib)" ] || die "libfaketime is still missing after apt-get install faketime"
}

# with_clock_offset <offset> <command…>: runs the command (a program or a shell function) with the
# wall clock moved by offset, in libfaketime's syntax: +365d, -2h, +86400s.
with_clock_offset() {
  local offset=$1 lib
  shift
  lib=$(faketime_lib) || die "libfaketime is missing: call ensure_faketime first"
  (
    export LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" FAKETIME="$offset" FAKETIME_DONT_FAKE_MONOTONIC=1
    "$@"
  )
}

# with_clock_at <date> <command…>: the same, with the clock starting at date (anything `date -d`
# reads, e.g. '2027-12-31 23:59:30 UTC'), for the tests' day, month and year boundaries.
with_clock_at() {
  local target
  target=$(date -d "$1" +%s) || die "with_clock_at: cannot read the date '$1'"
  shift
  with_clock_offset "$(printf '%+d' $((target - $(date +%s))))s" "$@"
}

# a_year_ahead <command…>: the command with the clock 365 days ahead. Refuses to run when Node does
# not see the moved clock (a node that ignores LD_PRELOAD would pass while proving nothing).
a_year_ahead() {
  local real ahead
  real=$(node -p 'Math.round(Date.now() / 1000)')
  ahead=$(with_clock_offset +365d node -p 'Math.round(Date.now() / 1000)')
  [ $((ahead - real - 365 * 86400)) -lt 60 ] && [ $((ahead - real - 365 * 86400)) -gt -60 ] ||
    die "libfaketime did not move Node's clock (node says $(with_clock_offset +365d node -p 'new Date().toISOString()'))"
  log "clock a year ahead: $(with_clock_offset +365d date -u '+%Y-%m-%d %H:%M UTC')"
  with_clock_offset +365d "$@"
}
