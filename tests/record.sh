#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mmusim record: what is checked before recording, what a failed recording
# leaves (nothing, and an older OUT as it was), SIGTERM and SIGKILL of the
# recorder, a program that forks, what the program inherits.  The recorded
# programs are small shell scripts.  SKIP (exit 77) without valgrind.
set -eu
. "$(dirname "$0")/record-common.sh"
record_setup record

# refused NAME WANT COMMAND...: exit 2, one line holding WANT, the older
# old.mtr as it was, no temporary file left, the program never ran.
refused() {
  name=$1 want=$2
  shift 2
  echo old > old.mtr
  rm -f ran
  st=0
  "$@" > "$name.out" 2> "$name.err" || st=$?
  lines=$(wc -l < "$name.err")
  if [ "$st" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$name.err"; then
    echo "FAIL: $name: exit $st, $lines lines on stderr (want 2 and one holding '$want'):"; cat "$name.err"; fail=1
  fi
  if [ "$(cat old.mtr)" != old ] || [ -n "$(ls ./*.partial 2> /dev/null)" ]; then
    echo "FAIL: $name: the older old.mtr was replaced, or a temporary file left"; fail=1
  fi
  if [ -e ran ]; then
    echo "FAIL: $name: the program ran although the recording was refused"; fail=1
  fi
}
printf '#!/bin/sh\ntouch ran\n' > prog.sh
chmod +x prog.sh
printf '#!/bin/sh\ntouch ran\n' > noexec.sh
refused notfound "./nosuch: command not found" "$MMUSIM" record -q -o old.mtr -- ./nosuch
refused noexec "./noexec.sh is not executable" "$MMUSIM" record -q -o old.mtr -- ./noexec.sh
mkdir adir
refused dir "cannot write 'adir': Is a directory" "$MMUSIM" record -q -o adir -- ./prog.sh
refused nodir "cannot write 'no/x.mtr': No such file or directory" "$MMUSIM" record -q -o no/x.mtr -- ./prog.sh
refused copydir "--lackey-copy: cannot write 'adir'" "$MMUSIM" record -q -o old.mtr --lackey-copy adir -- ./prog.sh
# A valgrind that cannot start its tool: nothing recorded, no file.
mkdir bin
printf '#!/bin/sh\necho "valgrind: failed to start tool '"'"'lackey'"'"' for platform '"'"'amd64-linux'"'"': No such file or directory" >&2\nexit 1\n' > bin/valgrind
chmod +x bin/valgrind
echo old > old.mtr
st=0
PATH="$tmp/bin:$PATH" "$MMUSIM" record -q -o old.mtr -- ./prog.sh > notool.out 2> notool.err || st=$?
if [ "$st" -ne 2 ] || ! grep -qF "nothing recorded, no file written" notool.err || [ "$(cat old.mtr)" != old ] ||
   [ -n "$(ls ./*.partial 2> /dev/null)" ]; then
  echo "FAIL: a valgrind that cannot start its tool: exit $st, old.mtr $(cat old.mtr):"; cat notool.err; fail=1
fi

# The program inherits neither the output file nor the copy.
printf '#!/bin/sh\nfor f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -lt 1000 ] && echo "$n $(readlink "$f")"; done > fds.txt\n' > fds.sh
chmod +x fds.sh
"$MMUSIM" record -q -o fds.mtr --lackey-copy copy.txt -- ./fds.sh < /dev/null > fds.out 2> fds.err
if grep -q 'partial\|copy.txt' fds.txt || ! [ -s fds.txt ]; then
  echo "FAIL: the recorded program inherits the output:"; cat fds.txt; fail=1
fi

# A program that forks without exec: said, in a warning, and the child's
# accesses left out.
printf '#!/bin/sh\n( x=1 )\n' > fork.sh
chmod +x fork.sh
st=0
"$MMUSIM" record -q -o fork.mtr -- ./fork.sh 2> fork.err || st=$?
if [ "$st" -ne 0 ] || ! grep -qF "started other processes" fork.err || ! grep -qF "not in fork.mtr" fork.err ||
   ! [ -s fork.mtr ]; then
  echo "FAIL: a program that forks: exit $st:"; cat fork.err; fail=1
fi

# A program that writes lackey-like lines to every descriptor above 2 it
# finds in /proc/self/fd, by number and by opening /proc/self/fd/N again
# (those the test itself was given are left alone: they are not the
# recorder's).  Run by valgrind, it reaches none of valgrind's: the
# recording is whole.  Run by exec from a child, outside valgrind, it
# reaches the log: what it writes is left out, with a warning.  Copying
# valgrind's descriptors with dup2 (which valgrind 3.19 allows), it writes
# into the log from valgrind's own process: its `==1==` lines give it away,
# and the recording is refused, no file written.  (Run by exec in the
# recorded process itself, outside valgrind, it is caught only when such a
# line starts a line of the log: doc/trace-format.md.)
if command -v "$CC" > /dev/null; then
  MMUSIM_TEST_KEEP_FDS=" $(ls /proc/$$/fd | tr '\n' ' ')"
  export MMUSIM_TEST_KEEP_FDS
  cat > hostile.c << 'EOF'
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
  static const char junk[] = "==1== x\n L 0dead000,8\n";
  const char *keep = getenv("MMUSIM_TEST_KEEP_FDS");
  int dup = argc > 1 && strcmp(argv[1], "dup") == 0, fds[4096], n = 0;
  FILE *wrote = fopen("wrote", "a");
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  while (d && (e = readdir(d)) && n < 4096)
    if (e->d_name[0] != '.')
      fds[n++] = atoi(e->d_name);
  if (d)
    closedir(d);
  for (int i = 0; i < n; i++) {
    char name[64], path[64];
    snprintf(name, sizeof name, " %d ", fds[i]);
    if (fds[i] <= 2 || fds[i] == fileno(wrote) || (keep && strstr(keep, name)))
      continue;
    if (write(fds[i], junk, sizeof junk - 1) > 0)
      fprintf(wrote, "%d\n", fds[i]);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[i]);
    int again = open(path, O_WRONLY | O_APPEND);
    if (again >= 0 && write(again, junk, sizeof junk - 1) > 0)
      fprintf(wrote, "%d again\n", fds[i]);
    if (dup && dup2(fds[i], 1000) == 1000 && write(1000, junk, sizeof junk - 1) > 0)
      fprintf(wrote, "%d by dup2\n", fds[i]);
  }
  return 0;
}
EOF
  "$CC" -O1 -o hostile hostile.c
  st=0
  rm -f wrote
  "$MMUSIM" record -q -o hostile.mtr --lackey-copy hostile.txt -- ./hostile 2> hostile.err || st=$?
  if [ "$st" -ne 0 ] || [ -s hostile.err ] || grep -q '0dead000\|==1==' hostile.txt ||
     ! "$MMUSIM" trace info --verify hostile.mtr > /dev/null 2>> hostile.err; then
    echo "FAIL: a program writing to every descriptor: exit $st, wrote to:"; cat wrote hostile.err; fail=1
  fi
  st=0
  rm -f wrote
  "$MMUSIM" record -q -o child.mtr --lackey-copy child.txt -- sh -c './hostile; exit 0' 2> child.err || st=$?
  if [ "$st" -ne 0 ] || ! grep -qF "started other processes" child.err || grep -q '0dead000\|==1==' child.txt ||
     ! [ -s wrote ] || ! "$MMUSIM" trace info --verify child.mtr > /dev/null 2>> child.err; then
    echo "FAIL: a child run by exec writing to every descriptor: exit $st, wrote to:"; cat wrote child.err; fail=1
  fi
  echo old > old.mtr
  st=0
  "$MMUSIM" record -q -o old.mtr -- ./hostile dup 2> dup.err || st=$?
  if [ "$st" -eq 0 ] || ! grep -qF "valgrind's log holds lines that valgrind did not write" dup.err ||
     [ "$(cat old.mtr)" != old ] || [ -n "$(ls ./*.partial 2> /dev/null)" ]; then
    echo "FAIL: a program copying valgrind's descriptors with dup2 and writing to them: exit $st:"; cat dup.err
    fail=1
  fi
fi

# SIGTERM to the recorder: valgrind and the program stop, what was recorded
# is kept whole.  SIGKILL: they die with it, only a temporary file is left.
printf '#!/bin/sh\necho $$ > started.tmp\nmv started.tmp started\nwhile :; do :; done\n' > loop.sh
chmod +x loop.sh
wait_for() { # FILE: up to 120 s, by polling (not a measure of speed)
  i=0
  while ! [ -e "$1" ] && [ "$i" -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$1" ]
}
gone() { # PID: up to 60 s
  i=0
  while kill -0 "$1" 2> /dev/null && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  ! kill -0 "$1" 2> /dev/null
}
for sig in TERM KILL; do
  rm -f started loop.mtr ./loop.mtr.*.partial
  "$MMUSIM" record -q -o loop.mtr -- ./loop.sh 2> "$sig.err" &
  rec=$!
  if ! wait_for started; then
    echo "FAIL: SIG$sig: the program did not start"; kill -KILL "$rec"; fail=1; continue
  fi
  prog=$(cat started)
  kill -"$sig" "$rec"
  st=0
  wait "$rec" || st=$?
  if ! gone "$prog"; then
    echo "FAIL: SIG$sig: the recorded program $prog outlives the recorder"; kill -KILL "$prog"; fail=1
  fi
  if [ "$sig" = TERM ]; then
    if [ "$st" -ne 0 ] || ! "$MMUSIM" trace info --verify loop.mtr > /dev/null 2>> "$sig.err"; then
      echo "FAIL: SIGTERM: exit $st, loop.mtr not kept whole:"; cat "$sig.err"; fail=1
    fi
  elif [ -e loop.mtr ] || [ -z "$(ls ./loop.mtr.*.partial 2> /dev/null)" ]; then
    echo "FAIL: SIGKILL: a final loop.mtr, or no temporary file"; fail=1
  fi
done

[ "$fail" -eq 0 ] && echo "record: passed"
exit "$fail"
