"""Shared test settings: a non-interactive plotting back-end and one torch thread."""

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Make ``--dist loadgroup`` keep each ``xdist_group`` on one worker under pytest 9.

    pytest-xdist tags a grouped test by appending ``@group`` to ``item._nodeid``; pytest 9
    keeps node ids in ``item._id``, so the tag was lost and groups were split across
    workers (each worker then rebuilt the group's expensive module fixtures, and two
    workers graded the same scratch class at once). This re-applies the tag.
    """
    if not getattr(config.option, "loadgroup", False):  # only in xdist workers, loadgroup
        return
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:  # pytest < 9: xdist's own tagging works
        return
    for item in items:
        groups = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        tag = "@" + "_".join(groups)
        if groups and hasattr(item, "_id") and not item.nodeid.endswith(tag):
            item._id = coerce_node_id(item.nodeid + tag)
