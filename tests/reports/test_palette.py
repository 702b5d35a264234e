"""Condition colours: fixed per name across reports, distinct in a report, readable and
distinguishable under simulated colour-vision deficiencies."""

from __future__ import annotations

import itertools

import numpy as np
from lsrep.reports.format import swatch
from lsrep.reports.palette import FIXED, PALETTE, condition_colors

# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB.
CVD = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(
        linear_rgb, 0, 1)
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_every_colour_has_3_to_1_contrast_on_white():
    for colour in PALETTE:
        luminance = float(_linear(colour) @ np.array([0.2126, 0.7152, 0.0722]))
        assert 1.05 / (luminance + 0.05) >= 3.0, colour


def test_every_pair_stays_distinguishable_under_simulated_colour_blindness():
    for vision, matrix in CVD.items():
        for a, b in itertools.combinations(PALETTE, 2):
            delta = float(np.linalg.norm(_lab(matrix @ _linear(a)) - _lab(matrix @ _linear(b))))
            assert delta >= 19.0, (vision, a, b, round(delta, 1))


def test_colours_are_fixed_per_name_whatever_the_order_or_company():
    one = condition_colors(["null", "full-context", "vector-rag"])
    two = condition_colors(["thalia", "vector-rag", "null", "my-memory", "ice", "exia-seed", "full-context"])
    for name in one:
        assert one[name] == two[name] == FIXED[name]
    assert condition_colors(["b-sys", "a-sys"]) == condition_colors(["a-sys", "b-sys"])
    assert condition_colors(["my-memory", "null"])["my-memory"] == condition_colors(["null", "my-memory"])["my-memory"]


def test_a_report_of_up_to_eight_conditions_has_eight_distinct_colours():
    names = ["null", "full-context", "vector-rag", "thalia", "ice", "exia-seed", "thalia-no-semantic", "ice-isolated"]
    assert len(set(condition_colors(names).values())) == 8
    assert len(set(condition_colors([f"cond-{i}" for i in range(8)]).values())) == 8


def test_swatches_use_the_name_not_the_position():
    assert 'background:#882255' in str(swatch("thalia", ["thalia", "null"]))
    assert 'background:#882255' in str(swatch("thalia", ["null", "vector-rag", "thalia"]))

