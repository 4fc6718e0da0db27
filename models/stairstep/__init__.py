"""The stair-step application: the trained model and how it is evaluated (spec donini §3.6-§3.9).

``make_stairstep_pipeline`` composes the families below it ([-1, 1] scaling, EasyMKL top-k
selection, RBF KOMD: spec donini-easymkl-komd-climbtheworld-admm §3.6, §3.9, §3.7);
``StairstepModel`` binds that pipeline to the front-end configuration it was trained for and is
saved and loaded with integrity checks; ``evaluate_protocol`` runs the §3.7 protocols and baselines;
``ClimbCounter`` turns a barometer model's decisions into stair steps up and down, metres and floors;
``StepVote`` decides each step by the majority of its run's neighbours.
It lives in ``models/`` (not in the top ``stairsense`` package) because it only needs models,
features and the configuration type, and the export layer above must load it; it is its own
sub-package because it is an application of the MKL family, not a learning algorithm.
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

# Resolved on first use: the model and its protocols import scikit-learn, while the training recipe
# (its defaults shown by `stairsense train --help`) needs nothing heavy.
__getattr__, __dir__ = _lazy_exports(__name__, {
    "._climb": ("FLOOR_M", "ClimbCounter"),
    "._evaluation": ("CLASSIFIERS", "PROTOCOLS", "CVResult", "default_grid", "evaluate_protocol", "make_classifier",
                     "stair_counts", "stair_rates", "stair_scores"),
    "._invariant": ("RestrictedSelector", "heading_invariant_mask"),
    "._model": ("MODEL_FORMAT", "MODEL_FORMAT_VERSION", "ModelFileError", "StairstepModel", "load_model",
                "make_stairstep_pipeline", "package_version", "read_model_header", "save_model",
                "upgrade_model_file"),
    "._recipe": ("HEADS", "TRAIN_DEFAULTS", "TREES_HEAD", "TrainRecipe", "height_mask"),
    "._vote": ("StepVote", "vote_decisions"),
})

__all__ = [
    "HEADS",
    "TREES_HEAD",
    "TrainRecipe",
    "TRAIN_DEFAULTS",
    "height_mask",
    "RestrictedSelector",
    "heading_invariant_mask",
    "StairstepModel",
    "make_stairstep_pipeline",
    "save_model",
    "load_model",
    "read_model_header",
    "upgrade_model_file",
    "ModelFileError",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "package_version",
    "evaluate_protocol",
    "CVResult",
    "make_classifier",
    "default_grid",
    "stair_scores",
    "stair_counts",
    "stair_rates",
    "PROTOCOLS",
    "CLASSIFIERS",
    "ClimbCounter",
    "FLOOR_M",
    "StepVote",
    "vote_decisions",
]
