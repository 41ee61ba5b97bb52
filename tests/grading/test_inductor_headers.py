"""torch.compile's precompiled header, seeded into every sandbox (``inductor_headers.py``)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.grading import inductor_headers, sandbox

pytestmark = pytest.mark.skipif(
    not sandbox.available(), reason="bubblewrap (bwrap) is not installed"
)

# Compiles on the CPU as 10_scaling's cells do, then reports what the sandbox's /tmp holds.
COMPILE_AND_REPORT = textwrap.dedent(
    """
    import json, os, torch
    import torch._inductor.config as inductor_config
    inductor_config.cpp.vec_isa_ok = True
    x = torch.linspace(-3, 3, 64)
    compiled = torch.compile(lambda t: t * torch.sigmoid(1.702 * t))
    torch.testing.assert_close(compiled(x), x * torch.sigmoid(1.702 * x))
    headers = "/tmp/torchinductor_student/precompiled_headers"
    stat = os.statvfs("/tmp")
    print(json.dumps({
        "used_mb": (stat.f_blocks - stat.f_bfree) * stat.f_frsize / 2**20,
        "seeded_writable": [n for n in os.listdir(headers) if n.endswith(".gch")
                            and os.access(os.path.join(headers, n), os.W_OK)],
        "folder_writable": os.access(headers, os.W_OK),
    }))
    """
)


@pytest.fixture(scope="module")
def seed():
    files = inductor_headers.ensure_built()
    if not files:
        pytest.skip("no seed on this machine: inductor could not precompile its header here")
    return files


def test_the_seed_is_the_header_and_its_precompiled_form(seed):
    assert sorted(p.suffix for p in seed) == [".gch", ".h"]
    assert all(p.stat().st_size > 0 for p in seed)


def test_a_compile_in_the_sandbox_uses_the_seed_instead_of_building_150_mb(seed, tmp_path):
    # 64 MiB of /tmp: too small for the 150 MB header a kernel would otherwise build there.
    argv = sandbox.sandbox_argv(tmp_path, [], 6144, disk_mb=64)
    done = subprocess.run(
        [*argv, sys.executable, "-c", COMPILE_AND_REPORT],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["used_mb"] < 32, f"the compile filled /tmp: {report}"
    assert report["seeded_writable"] == [], "a kernel could change the seed for the next"
    assert report["folder_writable"], "a header for other flags could not be built"


def test_without_a_finished_seed_nothing_is_bound(tmp_path):
    (tmp_path / "torchinductor_student" / "precompiled_headers").mkdir(parents=True)
    (tmp_path / "torchinductor_student" / "precompiled_headers" / "half.h.gch").write_text("")
    assert inductor_headers.seed_files(tmp_path) == []  # no DONE mark: an interrupted build
    assert inductor_headers.bwrap_args([], "/tmp") == []


def test_where_no_seed_can_be_kept_grading_goes_on_without_one(tmp_path):
    (tmp_path / "a-file").write_text("")
    assert inductor_headers.ensure_built(tmp_path / "a-file" / "seed") == []


def test_a_seed_is_built_only_for_runs_with_kernels_enough_that_compile(monkeypatch):
    assert inductor_headers.compiles("10_scaling")
    assert not inductor_headers.compiles("00_welcome")
    built = []
    monkeypatch.setattr(inductor_headers, "ensure_built", lambda: built.append(1) or [])
    inductor_headers.ensure_built_for(["00_welcome"] * 50 + ["10_scaling"])  # a class of one
    assert built == []
    inductor_headers.ensure_built_for(["10_scaling"] * inductor_headers.WORTH_IT_FROM)
    assert built == [1]


def test_each_torch_installation_has_its_own_seed(monkeypatch):
    # The header's name hashes flags that name torch's folder by absolute path: a seed keyed on
    # the version alone was bound into another clone's sandboxes under a name no kernel asked for.
    here = inductor_headers.installation()
    assert Path(here[1], "__init__.py").is_file(), "not torch's folder"
    seed_here = inductor_headers.seed_root()
    elsewhere = (here[0], "/another/clone/.venv/lib/python3.11/site-packages/torch", *here[2:])
    monkeypatch.setattr(inductor_headers, "installation", lambda: elsewhere)
    seed_elsewhere = inductor_headers.seed_root()
    assert seed_elsewhere != seed_here
    assert seed_elsewhere.parent == seed_here.parent
    assert seed_elsewhere.name.startswith(f"inductor-headers-{here[0]}-")


def test_a_build_prunes_the_seeds_of_installations_that_are_gone(tmp_path):
    def seed(name, torch_dir):
        root = tmp_path / f"inductor-headers-{name}"
        (root / "torchinductor_student" / "precompiled_headers").mkdir(parents=True)
        if torch_dir is not None:
            (root / inductor_headers.FOR).write_text(f"2.14.1\n{torch_dir}\n/inc\ng++\n")
        (tmp_path / f"inductor-headers-{name}.lock").write_text("")
        return root

    gone = seed("gone", tmp_path / "deleted-clone" / "torch")
    kept = seed("kept", tmp_path)  # its torch folder still exists
    unknown = seed("unknown", None)  # built before seeds said what they are for
    inductor_headers._prune_seeds_of_removed_installations(tmp_path)
    assert not gone.exists() and not (tmp_path / "inductor-headers-gone.lock").exists()
    assert kept.exists() and unknown.exists()
