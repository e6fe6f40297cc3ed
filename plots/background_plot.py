"""background.FORMAT: background compiles (background.csv): a lane per compile thread, a bar
per compile, on the measured frames' time axis."""
import output
from inputs import FRAME_NUMERIC, read_table
from output import plt
from scenario_figure import title

BACKGROUND_COLOURS = {"idle": "#55A868", "boosted": "#C44E52", "unmanaged": "#8172B2"}


def plot_background(directory, records, meta, out_base, fmt):
    path = directory / "background.csv"
    if not path.exists():
        return []
    tasks = read_table(path, ("kind", "worker", "boosted", "start_us", "finish_us", "ran"),
                       ("worker", "start_us", "finish_us"))
    ran = tasks[(tasks.ran == "1") & tasks.worker.notna() & tasks.start_us.notna()
                & tasks.finish_us.notna()].copy()
    if ran.empty:
        return []

    def lane(row):
        if row.kind == "unmanaged":
            return ("unmanaged", int(row.worker))
        return ("boosted" if str(row.boosted) == "1" else "idle", int(row.worker))

    ran["lane"] = ran.apply(lane, axis=1)
    lanes = sorted(set(ran.lane))
    figure, axes = plt.subplots(figsize=(11, 0.35 * len(lanes) + 2))
    for index, key in enumerate(lanes):
        rows = ran[ran.lane == key]
        axes.broken_barh([(r.start_us / 1000.0, (r.finish_us - r.start_us) / 1000.0)
                          for r in rows.itertuples()], (index - 0.35, 0.7),
                         facecolors=BACKGROUND_COLOURS[key[0]], edgecolor="black", linewidth=0.3)
    frames_path = directory / "frames.csv"
    if frames_path.exists():
        frames = read_table(frames_path, ("cpu_start_us", "cpu_frame_us"), FRAME_NUMERIC)
        if not frames.empty:
            end_ms = (frames.cpu_start_us + frames.cpu_frame_us).max() / 1000.0
            axes.axvspan(frames.cpu_start_us.min() / 1000.0, end_ms, color="#4C72B0", alpha=0.12,
                         label="measured frames")
    axes.set_yticks(range(len(lanes)))
    axes.set_yticklabels([f"{kind} thread {worker}" for kind, worker in lanes], fontsize=8)
    axes.set_xlabel("time from the first measured frame (ms); negative: training and warm-up")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in BACKGROUND_COLOURS.values()]
    handles.append(plt.Rectangle((0, 0), 1, 1, color="#4C72B0", alpha=0.12))
    axes.legend(handles, ["idle-priority compile", "high-priority commit compile",
                          "unmanaged compile", "measured frames"], loc="upper right", fontsize=8)
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(title(meta, f"{len(ran)} background compiles"), fontsize=10)
    return [output.save(figure, out_base / f"background.{fmt}")]
