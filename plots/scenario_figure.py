"""What a scenario's figures share: the title (scenario and device), the lanes (workloads
grouped by queue), p5/p50/p95 of a column, the queue colours and kind hatches, and the clock the
report's answers use with the clocks' names."""
import numpy as np

from inputs import short

QUEUE_COLOURS = {"direct": "#4C72B0", "compute": "#DD8452"}
KIND_HATCH = {"compute": None, "graphics": "//", "copy": ".."}
CLOCK_NAMES = {"poll": "poll clock", "ts": "timestamp clock", "clk": "shader clock"}


def answer_clock(records):
    """The clock the report's answers use: the timestamp clock where it was recorded, else the
    poll clock; None when no ok record has either."""
    ok = records[records.status == "ok"]
    for clock in ("ts", "poll"):
        if (ok[f"{clock}_start_us"].notna() & ok[f"{clock}_end_us"].notna()).any():
            return clock
    return None


def percentiles(values):
    values = values.dropna()
    if values.empty:
        return None
    return np.percentile(values, [5, 50, 95])


def workload_order(records):
    """Workloads grouped by queue, in the order the scenario lists them."""
    first = records[records.frame == records.frame.min()]
    queues = list(dict.fromkeys(first.queue))
    return [(q, list(first[first.queue == q].workload)) for q in queues]


def title(meta, what):
    device = meta.get("device", {})
    return (f"{short(meta.get('scenario', {}).get('name', '?'))}: {what}\n"
            f"{short(device.get('name', 'unknown device'))} ({short(device.get('driver_name', '?'))} "
            f"{short(device.get('driver_info', ''))})")
