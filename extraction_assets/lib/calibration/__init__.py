"""Confidence that means a probability of being right: stored calibrations, their application and their figures.

`fit.py` (scikit-learn, the optional `calibrate` extra) is imported by the fitting command only, never here.
"""

from extraction_assets.lib.calibration.figures import (
    FIT_HEADERS,
    CurvePoint,
    FieldFigures,
    Judged,
    ReviewFigures,
    curve,
    describe,
    ece,
    fit_rows,
    reliability,
    review_figures,
)
from extraction_assets.lib.calibration.model import (
    CALIBRATION_SUFFIX,
    FieldCalibration,
    ReviewCost,
    VersionCalibration,
    band_confidence,
    calibration_path,
    load_calibration,
    probability_of,
)

__all__ = [
    "CALIBRATION_SUFFIX",
    "FIT_HEADERS",
    "CurvePoint",
    "FieldCalibration",
    "FieldFigures",
    "Judged",
    "ReviewCost",
    "ReviewFigures",
    "VersionCalibration",
    "band_confidence",
    "calibration_path",
    "curve",
    "describe",
    "ece",
    "fit_rows",
    "load_calibration",
    "probability_of",
    "reliability",
    "review_figures",
]
