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


def test_falls_back_to_cpu_without_accelerators(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: False)
    assert get_device() == torch.device("cpu")


def test_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("tutorial_lib.device._mps_available", lambda: True)
    assert get_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device() == torch.device("cuda")


def test_env_var_overrides(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV_VAR, "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
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
