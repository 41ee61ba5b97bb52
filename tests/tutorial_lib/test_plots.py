import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.figure import Figure

from tutorial_lib import plots


@pytest.fixture(autouse=True)
def no_open_figures():
    yield
    # Figures are returned closed, so a long notebook does not pile them up.
    assert plt.get_fignums() == []


def test_plot_losses_draws_train_and_validation():
    fig = plots.plot_losses([3, 2, 1], [3.5, 2.5, 2.0])
    assert isinstance(fig, Figure)
    assert [line.get_label() for line in fig.axes[0].lines] == ["train", "validation"]


def test_show_images_accepts_nchw_and_nhw_and_rejects_other_shapes():
    assert len(plots.show_images(torch.rand(5, 1, 8, 8), labels=list(range(5)), ncols=3).axes) == 6
    plots.show_images(torch.rand(2, 8, 8))
    with pytest.raises(ValueError, match="expected"):
        plots.show_images(torch.rand(2, 4, 8, 8))
    with pytest.raises(ValueError, match="empty"):
        plots.show_images(torch.rand(0, 1, 8, 8))


def test_decision_boundary_calls_the_predictor_on_a_grid():
    calls = []

    def predict(points):
        calls.append(points.shape)
        return (points[:, 0] > 0).long()

    plots.plot_decision_boundary(
        predict, torch.randn(20, 2), torch.randint(0, 2, (20,)), resolution=10
    )
    assert calls == [torch.Size([100, 2])]


def test_grad_flow_schedule_function_and_bars():
    assert plots.plot_grad_flow({"a": 1.0, "b": 0.0}).axes[0].get_yscale() == "log"
    assert len(plots.plot_lr_schedule([0.1, 0.2]).axes[0].lines) == 1
    fig = plots.plot_function(torch.arange(3.0), {"f": torch.arange(3.0), "g": torch.ones(3)})
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["f", "g"]
    assert len(plots.plot_bars({"x": 1, "y": 2}).axes[0].patches) == 2
    with pytest.raises(ValueError):
        plots.plot_bars({})


def test_confusion_matrix_annotates_counts_true_rows_predicted_columns():
    cm = torch.tensor([[5, 1, 0], [2, 7, 0], [0, 0, 0]])
    fig = plots.plot_confusion_matrix(cm, class_names=["a", "b", "c"])
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("predicted class", "true class")
    # Text sits at (x = predicted, y = true): the 2 true "b" predicted "a" is at (0, 1).
    at = {(t.get_position()[0], t.get_position()[1]): t.get_text() for t in ax.texts}
    assert len(at) == 9 and at[(0, 1)] == "2" and at[(1, 0)] == "1"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    two = plots.plot_confusion_matrix({"before": cm, "after": cm.t()}, title="both")
    assert [a.get_title() for a in two.axes] == ["before", "after"]
    with pytest.raises(ValueError, match="square"):
        plots.plot_confusion_matrix(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="class names"):
        plots.plot_confusion_matrix(cm, class_names=["a"])
