"""Writing figures: matplotlib's file-only backend, the output folders (created below OUT, never
through a symbolic link) and `save`, which lays a figure out, hides crowded tick labels and
writes it atomically. Every drawing module imports pyplot from here (the backend chosen before
pyplot loads) and saves through `output.save`, looked up at each call."""
import os
import pathlib
import tempfile

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402 (the drawing modules take pyplot from here)

from inputs import InputError  # noqa: E402


def output_directory(out, relative):
    """OUT/relative, created; refuses a symbolic link at OUT or anywhere below it, so a planted
    link in a results folder cannot send the plots elsewhere."""
    target = out
    for part in (pathlib.Path(".") / relative).parts:
        if part in ("..",) or os.path.isabs(part):
            raise InputError(f"{relative}: leaves the output folder")
    for part in [None] + list(pathlib.Path(relative).parts):
        if part is not None:
            target = target / part
        if target.is_symlink():
            raise InputError(f"{target}: is a symbolic link; plot.py writes only into real folders")
        try:
            target.mkdir(parents=part is None, exist_ok=True)
        except OSError as error:
            raise InputError(f"{target}: cannot create: {error.strerror}") from error
    return target


def drop_crowded_labels(figure, axes_list):
    """Hides each tick label that would touch one already kept (in tick order), once the figure
    is laid out: with a hundred conditions, doses or workloads some labels are left out, and the
    ones drawn never overlap. Removing labels only gives the axes more room, so a later layout
    pass cannot make the kept ones collide."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for axes in axes_list:
        for labels in (axes.get_xticklabels(), axes.get_yticklabels()):
            kept = []
            for label in labels:
                if not label.get_visible() or not label.get_text():
                    continue
                box = label.get_window_extent(renderer).padded(1.0)
                if any(box.overlaps(other) for other in kept):
                    label.set_visible(False)
                else:
                    kept.append(box)


def save(figure, path, crowded=()):
    """Into a new temporary beside `path`, then renamed over it: a link planted at `path` is
    replaced, never written through, and no half file is left. `crowded`: axes whose tick labels
    may be too many to show (drop_crowded_labels)."""
    try:
        if not figure.get_constrained_layout():  # constrained figures lay themselves out
            figure.tight_layout()
        if crowded:
            drop_crowded_labels(figure, crowded)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                                 suffix=path.suffix)
        try:
            with os.fdopen(descriptor, "wb") as file:
                figure.savefig(file, format=path.suffix[1:])
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    finally:
        plt.close(figure)
    return path
