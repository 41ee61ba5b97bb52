"""Pick the compute device once, and describe the environment for bug reports."""

from __future__ import annotations

import os
import platform

import torch

DEVICE_ENV_VAR = "TUTORIAL_DEVICE"


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _accelerator() -> torch.device | None:
    """The accelerator ``torch.accelerator`` reports (torch >= 2.6) when one is usable here.

    None on older torch, where there is none, or where its back-end cannot start; the
    device comes without an index ("cuda", not "cuda:0"), as ``get_device`` always gave it.
    """
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None or not hasattr(accelerator, "current_accelerator"):
        return None
    try:
        if not accelerator.is_available():  # current_accelerator() names a build's back-end
            return None
        device = accelerator.current_accelerator()
    except Exception:  # a back-end that is compiled in but cannot start on this machine
        return None
    return None if device is None else torch.device(device.type)


def get_device() -> torch.device:
    """Return the best device: torch's current accelerator (CUDA, MPS, XPU...), else CUDA,
    then Apple MPS, then CPU; ``TUTORIAL_DEVICE`` overrides."""
    requested = os.environ.get(DEVICE_ENV_VAR, "").strip()
    if requested:
        return _validated(requested)
    found = _accelerator()
    if found is not None:
        return found
    # torch before 2.6 has no torch.accelerator: ask each back-end
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def _validated(requested: str) -> torch.device:
    """Turn a ``TUTORIAL_DEVICE`` value into a device that exists here, or explain why not."""
    try:
        device = torch.device(requested)
    except RuntimeError as err:
        raise ValueError(
            f"{DEVICE_ENV_VAR}={requested!r} is not a device name; use cpu, cuda, cuda:1 or mps."
        ) from err
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"{DEVICE_ENV_VAR}={requested!r} asks for CUDA, but torch sees no CUDA device here. "
            f"Unset {DEVICE_ENV_VAR} to fall back to the CPU."
        )
    if device.type == "cuda" and device.index is not None:
        count = torch.cuda.device_count()
        if device.index >= count:
            raise ValueError(
                f"{DEVICE_ENV_VAR}={requested!r}: only {count} CUDA device(s) are visible."
            )
    if device.type == "mps" and not _mps_available():
        raise ValueError(f"{DEVICE_ENV_VAR}={requested!r} asks for MPS, which is not available.")
    return device


def environment_report() -> str:
    """Return a short multi-line report of versions and devices, to paste into a bug report."""
    import torchvision  # imported here: only the report needs it

    lines = [
        f"python       {platform.python_version()} ({platform.system()} {platform.machine()})",
        f"torch        {torch.__version__}",
        f"torchvision  {torchvision.__version__}",
        f"cuda         {torch.cuda.is_available()}"
        + (f" ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else ""),
        f"mps          {_mps_available()}",
        f"cpu threads  {torch.get_num_threads()}",
        f"device       {get_device()}"
        + (f" (from {DEVICE_ENV_VAR})" if os.environ.get(DEVICE_ENV_VAR) else ""),
    ]
    return "\n".join(lines)
