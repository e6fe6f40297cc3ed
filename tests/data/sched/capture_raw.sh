#!/bin/bash
# Captures a raw fixture for the binary record reader's tests: the kernel's page layout and
# event formats, every CPU's trace_pipe_raw, saved_tgids, saved_cmdlines and the `trace` text of
# the same events, set up as the tool's own record is (mono_raw clock, record-tgid, the same
# events and sys_enter filter). Needs root and tracefs.
#
#   tests/data/sched/capture_raw.sh DEST_DIR [BUFFER_KB_PER_CPU] [SECONDS]
#
# The pages (cpuN.raw.gz) and the text (trace.txt.gz) are written compressed. A small buffer
# with a busy workload overwrites events: the pages then report lost events, which the `trace`
# text does not, and the per-CPU overrun counts are kept in overrun.txt.
set -euo pipefail
dest=${1:?usage: capture_raw.sh DEST_DIR [BUFFER_KB_PER_CPU] [SECONDS]}
buffer_kb=${2:-64}
seconds=${3:-0.3}
root=/sys/kernel/tracing
[ -d "$root/instances" ] || mount -t tracefs nodev "$root"
events=(sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new sched/sched_migrate_task
        sched/sched_process_fork sched/sched_process_exit irq_vectors/local_timer_entry
        irq_vectors/reschedule_entry irq_vectors/call_function_entry
        irq_vectors/call_function_single_entry irq/irq_handler_entry raw_syscalls/sys_enter)
instance=$root/instances/gpuoverlap-fixture-$$
mkdir "$instance"
trap 'echo 0 > "$instance/tracing_on"; rmdir "$instance"' EXIT
echo mono_raw > "$instance/trace_clock"
echo "$buffer_kb" > "$instance/buffer_size_kb"
echo 1 > "$instance/options/record-tgid"
echo 'id == 24 || id == 56 || id == 435' > "$instance/events/raw_syscalls/sys_enter/filter"
for e in "${events[@]}"; do echo 1 > "$instance/events/$e/enable"; done
echo 1 > "$instance/tracing_on"
# A workload of yields, sleeps, wake-ups across threads and short-lived processes.
/usr/bin/python3 - "$seconds" <<'PY'
import os, sys, threading, time, subprocess
end = time.monotonic() + float(sys.argv[1])
def yielder():
    while time.monotonic() < end:
        os.sched_yield()
def sleeper():
    while time.monotonic() < end:
        time.sleep(0.001)
threads = [threading.Thread(target=f, name=n) for f, n in ((yielder, "yielder"), (sleeper, "sleeper"))]
for t in threads: t.start()
while time.monotonic() < end:
    subprocess.run(["/bin/true"])
for t in threads: t.join()
PY
echo 0 > "$instance/tracing_on"
mkdir -p "$dest/events"
cp "$root/events/header_page" "$dest/events/header_page"
for e in "${events[@]}"; do
  mkdir -p "$dest/events/$e"
  cp "$root/events/$e/format" "$dest/events/$e/format"
done
# The text first: reading `trace` does not consume; trace_pipe_raw does.
cat "$instance/trace" > "$dest/trace.txt"
: > "$dest/overrun.txt"
for cpu_dir in "$instance"/per_cpu/cpu*; do
  cpu=${cpu_dir##*/cpu}
  echo "$cpu $(awk '/^overrun:/ {print $2}' "$cpu_dir/stats")" >> "$dest/overrun.txt"
  # dd reads whole pages until the (non-blocking once tracing is off) pipe is empty.
  timeout 10 dd if="$cpu_dir/trace_pipe_raw" of="$dest/cpu$cpu.raw" bs=4096 iflag=nonblock status=none || true
done
cp "$root/saved_tgids" "$dest/saved_tgids"
cp "$root/saved_cmdlines" "$dest/saved_cmdlines"
uname -r > "$dest/kernel.txt"
# Kept compressed: the repository's tracked files have a size limit.
gzip -9 -n "$dest/trace.txt" "$dest"/cpu*.raw
