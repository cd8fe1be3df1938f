"""The book's figure helpers: dollar tick labels and the legibility checks of save()."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from inference_math.book import figures  # noqa: E402


@pytest.mark.parametrize(("value", "text"), [
    (0.001, "$0.001"), (0.01, "$0.01"), (0.05, "$0.05"), (0.1, "$0.10"), (0.25, "$0.25"),
    (1, "$1"), (2.5, "$2.50"), (10, "$10"), (1000, "$1,000"), (0, "$0"), (-0.5, "−$0.50"),
])
def test_usd(value, text):
    assert figures.usd(value) == text


def _figure(width=figures.WIDTH):
    figures.use_style()
    fig, ax = plt.subplots(figsize=(width, 3.5))
    return fig, ax


def test_dollar_log_axis_spans_whole_decades_with_dollar_labels():
    fig, ax = _figure()
    ax.plot([1, 10, 100], [0.03, 0.5, 40])
    ax.set_yscale("log")
    figures.usd_axis(ax, "y", label="cost per million tokens")
    assert ax.get_ylim() == pytest.approx((0.01, 100))
    fig.canvas.draw()
    labels = {t.get_text() for t in ax.get_yticklabels() if t.get_text()}
    assert {"$0.01", "$0.10", "$1", "$10", "$100"} <= labels
    assert figures.check_figure(fig) == []
    plt.close(fig)


def test_check_figure_finds_what_a_reader_cannot_read():
    fig, ax = _figure(width=10)
    ax.plot(np.arange(10), np.arange(10))
    ax.set_ylim(0, 5)
    ax.set_ylabel("$ per million output tokens")
    ax.legend(["a line"], fontsize=7)
    problems = figures.check_figure(fig)
    assert any("px on a phone" in p for p in problems)
    assert any("outside the y range" in p for p in problems)
    assert any("without dollar ticks" in p for p in problems)
    with pytest.raises(ValueError):
        figures.save(fig, "never-written")
    assert not (figures.FIGURE_DIR / "never-written.svg").exists()
    plt.close(fig)


def test_the_style_is_legible_on_a_phone():
    fig, ax = _figure()
    ax.plot([1, 2], [1, 2], label="a line")
    ax.set_xlabel("batch size")
    ax.legend()
    assert figures.check_figure(fig) == []
    plt.close(fig)


def test_scatter_points_are_checked_and_areas_are_not():
    fig, ax = _figure()
    ax.stackplot([1, 2, 3], [[1, 2, 3], [1, 1, 1]])
    ax.scatter([10], [1])
    ax.set_xlim(0.5, 3.5)
    problems = figures.check_figure(fig)
    assert len(problems) == 1 and "outside the x range" in problems[0]
    plt.close(fig)
