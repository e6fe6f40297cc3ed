"""phases.FORMAT: where each condition's frame interval went, the frame loop's phases
(verdict.json's time_account) beside the baseline's."""
import math

import output
from inputs import InputError, short
from output import plt

PHASE_COLOURS = ["#4C72B0", "#8172B2", "#937860", "#55A868", "#CCCCCC", "#C44E52"]


def time_account_phases(condition, path):
    """A condition's time account phases as (name, baseline mean us, condition mean us), or None
    where it has none (an unpaced foreground, files from before the account)."""
    account = condition.get("time_account")
    if account is None:
        return None
    phases = account.get("phases") if isinstance(account, dict) else None
    if not isinstance(phases, list) or not phases:
        raise InputError(f"{path}: {short(condition['condition'])}'s time_account has no phases")
    out = []
    for phase in phases:
        values = [phase.get(k) if isinstance(phase, dict) else None
                  for k in ("phase", "baseline_mean_us", "condition_mean_us")]
        if not isinstance(values[0], str) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in values[1:]):
            raise InputError(f"{path}: {short(condition['condition'])}'s time_account phases need "
                             "a phase name and finite means")
        out.append(tuple(values))
    return out


def plot_phases(summary, target, path):
    """phases.FORMAT: where each condition's frame interval went, beside the baseline's: the
    frame loop's mean interval split into its phases (verdict.json's time_account, which add up
    to the interval), one bar per condition, labelled with the interval's shift and the
    decision. None when no condition has a time account."""
    accounts = [(c, time_account_phases(c, path)) for c in summary["conditions"]]
    accounts = [(c, phases) for c, phases in accounts if phases]
    if not accounts:
        return None
    names = [phase for phase, _, _ in accounts[0][1]]
    for c, phases in accounts:
        if [phase for phase, _, _ in phases] != names:
            raise InputError(f"{path}: the conditions' time accounts name different phases")
    # Each condition is paired with the baseline rounds it ran beside (a condition decided early
    # stops with fewer): one baseline bar where every pairing has the same means, else one above
    # each condition.
    baselines = [[b for _, b, _ in phases] for _, phases in accounts]
    one_baseline = all(
        all(abs(x - y) <= 0.005 * max(abs(y), 1.0) for x, y in zip(means, baselines[0]))
        for means in baselines)
    baseline_label = f"{short(summary['baseline'])} (baseline)"
    rows = [(baseline_label, baselines[0], "")] if one_baseline else []
    for (c, phases), baseline_means in zip(accounts, baselines):
        shift_ms = (sum(m for _, _, m in phases) - sum(baseline_means)) / 1000
        tag = (" (null)" if c.get("null_control") else " (negative)" if c.get("negative_control")
               else " (control)" if c.get("control") else "")
        if not one_baseline:
            rows.append((f"{baseline_label}, its rounds", baseline_means, ""))
        rows.append((f"{short(c['condition'])}{tag}", [m for _, _, m in phases],
                     f"{shift_ms:+.2f} ms, {c.get('verdict', '?')}"))
    figure, axes = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.8))
    for y, (_, means_us, note) in enumerate(rows):
        left = 0.0
        for k, mean_us in enumerate(means_us):
            width = max(mean_us, 0) / 1000
            axes.barh(y, width, left=left, color=PHASE_COLOURS[k % len(PHASE_COLOURS)],
                      edgecolor="white", label=names[k] if y == 0 else None)
            left += width
        axes.text(left, y, f"  {note}", va="center", fontsize=8)
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([label for label, _, _ in rows], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("mean frame interval, ms (the frame loop's phases, left to right)")
    axes.set_xlim(0, axes.get_xlim()[1] * 1.25)
    axes.legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(f"{short(summary['study'])}: where each condition's frame interval went "
                   "(mean per interval; the text: the shift against the baseline, the decision)",
                   fontsize=9)
    return output.save(figure, target)
