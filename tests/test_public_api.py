"""Every name a subpackage lists in __all__ exists (as sklearn's test_import_all_consistency), and
the public import paths from before the issue-15 restructuring still work."""
import importlib

import pytest

SUBPACKAGES = [
    "stairsense",
    "stairsense.stream",
    "stairsense.stream.simulate",
    "stairsense.stream.io",
    "stairsense.features",
    "stairsense.models",
    "stairsense.models.mkl",
    "stairsense.models.kernel_machines",
    "stairsense.models.multitask",
    "stairsense.models.stairstep",
    "stairsense.export",
    "stairsense.serve",
]

# The __all__ of each top package before models/ and stream/ were split into sub-packages
# (issue 15); the README and users import these, so none may disappear.
PUBLIC_BEFORE_ISSUE_15 = {
    "stairsense": "PipelineConfig ReplayReport WindowDataset __version__ front_end match_steps replay window_dataset",
    "stairsense.stream": "Activity CausalBufferMean FrontEnd FrontEndResult LogFormatError LogRepairedWarning "
    "MadgwickOrientation Person REPAIRS ReadReport RepairAction STAIR_ACTIVITIES STANDARD_GRAVITY SensorLog "
    "SensorModel SlidingWindower Standardized Standardizer StepSegmenter StepTruth Window WindowStatus WindowTable "
    "causal_buffer_mean iter_log_chunks load_oxford load_uci_hapt mizell_components oxford_recordings quat_to_matrix "
    "read_log read_segments read_steps resample resolve_orientation rotate_by_quaternion run_front_end segment_steps "
    "simulate simulate_chunks sliding_windows standardize steps_path uci_hapt_experiments with_virtual_sensors "
    "write_log",
    "stairsense.features": "FEATURE_NAMES N_FEATURES ROW_NAMES WindowFeatureAccumulator feature_names "
    "make_feature_scaler window_features",
    "stairsense.models": "ADMMMultiTaskClassifier CLASSIFIERS CVResult EasyMKL EasyMKLSelector KOMDClassifier "
    "KernelMachineClassifier KernelMachineRegressor KernelMachineSolution LOSS_NAMES LinearKernel Loss ModelFileError "
    "PROTOCOLS PrecomputedKernel RLS2Classifier RLS2Path RLS2Regressor RLS2Selector RowOracleKernel StairstepModel "
    "default_grid evaluate_protocol kernel_machine_objective load_model make_classifier make_stairstep_pipeline "
    "read_model_header rls2_path save_model simplex_least_squares solve_kernel_machine stair_scores",
    "stairsense.export": "ExportParityError ExportReport OnnxModelError OnnxStairModel PRECISIONS build_onnx_model "
    "export_model inspect_model reduce_support register_converters session_options support_budget "
    "validation_windows window_features_model",
}


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_all_names_exist(name):
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names that do not exist: {missing}"


@pytest.mark.parametrize("name", sorted(PUBLIC_BEFORE_ISSUE_15))
def test_names_public_before_the_restructuring_stay_public(name):
    module = importlib.import_module(name)
    lost = [n for n in PUBLIC_BEFORE_ISSUE_15[name].split() if n not in module.__all__ or not hasattr(module, n)]
    assert not lost, f"{name} no longer exports {lost}"


def test_sub_package_names_are_the_top_package_objects():
    """One class, two paths: ``stairsense.models.KOMDClassifier is stairsense.models.mkl.KOMDClassifier``."""
    for sub in ("mkl", "kernel_machines", "multitask", "stairstep"):
        family = importlib.import_module(f"stairsense.models.{sub}")
        top = importlib.import_module("stairsense.models")
        for n in family.__all__:
            if hasattr(top, n):
                assert getattr(top, n) is getattr(family, n)


def test_output_kernel_solver_pieces_are_public_in_models():
    """Evaluations and paper reproductions (benchmarks/bench_okl.py) call the OKL solver directly."""
    models = importlib.import_module("stairsense.models")
    solver_pieces = {"MaskedOutputs", "okl_solve", "okl_lambda_max", "okl_kronecker_basis", "okl_path"}
    assert solver_pieces <= set(models.__all__)
