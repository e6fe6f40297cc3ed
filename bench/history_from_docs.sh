#!/usr/bin/env bash
# The real results history: every results folder ever committed under docs/results/ ingested
# into one history, then the machines, every series' change points, and the trends
# docs/history.md shows, as text, CSV and plots.
#
# Where the folders come from: the tree at HEAD, and, for every commit that deleted or changed
# a file under docs/results/, the folders it touched as they were in its parent (git archive
# into a temporary directory: the work tree is not touched). Raw data that left the tree (a
# folder README's "Raw data") is read so from the commit before its removal: nothing to
# restore first, but it needs the full history (in a shallow clone: git fetch --unshallow).
# Every archive in them (raw.tar.xz, <name>.tar.xz, the older .tar.gz) is unpacked where it
# lies, as docs/results/README.md says. A results folder is one holding a run.json; each distinct copy
# (the same folder in several snapshots is read once per distinct content) goes to its own
# `history ingest`, so one damaged folder refuses itself only; the store's content key drops a
# run seen already.
#
# Usage, from inside the repository with gpuoverlap built:
#   OUT=OUT_DIR [GPUOVERLAP=build/gpuoverlap] [PYTHON=python3] bench/history_from_docs.sh
# Writes in OUT_DIR: history.sqlite, snapshots.txt, ingest.log (every attempt and its
# answer), folders.tsv (per folder: ingested or why not), summary.txt (the counts),
# runs.txt, machines.txt, regressions.txt, trend-*.{txt,csv,png}. KEEP=1 keeps the restored
# folders in OUT_DIR/restored (else a temporary directory, removed at the end).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-history}
bin=${GPUOVERLAP:-build/gpuoverlap}
py=${PYTHON:-python3}
case $bin in /*) ;; */*) bin=$(pwd)/$bin ;; esac
root=$(git rev-parse --show-toplevel) || { echo "run it inside the repository" >&2; exit 2; }
cd "$root"
mkdir -p "$out"
out=$(cd "$out" && pwd)
"$bin" --version >/dev/null 2>&1 || { echo "$bin: not a gpuoverlap binary" >&2; exit 2; }
db="$out/history.sqlite"
rm -f "$db" "$db-wal" "$db-shm" "$out"/trend-*
if [ "${KEEP:-0}" = 1 ]; then
  work="$out/restored"
  rm -rf "$work"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# 1. Snapshots: HEAD's docs/results, then each deleting or changing commit's parent, limited
# to the results folders that commit touched.
: > "$out/snapshots.txt"
head=$(git rev-parse --short=7 HEAD)
mkdir -p "$work/HEAD"
git archive HEAD docs/results | tar x -C "$work/HEAD"
echo "HEAD ($head): docs/results as committed" >> "$out/snapshots.txt"
git log --no-renames --diff-filter=DM --format=%h -- docs/results | while read -r commit; do
  mapfile -t folders < <(git show --no-renames --diff-filter=DM --name-only --format= "$commit" \
    -- docs/results | cut -d/ -f1-3 | sort -u |
    while read -r f; do [ "$(git cat-file -t "$commit^:$f")" = tree ] && echo "$f"; done)
  [ ${#folders[@]} -gt 0 ] || continue
  mkdir -p "$work/$commit^"
  git archive "$commit^" -- "${folders[@]}" | tar x -C "$work/$commit^"
  echo "$commit^ (before $(git log -1 --format='%h, %ad' --date=short "$commit")): ${folders[*]#docs/results/}" \
    >> "$out/snapshots.txt"
done

# 2. Every archive unpacked where it lies (again, for archives inside archives).
: > "$out/unpack.log"
for pass in 1 2 3; do
  found=0
  while IFS= read -r -d '' archive; do
    [ -e "$archive.unpacked" ] && continue
    found=1
    if ! msg=$(tar xf "$archive" -C "$(dirname "$archive")" 2>&1); then
      echo "${archive#"$work"/}: $(echo "$msg" | head -1)" >> "$out/unpack.log"
    fi
    touch "$archive.unpacked"
  done < <(find "$work" \( -name '*.tar.xz' -o -name '*.tar.gz' -o -name '*.tgz' \) -print0)
  [ $found = 1 ] || break
done

# 3. Every results folder, once per distinct content (run.json and every file the reader
# takes below it: meta.json, summary.csv, records, frames.csv). A results folder holds a
# run.json; the oldest results (before run.json was written) are scenario folders with a
# meta.json and no run.json above them, each read as a run of its own. A folder whose records
# were never committed is kept from its summaries (docs/history.md).
results_folders() {
  "$py" - "$1" <<'PY'
import os, sys
root = sys.argv[1]
runs, metas = set(), []
for d, _, files in os.walk(root):
    if "run.json" in files:
        runs.add(d)
    if "meta.json" in files:
        metas.append(d)
found = set(runs)
for d in metas:
    up = d
    while up != root and up not in runs:
        up = os.path.dirname(up)
    if up == root:
        found.add(d)
# The copies with records first: a copy without them (slimmed later) is the same run (the
# same content key), which the history then finds kept already, with the records' numbers.
def has_records(d):
    return any(f.startswith("records.csv") for _, _, files in os.walk(d) for f in files)
print("\n".join(sorted(found, key=lambda d: (not has_records(d), d))))
PY
}
fingerprint() {
  (cd "$1" && find . -type f \( -name run.json -o -name meta.json -o -name summary.csv \
      -o -name 'records.csv*' -o -name frames.csv \) -print0 | sort -z |
    xargs -0 -r sha1sum | sha1sum | cut -c1-16)
}
: > "$out/ingest.log"
: > "$out/attempts.tmp"
declare -A seen
while IFS= read -r dir; do
  snapshot=${dir#"$work"/}
  snapshot=${snapshot%%/*}
  rel=${dir#"$work/$snapshot/docs/results/"}
  key=$(fingerprint "$dir")
  if [ -n "${seen[$key]:-}" ]; then
    echo "$rel	$snapshot	same	${seen[$key]}" >> "$out/attempts.tmp"
    continue
  fi
  seen[$key]="$snapshot	$rel"
  answer=$("$bin" history ingest "$dir" --db "$db" 2>&1)
  status=$?
  line=$(echo "$answer" | grep -v '^history: ' | head -1)
  line=${line//"$work/"/}
  printf '%s [%s] exit %s: %s\n' "$rel" "$snapshot" "$status" "$line" >> "$out/ingest.log"
  echo "$rel	$snapshot	$status	$line" >> "$out/attempts.tmp"
done < <(results_folders "$work")

# Per folder (its path under docs/results): ingested if any copy was, else why not (the first
# refusal, the folder's own path taken out of it); then the counts by reason.
"$py" - "$out" <<'PY'
import collections, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
tries, outcome = collections.defaultdict(list), {}
for line in (out / "attempts.tmp").read_text().splitlines():
    rel, snapshot, status, detail = line.split("\t", 3)
    if status == "same":  # the same files as a copy read before: its outcome
        first_snapshot, first_rel = detail.split("\t")
        status, detail = outcome[(first_snapshot, first_rel)]
    outcome[(snapshot, rel)] = (status, detail)
    tries[rel].append((snapshot, status, detail))
rows, reasons = [], collections.Counter()
for rel in sorted(tries):
    copies = ",".join(sorted({s for s, _, _ in tries[rel]}))
    kept = sorted({d.split(":")[0] for _, st, d in tries[rel] if st == "0"})
    if kept:
        rows.append((rel, "ingested", copies, ", ".join(kept)))
        continue
    detail = tries[rel][0][2]
    # "gpuoverlap: SNAPSHOT/docs/results/REL/x/y.csv: ...": the file below the folder, and why.
    short = re.sub(r"^gpuoverlap: ", "", detail)
    short = re.sub(r"[^ ]*/docs/results/" + re.escape(rel) + r"/?", "", short)
    short = re.sub(r"^([^:]+): \1: ", r"\1: ", short)  # the path said twice
    rows.append((rel, "refused", copies, short))
    file_part, _, why = short.partition(": ")
    name = file_part.rsplit("/", 1)[-1] if why else ""
    reasons[f"{name}: {why}" if name else (why or file_part)] += 1
with open(out / "folders.tsv", "w") as f:
    f.write("folder\tstatus\tfound in\tdetail\n")
    f.writelines("\t".join(r) + "\n" for r in rows)
ingested = sum(1 for r in rows if r[1] == "ingested")
with open(out / "summary.txt", "w") as f:
    f.write(f"results folders found: {len(rows)} (paths under docs/results in any snapshot: a run.json, "
            f"or a scenario's meta.json with no run.json above it)\n")
    f.write(f"ingested: {ingested}\nrefused: {len(rows) - ingested}\n")
    for reason, n in reasons.most_common():
        f.write(f"  {n:4d}  {reason}\n")
PY
rm -f "$out/attempts.tmp"
if ! grep -q '^ingested: [1-9]' "$out/summary.txt"; then
  cat "$out/summary.txt" >&2
  echo "no results folder ingested: see $out/ingest.log" >&2
  exit 1
fi

# 4. What the history holds, its change points, and the trends docs/history.md shows.
"$bin" history list --db "$db" > "$out/runs.txt"
sed -i "s#$work/##g" "$out/runs.txt"
"$bin" history list --machines --db "$db" > "$out/machines.txt"
"$bin" history regressions --db "$db" > "$out/regressions.txt" 2>&1
echo "regressions exit $?" >> "$out/regressions.txt"
# The whole history of each (--window 1000), in its own regressions list too.
"$bin" history regressions --window 1000 --db "$db" > "$out/regressions-window-1000.txt" 2>&1
echo "regressions exit $?" >> "$out/regressions-window-1000.txt"
# scenario|series|clock (- for every clock)|metric: MJP's default (Compute A unchanged in
# every run; Compute B made 10 % slower in the B runs of the compare trials, same scenario
# name), a split-barrier scenario, a preemption latency, the game frame's frame interval.
for spec in "default|Compute A|-|duration_p50_us" \
            "default|Compute B|-|duration_p50_us" \
            "three-dispatches-split|Compute B|-|duration_p50_us" \
            "preemption-matrix/big-dispatch-high|urgent|-|latency_p50_us" \
            "game-frame|frame|cpu|frame_interval_p50_us"; do
  IFS='|' read -r scenario workload clock metric <<<"$spec"
  slug=$(echo "$scenario-$workload-$metric" | tr ' /' '--')
  clock_args=()
  [ "$clock" = - ] || clock_args=(--clock "$clock")
  if "$bin" history trend --db "$db" --scenario "$scenario" --series "$workload" \
      "${clock_args[@]}" --metric "$metric" --window 1000 --csv "$out/trend-$slug.csv" \
      > "$out/trend-$slug.txt" 2>&1; then
    "$py" "$root/plots/plot.py" history "$out/trend-$slug.csv" >/dev/null
  else
    echo "trend $spec: $(head -1 "$out/trend-$slug.txt")" >&2
  fi
done
cat "$out/summary.txt"
