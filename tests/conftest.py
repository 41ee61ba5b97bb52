"""Shared test settings: a non-interactive plotting back-end and one torch thread."""

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup``: hand out the longest groups first (``_longest_first``),
    and keep each ``xdist_group`` on one worker under pytest 9.

    pytest-xdist tags a grouped test by appending ``@group`` to ``item._nodeid``; pytest 9
    keeps node ids in ``item._id``, so the tag was lost and groups were split across
    workers (each worker then rebuilt the group's expensive module fixtures, and two
    workers graded the same scratch class at once). This re-applies the tag.
    """
    if not getattr(config.option, "loadgroup", False):  # only in xdist workers, loadgroup
        return
    items.sort(key=_longest_first)
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:  # pytest < 9: xdist's own tagging works
        return
    for item in items:
        groups = _groups(item)
        tag = "@" + "_".join(groups)
        if groups and hasattr(item, "_id") and not item.nodeid.endswith(tag):
            item._id = coerce_node_id(item.nodeid + tag)


def _groups(item) -> list[str]:
    return sorted(
        {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
    )


# The longest xdist groups first. A worker that runs dry gets the next group in collection
# order (make test passes --no-loadscope-reorder: xdist would otherwise sort the groups by
# how many tests they hold), so a long group handed out last ran alone while the other
# worker idled: the platforms group (about 9 minutes of one worker) came last and the
# parallel phase ended 4 minutes after one worker had finished. Measured on 2 workers
# (pytest --durations, 12-07): grading 22 min, platforms 9, a lesson 4 to 9, later lessons
# costing more than earlier ones; the many one-off tests fill the end.
LONGEST_GROUPS = ("grading", "platforms")


def _longest_first(item) -> tuple[int, int]:
    groups = _groups(item)
    if not groups:
        return (3, 0)
    group = groups[0]
    if group in LONGEST_GROUPS:
        return (0, LONGEST_GROUPS.index(group))
    if group[:2].isdigit():  # a lesson's group: the later lesson first
        return (1, -int(group[:2]))
    return (2, 0)
