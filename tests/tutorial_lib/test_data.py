import pytest
import torch

from tutorial_lib import data


def test_spirals_shapes_dtypes_and_seed():
    x, y = data.make_spirals(50, 3, seed=1)
    assert x.shape == (150, 2) and x.dtype == torch.float32
    assert y.shape == (150,) and y.dtype == torch.int64 and set(y.tolist()) == {0, 1, 2}
    assert torch.equal(x, data.make_spirals(50, 3, seed=1)[0])
    assert not torch.equal(x, data.make_spirals(50, 3, seed=2)[0])


def test_blobs_and_regression_shapes():
    x, y = data.make_blobs(10, n_classes=4, n_features=5)
    assert x.shape == (40, 5) and y.bincount().tolist() == [10] * 4
    x, y, w, b = data.make_regression(30, n_features=3)
    assert x.shape == (30, 3) and y.shape == (30, 1) and w.shape == (3, 1) and b.shape == (1,)


def test_sequences_have_lengths_in_range():
    seqs, labels = data.make_sequences(20, min_len=2, max_len=5, n_features=3)
    assert len(seqs) == 20 and labels.shape == (20,)
    assert all(2 <= s.shape[0] <= 5 and s.shape[1] == 3 for s in seqs)


def test_digits_are_bundled_images_in_unit_range():
    x, y = data.load_digits()
    assert x.shape == (1797, 1, 8, 8) and y.shape == (1797,)
    assert float(x.min()) >= 0.0 and float(x.max()) <= 1.0
    assert set(y.tolist()) == set(range(10))


def test_missing_torchvision_dataset_is_skipped_cleanly(tmp_path, capsys):
    assert data.load_torchvision_dataset("MNIST", root=tmp_path, download=False) is None
    assert "not available" in capsys.readouterr().out
    with pytest.raises(ValueError):
        data.load_torchvision_dataset("NoSuchSet", root=tmp_path)


def test_train_val_split_is_disjoint_and_complete():
    train, val = data.train_val_split(100, 0.2, seed=0)
    assert len(val) == 20 and len(train) == 80
    assert sorted(torch.cat([train, val]).tolist()) == list(range(100))


@pytest.mark.parametrize("bad", [dict(n_per_class=0), dict(n_classes=0)])
def test_bad_sizes_are_rejected(bad):
    with pytest.raises(ValueError):
        data.make_spirals(**bad)
