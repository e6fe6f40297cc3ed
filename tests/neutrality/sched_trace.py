"""The kernel's scheduler record of a run, from tracefs, and what it says about the harness.

A trace instance of its own (instances/<name>, so nothing else's tracing is touched), on the
mono_raw clock: the clock the tool stamps with (CLOCK_MONOTONIC_RAW), so meta.json's
measured_span_ns and the trace's times are one timeline. It records context switches, wake-ups,
migrations, thread creation and exit, the timer tick and the IPIs (reschedule, function call),
device interrupts, and the system calls that make or give up a CPU by their own call
(sched_yield, clone, clone3).

Used by test_neutrality.py; it needs root and a kernel with tracefs (Debian's has it).
"""

from __future__ import annotations

import dataclasses
import os
import platform
import re
import subprocess
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")

# x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl).
SYSCALLS_X86_64 = {24: "sched_yield", 56: "clone", 435: "clone3"}

EVENTS = [
    "sched/sched_switch",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_migrate_task",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
    "irq_vectors/local_timer_entry",
    "irq_vectors/reschedule_entry",
    "irq_vectors/call_function_entry",
    "irq_vectors/call_function_single_entry",
    "irq/irq_handler_entry",
    "raw_syscalls/sys_enter",
]

# Events that take a CPU from its task without the task asking: the tick, an IPI, a device's
# interrupt. A runnable thread switched out with none of these on its CPU since it last ran gave
# the CPU up by its own call (sched_yield, or a wake-up it made of a thread that then preempted
# it on return from the system call).
INTERRUPTS = {
    "local_timer_entry",
    "reschedule_entry",
    "call_function_entry",
    "call_function_single_entry",
    "irq_handler_entry",
}


def unavailable_reason() -> str | None:
    """Why the kernel's record cannot be taken here, or None when it can (mounting tracefs
    where it is not mounted yet)."""
    if platform.system() != "Linux":
        return f"tracefs is Linux's; this is {platform.system()}"
    if platform.machine() != "x86_64":
        return f"the system call numbers are x86-64's; this is {platform.machine()}"
    if os.geteuid() != 0:
        return "tracefs needs root"
    if not (TRACEFS / "instances").is_dir():
        done = subprocess.run(
            ["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True, text=True
        )
        if done.returncode != 0:
            return f"mount -t tracefs nodev {TRACEFS}: {done.stderr.strip() or done.returncode}"
    missing = [e for e in EVENTS if not (TRACEFS / "events" / e).is_dir()]
    if missing:
        return "the kernel has no " + ", ".join(missing)
    if "mono_raw" not in (TRACEFS / "trace_clock").read_text():
        return "the kernel's trace clocks lack mono_raw"
    return None


class Recording:
    """One trace instance: start() it, run, then stop() for the text of the record."""

    def __init__(self, name: str, buffer_kb_per_cpu: int = 65536):
        self.dir = TRACEFS / "instances" / name
        self.buffer_kb = buffer_kb_per_cpu

    def _write(self, relative: str, text: str) -> None:
        (self.dir / relative).write_text(text)

    def start(self) -> None:
        if self.dir.exists():
            self.dir.rmdir()
        self.dir.mkdir()
        self._write("trace_clock", "mono_raw")
        self._write("buffer_size_kb", str(self.buffer_kb))
        self._write("options/record-tgid", "1")
        # Only the calls that matter: every other system call would fill the buffer.
        ids = " || ".join(f"id == {n}" for n in SYSCALLS_X86_64)
        self._write("events/raw_syscalls/sys_enter/filter", ids)
        for event in EVENTS:
            self._write(f"events/{event}/enable", "1")
        self._write("tracing_on", "1")

    def stop(self) -> str:
        self._write("tracing_on", "0")
        text = (self.dir / "trace").read_text(errors="replace")
        # A buffer that overran lost events: the record would be incomplete.
        self.overruns = [
            str(stats)
            for stats in (self.dir / "per_cpu").glob("cpu*/stats")
            if "overrun: 0" not in stats.read_text()
        ]
        self.dir.rmdir()
        return text


# "   comm-123     (  120) [001] d..2. 1234.567890: sched_switch: prev_comm=..."
LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<tid>\d+)\s+\(\s*(?P<tgid>[\d-]+)\)\s+\[(?P<cpu>\d+)\]\s+(?P<flags>\S+)\s+"
    r"(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s?(?P<body>.*)$"
)
FIELD = re.compile(r"(\w+)=(\S+)")


@dataclasses.dataclass
class Event:
    time_ns: int
    cpu: int
    tid: int
    tgid: int | None
    comm: str
    name: str
    fields: dict
    # In a hard or soft interrupt (the flags' third letter: h, s or H): the task the line names
    # is only whoever the interrupt came upon, not the event's cause.
    in_interrupt: bool = False


def parse(text: str) -> list[Event]:
    events = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            continue
        seconds, micros = m["ts"].split(".")
        tgid = m["tgid"].strip()
        body = m["body"]
        fields = dict(FIELD.findall(body))
        if m["event"] == "sched_switch":
            # prev_comm may hold spaces: take the pids and the state by position.
            left, _, right = body.partition(" ==> ")
            fields = dict(FIELD.findall(left))
            fields.update({"next_" + k.removeprefix("next_"): v for k, v in FIELD.findall(right)})
        if m["event"] == "sys_enter":
            nr = re.match(r"NR (\d+)", body)
            fields = {"nr": int(nr.group(1))} if nr else {}
        events.append(
            Event(
                time_ns=int(seconds) * 1_000_000_000 + int(micros.ljust(9, "0")[:9]),
                cpu=int(m["cpu"]),
                tid=int(m["tid"]),
                tgid=int(tgid) if tgid.lstrip("-").isdigit() else None,
                comm=m["comm"].strip(),
                name=m["event"],
                fields=fields,
                in_interrupt=len(m["flags"]) > 2 and m["flags"][2] in "hsH",
            )
        )
    return events


@dataclasses.dataclass
class Span:
    """One scenario's measured frames: its frame loop's and its poller's threads, and when the
    frames ran (meta.json: threads.frame_loop.thread_id, threads.poller.thread_id,
    measured_span_ns)."""

    label: str
    frame_loop_tid: int
    poller_tid: int | None
    start_ns: int
    end_ns: int


# The background's threads, by the names the tool gives them (core/thread_policy.h).
BACKGROUND_NAMES = ("compile ", "boost ", "control ", "spinner")
KERNEL_THREAD_NAMES = ("kworker/", "ksoftirqd/", "rcu_", "migration/", "kthreadd", "watchdog",
                       "cpuhp/", "irq/", "kcompactd", "khugepaged", "kswapd")


def is_kernel_thread(pid: int, comm: str) -> bool:
    """A kernel thread (it runs the kernel's own work: RCU, deferred work, soft interrupts):
    one with no command line, where it still exists, else by its name."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes() == b"" and pid > 0
    except OSError:
        return comm.startswith(KERNEL_THREAD_NAMES)


@dataclasses.dataclass
class Findings:
    """What the harness did in the measured frames, by the kernel's record."""

    threads_created: list[str] = dataclasses.field(default_factory=list)
    threads_ended: list[str] = dataclasses.field(default_factory=list)
    yields: list[str] = dataclasses.field(default_factory=list)
    # Switches of the runnable frame loop with no tick, IPI or interrupt on its CPU since it
    # came onto it, that is, made by its own call: to a background thread or another process
    # (a fault: the harness handed its CPU away), to the poller it had just woken (the
    # harness's one wake per frame, which frames.csv counts), to a thread of the frame's own
    # (a worker, the driver's submission thread: what a game's frame does too).
    self_made_to_background: list[str] = dataclasses.field(default_factory=list)
    self_made_to_poller: int = 0
    self_made_to_frame_threads: int = 0
    # To a kernel thread (RCU, deferred work) the frame loop's own system calls woke: the
    # kernel's doing, as it would be for a game's.
    self_made_to_kernel: int = 0
    # Switches of the runnable frame loop after an interrupt: the kernel's own doing.
    preempted: int = 0
    # Switches of the runnable frame loop after a thread on another CPU (not the poller) woke a
    # thread onto the frame loop's CPU: the waker marks the CPU for a reschedule and sends an
    # IPI, but the frame loop may reach a reschedule point (the end of a system call) before the
    # IPI lands, and the switch then comes first in the record. The kernel's doing too.
    woken_here_from_another_cpu: int = 0

    def faults(self) -> list[str]:
        return self.threads_created + self.threads_ended + self.yields + self.self_made_to_background


def judge(events: list[Event], process_tgid: int, spans: list[Span]) -> Findings:
    """The measured frames of `spans`, checked against the record of process `process_tgid`:
    no thread created or ended, no sched_yield by the frame loop, and no switch of the runnable
    frame loop that it made itself to a background thread or another process."""
    out = Findings()
    names = {e.tid: e.comm for e in events if e.tgid == process_tgid}
    for span in spans:
        # The last interrupt per CPU, and when the frame loop last came onto each CPU.
        last_interrupt_ns: dict[int, int] = {}
        last_remote_wake_ns: dict[int, int] = {}
        loop_in_ns: dict[int, int] = {}
        for e in events:
            if e.time_ns > span.end_ns:
                break
            if e.name in INTERRUPTS:
                last_interrupt_ns[e.cpu] = e.time_ns
            if e.name in ("sched_wakeup", "sched_wakeup_new") and e.tid != span.poller_tid:
                target = int(e.fields.get("target_cpu", -1))
                if target != e.cpu:
                    last_remote_wake_ns[target] = e.time_ns
            if e.name == "sched_switch":
                next_pid = int(e.fields.get("next_pid", -1))
                if next_pid == span.frame_loop_tid:
                    loop_in_ns[e.cpu] = e.time_ns
                if (
                    int(e.fields.get("prev_pid", -1)) == span.frame_loop_tid
                    and e.fields.get("prev_state", "").startswith("R")
                    and e.time_ns >= span.start_ns
                ):
                    came_in = loop_in_ns.get(e.cpu, span.start_ns)
                    if last_interrupt_ns.get(e.cpu, -1) >= came_in:
                        out.preempted += 1
                    elif last_remote_wake_ns.get(e.cpu, -1) >= came_in:
                        out.woken_here_from_another_cpu += 1
                    elif next_pid == span.poller_tid:
                        out.self_made_to_poller += 1
                    elif next_pid in names and not names[next_pid].startswith(BACKGROUND_NAMES):
                        out.self_made_to_frame_threads += 1
                    elif next_pid not in names and is_kernel_thread(
                        next_pid, e.fields.get("next_comm", "")
                    ):
                        out.self_made_to_kernel += 1
                    else:
                        who = names.get(next_pid, e.fields.get("next_comm", "?") + " (another process)")
                        out.self_made_to_background.append(
                            f"{span.label}: at {e.time_ns} ns the runnable frame loop gave CPU "
                            f"{e.cpu} to {who}-{next_pid} with no tick, IPI, interrupt or "
                            "wake-up from another CPU since it came onto that CPU"
                        )
            if e.time_ns < span.start_ns:
                continue
            if e.name == "sched_process_fork" and e.tgid == process_tgid:
                out.threads_created.append(
                    f"{span.label}: {e.comm}-{e.tid} created thread {e.fields.get('child_pid')}"
                )
            if e.name == "sched_process_exit" and e.tgid == process_tgid:
                out.threads_ended.append(f"{span.label}: thread {e.comm}-{e.tid} ended")
            # The threads the tool starts for the frame: none may give its CPU away by a yield.
            if (
                e.name == "sys_enter"
                and SYSCALLS_X86_64.get(e.fields.get("nr")) == "sched_yield"
                and (
                    e.tid in (span.frame_loop_tid, span.poller_tid)
                    or names.get(e.tid, "").startswith("worker ")
                )
            ):
                who = "the frame loop" if e.tid == span.frame_loop_tid else names.get(e.tid)
                out.yields.append(f"{span.label}: {who} called sched_yield at {e.time_ns} ns")
    return out


def off_cpu_stretches(events: list[Event], span: Span) -> list[dict]:
    """Every stretch in `span` in which the frame loop was runnable but not running: from its
    switch out with prev_state R to its next switch in; who took its CPU and how long."""
    out = []
    pending = None
    for e in events:
        if e.name != "sched_switch" or not (span.start_ns <= e.time_ns <= span.end_ns):
            continue
        if int(e.fields.get("prev_pid", -1)) == span.frame_loop_tid and e.fields.get(
            "prev_state", ""
        ).startswith("R"):
            pending = {"at_ns": e.time_ns, "cpu": e.cpu, "to": e.fields.get("next_comm", "?")}
        elif pending and int(e.fields.get("next_pid", -1)) == span.frame_loop_tid:
            pending["off_ns"] = e.time_ns - pending["at_ns"]
            out.append(pending)
            pending = None
    return out


# Who holds a CPU, by the tool's thread names (core/thread_policy.h) and the record.
def holder_class(tid: int, comm: str, names: dict[int, str]) -> str:
    if tid == 0 or comm.startswith("swapper"):
        return "idle"
    if tid in names:
        return "background" if names[tid].startswith(BACKGROUND_NAMES) else "frame's threads"
    return "kernel" if is_kernel_thread(tid, comm) else "other processes"


def waits_by_holder(events: list[Event], process_tgid: int, span: Span) -> dict[str, dict[str, list[float]]]:
    """The foreground's threads (the frame loop, the poller, the workers) runnable but not
    running in `span`, each stretch in ms, by whose thread held the CPU: for a thread switched
    out while runnable, the one switched in; for a woken one, the one running on the CPU it was
    woken onto. {"workers": {"background": [ms, ...], ...}, "frame loop": ..., "poller": ...}."""
    names = {e.tid: e.comm for e in events if e.tgid == process_tgid}

    def role(tid: int) -> str | None:
        if tid == span.frame_loop_tid:
            return "frame loop"
        if tid == span.poller_tid:
            return "poller"
        return "workers" if names.get(tid, "").startswith("worker ") else None

    running: dict[int, tuple[int, str]] = {}  # per CPU: the thread on it
    waiting: dict[int, tuple[int, str]] = {}  # per foreground thread: since when, and whose CPU
    out: dict[str, dict[str, list[float]]] = {}
    for e in events:
        if e.time_ns > span.end_ns:
            break
        if e.name == "sched_switch":
            prev, nxt = int(e.fields.get("prev_pid", -1)), int(e.fields.get("next_pid", -1))
            running[e.cpu] = (nxt, e.fields.get("next_comm", "?"))
            # A thread switched out was running: a wake-up seen while it still ran (one that
            # came as it was about to sleep) was no wait.
            waiting.pop(prev, None)
            if nxt in waiting:
                since_ns, holder = waiting.pop(nxt)
                if since_ns >= span.start_ns:
                    out.setdefault(role(nxt), {}).setdefault(holder, []).append(
                        (e.time_ns - since_ns) / 1e6
                    )
            if role(prev) and e.fields.get("prev_state", "").startswith("R"):
                waiting[prev] = (e.time_ns, holder_class(nxt, e.fields.get("next_comm", "?"), names))
        elif e.name == "sched_wakeup":
            tid = int(e.fields.get("pid", -1))
            on_cpu = any(held[0] == tid for held in running.values())
            if role(tid) and tid not in waiting and not on_cpu:
                cpu = int(e.fields.get("target_cpu", e.cpu))
                held_by = running.get(cpu, (0, "swapper"))
                waiting[tid] = (e.time_ns, holder_class(held_by[0], held_by[1], names))
    return out


def long_sleeps(events: list[Event], process_tgid: int, span: Span, min_ms: float) -> list[dict]:
    """Every stretch in `span` of at least `min_ms` in which a thread of the process slept (was
    switched out not runnable) and who woke it: the thread that made the wake-up (the trace
    line's own task), or "an interrupt" when the wake-up came in one (a timer's expiry, a
    device): then the line's task is only whoever the interrupt came upon. What a thread waits
    on another for: a lock, an event, a driver's queue."""
    names = {e.tid: e.comm for e in events if e.tgid == process_tgid}
    asleep: dict[int, int] = {}
    out = []
    for e in events:
        if e.time_ns > span.end_ns:
            break
        if e.name == "sched_switch":
            prev = int(e.fields.get("prev_pid", -1))
            if prev in names and not e.fields.get("prev_state", "R").startswith("R"):
                asleep[prev] = e.time_ns
        elif e.name == "sched_wakeup":
            tid = int(e.fields.get("pid", -1))
            since = asleep.pop(tid, None)
            if since is None or since < span.start_ns:
                continue
            slept_ms = (e.time_ns - since) / 1e6
            if slept_ms >= min_ms:
                waker = (f"an interrupt (on {e.comm}-{e.tid})" if e.in_interrupt
                         else f"{e.comm}-{e.tid}")
                out.append({"thread": f"{names.get(tid, '?')}-{tid}", "slept_ms": slept_ms,
                            "woken_by": waker, "at_ns": e.time_ns})
    return out


def main(argv: list[str]) -> int:
    """sched_trace.py RESULTS_DIR -- COMMAND...: runs COMMAND under the record (the tool's run
    writing RESULTS_DIR), then prints, per scenario of RESULTS_DIR, what the harness did and
    every stretch the frame loop was runnable but off its CPU, by who took it."""
    import json
    import statistics
    import sys

    if "--" not in argv or argv.index("--") != 1:
        print("usage: sched_trace.py RESULTS_DIR -- COMMAND...", file=sys.stderr)
        return 2
    results, command = Path(argv[0]), argv[2:]
    why = unavailable_reason()
    if why:
        print(f"sched_trace: {why}", file=sys.stderr)
        return 3
    recording = Recording(f"gpuoverlap-{os.getpid()}")
    recording.start()
    try:
        process = subprocess.Popen(command, stdout=sys.stderr)  # stdout: the table alone
        status = process.wait()
    finally:
        text = recording.stop()
    events = parse(text)
    names = {e.tid: e.comm for e in events if e.tgid == process.pid}
    print(f"command exit status {status}; {len(events)} events; overruns: {recording.overruns or 'none'}")
    print("| scenario | frames' span s | created/ended | yields | runnable switched out | self-made: to background / poller / frame's threads | off CPU to background (n, p50 ms, sum ms) | off CPU in all (n, sum ms) |")
    print("|---|---|---|---|---|---|---|---|")
    waits, spans = [], []
    for meta_path in sorted(results.rglob("meta.json")):
        meta = json.loads(meta_path.read_text())
        threads, span_ns = meta.get("threads", {}), meta.get("measured_span_ns")
        if not span_ns or "thread_id" not in threads.get("frame_loop", {}):
            continue
        span = Span(
            str(meta_path.parent.relative_to(results)),
            threads["frame_loop"]["thread_id"],
            threads.get("poller", {}).get("thread_id"),
            span_ns["start"],
            span_ns["end"],
        )
        found = judge(events, process.pid, [span])
        stretches = off_cpu_stretches(events, span)
        to_bg = [s["off_ns"] / 1e6 for s in stretches if s["to"].startswith(("compile", "boost", "control"))]
        runnable_out = (
            found.preempted
            + found.woken_here_from_another_cpu
            + found.self_made_to_poller
            + found.self_made_to_frame_threads
            + found.self_made_to_kernel
            + len(found.self_made_to_background)
        )
        print(
            f"| {span.label} | {(span.end_ns - span.start_ns) / 1e9:.2f} | "
            f"{len(found.threads_created)}/{len(found.threads_ended)} | {len(found.yields)} | "
            f"{runnable_out} | {len(found.self_made_to_background)} / {found.self_made_to_poller} / "
            f"{found.self_made_to_frame_threads} | {len(to_bg)}, "
            f"{statistics.median(to_bg) if to_bg else 0:.2f}, {sum(to_bg):.1f} | "
            f"{len(stretches)}, {sum(s['off_ns'] for s in stretches) / 1e6:.1f} |"
        )
        for line in found.faults():
            print(f"    {line}")
        waits.append((span.label, waits_by_holder(events, process.pid, span)))
        spans.append((span.label, span))
    # Who held the CPU while a foreground thread waited for one: what a background thread took.
    print()
    print("| scenario | thread | runnable, waiting for a CPU held by: background (n, sum ms) | frame's threads | other processes | kernel | an idle CPU (wake-up) |")
    print("|---|---|---|---|---|---|---|")
    for label, by_role in waits:
        for who in ("frame loop", "poller", "workers"):
            cells = by_role.get(who, {})
            row = [f"{len(v)}, {sum(v):.1f}" for v in (cells.get(k, []) for k in
                   ("background", "frame's threads", "other processes", "kernel", "idle"))]
            print(f"| {label} | {who} | " + " | ".join(row) + " |")
    # Long sleeps and who ended them: a thread waiting on another (a lock, a driver's queue).
    sleeps = [(label, s) for label, span in spans for s in long_sleeps(events, process.pid, span, 50.0)]
    if sleeps:
        print()
        print("| scenario | thread | slept ms (50 ms or more) | woken by |")
        print("|---|---|---|---|")
        for label, s in sleeps:
            print(f"| {label} | {s['thread']} | {s['slept_ms']:.1f} | {s['woken_by']} |")
    return status


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
