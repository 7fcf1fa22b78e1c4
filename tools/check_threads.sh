#!/usr/bin/env bash
# Clang's thread-safety analysis over zerofarm's locking code; a step of tools/test.sh.
#   1. no std::mutex, std::lock_guard, std::unique_lock or std::scoped_lock in src/ or include/
#      outside include/zerofarm/core/thread_annotations.h: every mutex is a zerofarm::Mutex,
#      held through a MutexLock, so the analysis sees it;
#   2. clang++ -fsyntax-only -Wthread-safety -Werror over every file of src/ that takes a
#      MutexLock (a few seconds): data read or written without the mutex that
#      ZF_GUARDED_BY names, or a ZF_REQUIRES function called without it, fails.
# Prints each finding and exits 1 when there is any; 2 when clang++ is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
clang=${ZF_CLANG:-$(command -v clang++ || true)}
if [ -z "$clang" ]; then
  echo "check_threads: clang++ is not installed (tools/setup.sh installs it)" >&2
  exit 2
fi
bad=0
raw=$(grep -rnE 'std::(mutex|lock_guard|unique_lock|scoped_lock|shared_mutex|recursive_mutex)\b' src include |
  grep -v '^include/zerofarm/core/thread_annotations.h:')
if [ -n "$raw" ]; then
  echo "$raw" | sed 's/^/check_threads: a lock the analysis cannot see (use zerofarm::Mutex and MutexLock): /'
  bad=1
fi
files=$(grep -rlE '\bMutexLock\b' src --include='*.cpp' | sort)
for f in $files; do
  module=$(echo "$f" | cut -d/ -f2)
  if ! "$clang" -std=c++17 -fsyntax-only -Wthread-safety -Werror -Iinclude -I"src/$module" "$f"; then
    echo "check_threads: $f fails clang's thread-safety analysis (above)"
    bad=1
  fi
done
if [ $bad = 0 ]; then
  echo "check_threads: clean ($(echo "$files" | wc -w) files analysed)"
fi
exit $bad
