import pytest
import torch

from tutorial_lib.device import DEVICE_ENV_VAR, environment_report, get_device


def test_returns_a_torch_device(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    device = get_device()
    assert isinstance(device, torch.device)
    expected = "cuda" if torch.cuda.is_available() else None
    if expected:
        assert device.type == "cuda"


def no_torch_accelerator(monkeypatch):
    """As on torch before 2.6, or where torch.accelerator reports nothing usable."""
    monkeypatch.setattr("tutorial_lib.device._accelerator", lambda: None)


def test_falls_back_to_cpu_without_accelerators(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    no_torch_accelerator(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: False)
    assert get_device() == torch.device("cpu")


def test_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    no_torch_accelerator(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: True)
    assert get_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device() == torch.device("cuda")


def test_env_var_overrides(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV_VAR, "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr("tutorial_lib.device._accelerator", lambda: torch.device("cuda"))
    assert get_device() == torch.device("cpu")


needs_accelerator_api = pytest.mark.skipif(
    not hasattr(torch, "accelerator"), reason="torch.accelerator arrived in torch 2.6"
)


@needs_accelerator_api
def test_uses_the_accelerator_torch_reports(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("xpu", 0))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert get_device() == torch.device("xpu")  # the type alone, as "cuda" always was


@needs_accelerator_api
def test_an_unavailable_accelerator_falls_back_to_the_old_order(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    # a CUDA build on a machine without a GPU: current_accelerator() still says cuda
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("cuda"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: True)
    assert get_device() == torch.device("mps")


@needs_accelerator_api
def test_an_accelerator_that_cannot_start_falls_back(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)

    def broken():
        raise RuntimeError("driver too old")

    monkeypatch.setattr(torch.accelerator, "is_available", broken)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: False)
    assert get_device() == torch.device("cpu")


def test_works_on_torch_without_torch_accelerator(monkeypatch):
    """torch 2.5 has no torch.accelerator: the back-ends are asked one by one."""
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    monkeypatch.delattr(torch, "accelerator", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device() == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: False)
    assert get_device() == torch.device("cpu")


@pytest.mark.parametrize(
    ("value", "fragment"), [("gpu", "not a device name"), ("cuda", "no CUDA device")]
)
def test_env_var_errors_are_explained(monkeypatch, value, fragment):
    monkeypatch.setenv(DEVICE_ENV_VAR, value)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=fragment):
        get_device()


def test_environment_report_names_versions_and_device(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    report = environment_report()
    assert torch.__version__ in report
    assert f"device       {get_device()}" in report
