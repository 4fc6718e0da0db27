"""Variance-regularised multi-task learning solved by ADMM, serially or on Dask.

Implements spec ``donini-easymkl-komd-climbtheworld-admm.md`` §4 (thesis Ch. 13):
per-task linear hinge-loss models ``w_t`` coupled by a variance penalty
(Eq. 13.3/13.4), split by ADMM into decoupled per-task w-steps, a closed-form
z-step that needs one all-reduce of per-task vectors, and a dual step.
Errata applied (spec §7 rows 25-29): the z-step uses ``w^k``; the inverse of
Prop. 13.4.1 has ``rho1`` and ``rho2`` in their corrected places; SGD uses
``1/m_t``; stopping is Boyd's residual test.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from ._task_solvers import solve_task_dual, solve_task_sgd
from ._tasks import BinaryMultiTaskMixin, binary_classes, check_tasks

__all__ = [
    "ADMMMultiTaskClassifier",
    "consensus_z_step",
    "variance_regularized_objective",
    "variance_regularization_weights",
]


def variance_regularization_weights(lambda1, lambda2, n_tasks):
    """Map (lambda1, lambda2) of Eq. 13.3 to (rho1, rho2) of Eq. 13.4 (spec §4.1).

    ``rho1 = (1/T) lambda1 lambda2 / (lambda1 + lambda2)`` and
    ``rho2 = (1/T) lambda1^2 / (lambda1 + lambda2)``, written so that either
    lambda may be ``inf``: ``lambda2 = inf`` gives independent tasks
    (``rho2 = 0``), ``lambda1 = inf`` one shared model (``rho2 = inf``).

    Parameters
    ----------
    lambda1, lambda2 : float
        Penalties on the task offsets ``v_t`` and on the mean model ``w_0``.
    n_tasks : int
        Number of tasks ``T``.

    Returns
    -------
    rho1, rho2 : float

    Examples
    --------
    >>> variance_regularization_weights(1.0, 1.0, 2)
    (0.25, 0.25)
    >>> variance_regularization_weights(2.0, float("inf"), 4)
    (0.5, 0.0)
    """
    # 1/(1/l1 + 1/l2) and l1/(1 + l2/l1) are the printed ratios, rearranged so
    # that an infinite lambda yields the limit instead of inf/inf = nan.
    rho1 = 1.0 / (1.0 / lambda1 + 1.0 / lambda2) / n_tasks
    rho2 = lambda1 / (1.0 + lambda2 / lambda1) / n_tasks
    return float(rho1), float(rho2)


def variance_regularized_objective(W, X, y, task_index, rho1, rho2):
    """Objective of Eq. 13.4 at stacked weights ``W`` (spec §4.1).

    ``sum_t [ f_t(w_t) + rho1 ||w_t||^2 ] + rho2 * sum_t ||w_t - mean(w)||^2``,
    with ``f_t`` the summed hinge loss of task ``t``.

    Parameters
    ----------
    W : ndarray of shape (n_tasks, n_features)
        One weight vector per task.
    X : ndarray of shape (n_samples, n_features)
        Samples.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    task_index : ndarray of int of shape (n_samples,)
        Row of ``W`` that scores each sample.
    rho1, rho2 : float
        Weights of Eq. 13.4.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[1.0], [3.0]])
    >>> X = np.ones((2, 1)); y = np.array([1.0, 1.0])
    >>> variance_regularized_objective(W, X, y, np.array([0, 1]), 0.5, 1.0)
    7.0
    >>> variance_regularized_objective(np.ones((2, 1)), X, y, np.array([0, 1]), 0.5, float("inf"))
    1.0
    """
    margins = y * np.einsum("ij,ij->i", X, W[task_index])
    hinge = np.maximum(0.0, 1.0 - margins).sum()
    spread = W - W.mean(axis=0)
    # rho2 = inf (one shared model, alpha = 0) is the constraint "all w_t equal":
    # its penalty is 0 on equal rows (not inf * 0 = nan) and inf otherwise. Equal
    # rows are tested exactly: their float mean can differ from them by rounding.
    if rho2 == np.inf:
        penalty = 0.0 if np.all(W == W[:1]) else np.inf
    else:
        penalty = rho2 * np.sum(spread * spread)
    return float(hinge + rho1 * np.sum(W * W) + penalty)


def consensus_z_step(B, rho1, rho2, eta):
    """Closed-form ADMM z-step as one all-reduce (spec §4.3 (2), corrected).

    Solves ``(2 rho2 D + (rho1 + eta) I) z = b`` for the stacked ``b_t`` (rows
    of ``B``, ``b_t = y_t + eta w_t``), where ``D`` is the centring projector.
    Splitting ``z`` into its task mean and the centred part diagonalises the
    system: the mean solves ``(rho1 + eta) zbar = bbar`` and each centred row
    ``(rho1 + eta + 2 rho2)(z_t - zbar) = b_t - bbar``. So only the mean
    ``bbar`` has to be reduced across tasks. This equals ``E b`` with the
    corrected blocks ``E_M``, ``E_0`` of spec §4.3 (erratum row 26).

    Parameters
    ----------
    B : ndarray of shape (n_tasks, n_features)
        Per-task vectors ``b_t``.
    rho1, rho2 : float
        Weights of Eq. 13.4; ``rho2 = inf`` forces all ``z_t`` equal.
    eta : float
        ADMM penalty (> 0).

    Returns
    -------
    Z : ndarray of shape (n_tasks, n_features)

    Examples
    --------
    Spec §4.3 check: ``T = 5, rho1 = 0.3, rho2 = 0.7, eta = 1.1`` gives
    ``E_M = 0.4286`` and ``E_0 = 0.0714``; column 0 of ``E`` is ``E b`` for
    ``b = e_0``:

    >>> import numpy as np
    >>> B = np.zeros((5, 1)); B[0] = 1.0
    >>> np.round(consensus_z_step(B, 0.3, 0.7, 1.1).ravel(), 4).tolist()
    [0.4286, 0.0714, 0.0714, 0.0714, 0.0714]
    """
    mean_b = B.mean(axis=0)
    return (B - mean_b) / (rho1 + eta + 2.0 * rho2) + mean_b / (rho1 + eta)


def _solve_task_block(block, Q, previous, seeds, settings):
    """Run the w-step for a block of tasks; a Dask task when a client is used.

    ``block`` is the list of ``(X_t, y_t)`` scattered once; ``previous`` is this
    function's own result from the last ADMM iteration (it stays where it was
    computed, so the warm-start duals never travel) or ``None``. Returns
    ``(W_block, duals)``; only ``W_block`` is gathered.
    """
    solver, c, sgd_epochs, radius = settings
    weights, duals = [], []
    for t, (X_t, y_t) in enumerate(block):
        if solver == "dual":
            dual_init = None if previous is None else previous[1][t]
            w_t, dual_t = solve_task_dual(X_t, y_t, Q[t], c, dual_init=dual_init)
            duals.append(dual_t)
        else:
            w_t = solve_task_sgd(
                X_t, y_t, Q[t], c, n_steps=max(2, sgd_epochs * len(y_t)), radius=radius, seed=seeds[t]
            )
        weights.append(w_t)
    return np.asarray(weights), duals


def _weights_of(block_result):
    return block_result[0]


class _SerialBlocks:
    """Runs the per-block w-steps in this process (the default, ``client=None``)."""

    def __init__(self, blocks):
        self._blocks = blocks
        self._previous = [None] * len(blocks)

    def solve(self, Qs, seeds, settings):
        self._previous = [
            _solve_task_block(block, Q, prev, s, settings)
            for block, Q, prev, s in zip(self._blocks, Qs, self._previous, seeds)
        ]
        return [result[0] for result in self._previous]


class _DaskBlocks:
    """Runs the same per-block w-steps as Dask tasks on ``client``.

    The task data is scattered once; each iteration sends the per-task linear
    terms ``q_t`` (d-vectors) and gathers the ``w_t`` (d-vectors). The warm-start
    state is passed as the previous future, so it stays on the workers.
    """

    def __init__(self, client, blocks):
        self._client = client
        # hash=False: content-hashed keys are shared by two fits on the same data, and the
        # asynchronous release of the first fit's keys could drop the second's ("lost dependencies").
        self._data = client.scatter(blocks, hash=False)
        self._previous = [None] * len(blocks)

    def solve(self, Qs, seeds, settings):
        n = len(self._data)
        self._previous = self._client.map(
            _solve_task_block, self._data, Qs, self._previous, seeds, [settings] * n, pure=False
        )
        return self._client.gather(self._client.map(_weights_of, self._previous, pure=False))


#: Residual balancing stops after this many iterations: ADMM converges for any
#: fixed penalty, so a penalty that eventually stays fixed keeps that guarantee.
_BALANCE_ITERATIONS = 50


def _balanced_penalty(eta, primal_residual, dual_residual, mu=10.0, tau=2.0):
    """Boyd et al. (2011) §3.4.1 residual balancing: the next ADMM penalty.

    A large primal residual means the consensus constraint ``w = z`` is
    enforced too weakly (raise ``eta``); a large dual residual means ``z``
    still moves a lot because ``eta`` pins it too hard (lower it).

    Examples
    --------
    >>> _balanced_penalty(1.0, 100.0, 1.0), _balanced_penalty(1.0, 1.0, 100.0), _balanced_penalty(1.0, 2.0, 1.0)
    (2.0, 0.5, 1.0)
    """
    if primal_residual > mu * dual_residual:
        return eta * tau
    if dual_residual > mu * primal_residual:
        return eta / tau
    return eta


def _balanced_blocks(sizes, n_blocks):
    """Split task indices into ``n_blocks`` groups of similar total size.

    Greedy longest-processing-time assignment: the largest task goes to the
    currently lightest block, so one 1000-point task does not share a worker
    with hundreds of others while another worker idles.
    """
    loads = np.zeros(n_blocks)
    groups = [[] for _ in range(n_blocks)]
    for t in np.argsort(-np.asarray(sizes), kind="stable"):
        lightest = int(np.argmin(loads))
        groups[lightest].append(int(t))
        loads[lightest] += sizes[t] + 1  # +1: each task has a fixed cost too
    return [sorted(g) for g in groups if g]


def _task_runner(Xa, signs, task_index, n_tasks, client):
    """Each task's rows grouped into size-balanced blocks, and the runner that solves them: in this
    process, or as Dask tasks (two blocks per worker) on ``client``."""
    rows = [np.flatnonzero(task_index == t) for t in range(n_tasks)]
    sizes = [len(r) for r in rows]
    n_blocks = 1 if client is None else min(n_tasks, 2 * max(1, len(client.scheduler_info()["workers"])))
    groups = _balanced_blocks(sizes, n_blocks)
    blocks = [[(Xa[rows[t]], signs[rows[t]]) for t in g] for g in groups]
    return (_SerialBlocks(blocks) if client is None else _DaskBlocks(client, blocks)), groups


class ADMMMultiTaskClassifier(BinaryMultiTaskMixin, ClassifierMixin, BaseEstimator):
    """Variance-regularised multi-task linear SVM solved by ADMM (spec §4).

    Task ``t`` gets ``w_t = w_0 + v_t`` and the learner minimises Eq. 13.3::

        sum_t f_t(w_0 + v_t) + (lambda1/T) sum_t ||v_t||^2 + lambda2 ||w_0||^2

    with ``f_t`` the summed hinge loss of task ``t``, through its equivalent
    Eq. 13.4 in the ``w_t`` alone. Each ADMM iteration (spec §4.3) solves one
    independent subproblem per task (Eq. 13.8), averages the per-task vectors
    ``b_t = y_t + eta w_t`` once (the z-step), and updates the duals. The
    per-task solves run serially or, with a Dask ``client``, as Dask tasks on
    data scattered once; the result is the same.

    The sharing parameter is ``alpha = lambda2 / (lambda1 + lambda2)``:
    ``lambda1 = inf`` (alpha = 0) trains one model for all tasks,
    ``lambda2 = inf`` (alpha = 1) independent per-task models.

    Parameters
    ----------
    lambda1 : float, default=1.0
        Penalty on the task offsets ``v_t`` (> 0, may be ``inf``).
    lambda2 : float, default=1.0
        Penalty on the shared model ``w_0`` (> 0, may be ``inf``).
    eta : float, default=10.0
        ADMM penalty (``eta`` of spec §4.2); it changes the path, not the
        solution. With ``eta_scaling="tasks"`` the penalty used is ``eta / T``.
    eta_scaling : {"tasks", "none"}, default="tasks"
        ``"tasks"`` divides ``eta`` by the number of tasks ``T``. The weights
        ``rho1, rho2`` of Eq. 13.4 shrink like ``1/T`` at fixed ``lambda1,
        lambda2`` (spec §4.1), so a fixed penalty outweighs the z-step's own
        curvature more and more as ``T`` grows, and the number of outer
        iterations grows with ``T`` (about 3x from T = 20 to T = 100 at
        ``eta = 1``); a penalty on the scale of ``rho`` keeps it flat, which is
        the claim of thesis Table 13.1 (spec §4.5, see
        ``benchmarks/results/admm_mtl.md``). The thesis does not give its
        ``eta`` (erratum row 29). ``"none"`` uses ``eta`` as given.
    adapt_eta : bool, default=False
        Residual balancing (Boyd et al. 2011, §3.4.1): during the first
        ``50`` iterations, double the penalty when the primal residual exceeds
        10 times the dual residual and halve it in the opposite case. It makes
        the start ``eta`` matter less (e.g. on data scaled differently);
        freezing it afterwards keeps the fixed-penalty convergence theory.
        The duals ``y_t`` are unscaled here, so they need no rescaling.
    solver : {"dual", "sgd"}, default="dual"
        Per-task w-step. ``"dual"`` solves it exactly (box-constrained dual by
        coordinate descent, warm-started from the previous iteration); ``"sgd"`` is the
        thesis's Algorithm 4 (spec §4.4), whose noise usually keeps the
        residuals above tight tolerances until ``max_iter``.
    sgd_epochs : int, default=10
        SGD steps per task and iteration, in multiples of the task size
        (spec §4.4 [P]: 5-10 epochs).
    sgd_radius : float, default=None
        Radius of the SGD projection ball. ``None`` uses
        ``sqrt(T M / lambda1) + sqrt(M / lambda2)``, a bound on every optimal
        ``||w_t||`` obtained by comparing Eq. 13.3 at the optimum with its value
        ``M`` at zero (the thesis's radius, erratum row 27, does not cover
        ``lambda1 = inf``).
    fit_intercept : bool, default=True
        Append a constant feature so each task has a bias (spec §4.1 [P]); the
        bias is then regularised and shared like any weight.
    max_iter : int, default=200
        Maximum number of ADMM iterations.
    abs_tol, rel_tol : float, default=1e-4, 1e-3
        Boyd's stopping test (Boyd et al. 2011, §3.3.1, spec §4.3 [P]): stop
        when the primal residual ``||w - z||`` is at most
        ``sqrt(T d) abs_tol + rel_tol max(||w||, ||z||)`` and the dual residual
        ``eta ||z - z_prev||`` at most ``sqrt(T d) abs_tol + rel_tol ||u||``,
        with ``u`` the stacked ADMM duals (norms over all tasks).
    random_state : int, RandomState instance or None, default=None
        Seeds the SGD sampling (one seed per task and iteration, drawn on the
        caller's side, so Dask and serial runs agree).
    verbose : bool, default=False
        Show a tqdm progress bar over ADMM iterations with the residuals.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Labels; ``classes_[1]`` is the positive class.
    tasks_ : ndarray of shape (n_tasks,)
        Task ids seen in ``fit``, sorted.
    coef_ : ndarray of shape (n_tasks, n_features)
        Per-task weights (the z-iterate), rows in the order of ``tasks_``.
    intercept_ : ndarray of shape (n_tasks,)
        Per-task bias (zeros if ``fit_intercept=False``).
    shared_coef_ : ndarray of shape (n_features,)
        Cold-start model ``w_0 = lambda1/(lambda1 + lambda2) mean_t(w_t)``
        (spec §4.1 [D]), used for tasks unseen in ``fit``.
    shared_intercept_ : float
        Bias of the cold-start model.
    n_iter_ : int
        ADMM iterations run.
    eta_ : float
        Penalty in use at the end (after scaling and balancing).
    primal_residuals_, dual_residuals_ : ndarray of shape (n_iter_,)
        Boyd residuals per iteration.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    consensus_z_step : the all-reduce z-step.
    variance_regularized_objective : Eq. 13.4, the function minimised.

    References
    ----------
    M. Donini, PhD thesis (2016), Ch. 13; S. Boyd et al., "Distributed
    optimization and statistical learning via ADMM" (2011), §3.3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); tasks = np.repeat([0, 1, 2], 40)
    >>> y = np.where(X[:, 0] + 0.3 * tasks * X[:, 1] > 0, "up", "flat")
    >>> model = ADMMMultiTaskClassifier(lambda1=1.0, lambda2=1.0).fit(X, y, tasks)
    >>> model.coef_.shape, model.shared_coef_.shape
    ((3, 3), (3,))
    >>> float(np.mean(model.predict(X, tasks) == y)) > 0.9
    True
    >>> model.predict(X[:2], tasks=[7, 7]).tolist()  # unseen task: cold start
    ['up', 'up']
    """

    _parameter_constraints = {
        # (0, inf]: an infinite lambda is the one-model or independent-models limit.
        "lambda1": [Interval(Real, 0, np.inf, closed="right")],
        "lambda2": [Interval(Real, 0, np.inf, closed="right")],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "eta_scaling": [StrOptions({"tasks", "none"})],
        "adapt_eta": ["boolean"],
        "solver": [StrOptions({"dual", "sgd"})],
        "sgd_epochs": [Interval(Integral, 1, None, closed="left")],
        "sgd_radius": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "abs_tol": [Interval(Real, 0, None, closed="left")],
        "rel_tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        lambda1=1.0,
        lambda2=1.0,
        eta=10.0,
        eta_scaling="tasks",
        adapt_eta=False,
        solver="dual",
        sgd_epochs=10,
        sgd_radius=None,
        fit_intercept=True,
        max_iter=200,
        abs_tol=1e-4,
        rel_tol=1e-3,
        random_state=None,
        verbose=False,
    ):
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.eta = eta
        self.eta_scaling = eta_scaling
        self.adapt_eta = adapt_eta
        self.solver = solver
        self.sgd_epochs = sgd_epochs
        self.sgd_radius = sgd_radius
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol
        self.random_state = random_state
        self.verbose = verbose

    def _augment(self, X):
        return np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, *, client=None, callback=None):
        """Fit one linear model per task by ADMM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Binary labels (exactly two distinct values).
        tasks : array-like of shape (n_samples,), default=None
            Task id (e.g. user) of each row; ``None`` puts all rows in one task.
        client : dask.distributed.Client, default=None
            Run the per-task solves as Dask tasks on this client; ``None`` runs
            them in this process.
        callback : callable, default=None
            Called after every ADMM iteration as ``callback(k, Z)`` with the
            1-based iteration ``k`` and the stacked z-iterate ``Z`` of shape
            ``(n_tasks, n_features [+ 1 bias column])``, rows in task order; a
            true return value stops the fit there (no warning). Benchmarks
            use it to count iterations to an objective gap.

        Returns
        -------
        self : ADMMMultiTaskClassifier
            Fitted estimator.
        """
        if self.lambda1 == np.inf and self.lambda2 == np.inf:
            raise ValueError(
                f"{type(self).__name__}: lambda1 and lambda2 are both inf, which leaves no model "
                "(Eq. 13.3 forces w_0 = v_t = 0). Make at least one of them finite."
            )
        Xa, signs, task_index = self._training_data(X, y, tasks)
        n_tasks = len(self.tasks_)
        runner, groups = _task_runner(Xa, signs, task_index, n_tasks, client)
        Z, eta, primal, dual, converged = self._iterate(runner, groups, n_tasks, Xa.shape[1], Xa.shape[0], callback)
        if not converged:
            warnings.warn(
                f"{type(self).__name__}: ADMM stopped at max_iter={self.max_iter} with primal residual "
                f"{primal[-1]:.3g} and dual residual {dual[-1]:.3g} above tolerance. Increase max_iter, "
                "loosen abs_tol/rel_tol, or use solver='dual' (SGD noise can keep residuals up).",
                ConvergenceWarning,
            )
        self.n_iter_ = len(primal)
        self.eta_ = float(eta)
        self.primal_residuals_ = np.asarray(primal)
        self.dual_residuals_ = np.asarray(dual)
        self._store_models(Z)
        return self

    def _training_data(self, X, y, tasks):
        """Validated ``X`` with the bias column, labels as +-1, and each row's task index; sets
        ``classes_`` and ``tasks_``."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        tasks = check_tasks(tasks, X.shape[0], f"{type(self).__name__}.fit")
        self.classes_ = binary_classes(y, type(self).__name__)
        signs = np.where(y == self.classes_[1], 1.0, -1.0)
        if tasks is None:
            tasks = np.zeros(X.shape[0], dtype=int)
        self.tasks_, task_index = np.unique(tasks, return_inverse=True)
        return self._augment(X), signs, task_index

    def _iterate(self, runner, groups, n_tasks, n_dims, n_samples, callback):
        """The ADMM iterations of spec §4.3 until Boyd's residual test, ``max_iter`` or ``callback``.

        Returns ``(Z, eta, primal, dual, converged)``: the last z-iterate, the final penalty and the
        primal and dual residual of every iteration.
        """
        rho1, rho2 = variance_regularization_weights(self.lambda1, self.lambda2, n_tasks)
        radius = self.sgd_radius
        if radius is None:
            radius = np.sqrt(n_tasks * n_samples / self.lambda1) + np.sqrt(n_samples / self.lambda2)
        rng = check_random_state(self.random_state)

        eta = self.eta / n_tasks if self.eta_scaling == "tasks" else self.eta
        W = np.zeros((n_tasks, n_dims))
        Z = np.zeros((n_tasks, n_dims))
        U = np.zeros((n_tasks, n_dims))  # ADMM duals y_t (spec §4.2), zeros as in [P]
        scale = np.sqrt(n_tasks * n_dims)
        primal, dual = [], []
        converged = False
        with tqdm(total=self.max_iter, disable=not self.verbose, desc="ADMM", unit="it") as bar:
            for k in range(1, self.max_iter + 1):
                settings = (self.solver, rho1 + eta, self.sgd_epochs, float(radius))
                seeds = rng.randint(np.iinfo(np.int32).max, size=n_tasks)
                Q = U - eta * Z
                W_blocks = runner.solve([Q[g] for g in groups], [seeds[g] for g in groups], settings)
                for g, W_g in zip(groups, W_blocks):
                    W[g] = W_g
                Z_prev = Z
                Z = consensus_z_step(U + eta * W, rho1, rho2, eta)
                U = U + eta * (W - Z)
                primal.append(np.linalg.norm(W - Z))
                dual.append(eta * np.linalg.norm(Z - Z_prev))
                bar.update()
                bar.set_postfix(primal=f"{primal[-1]:.2e}", dual=f"{dual[-1]:.2e}")
                eps_primal = scale * self.abs_tol + self.rel_tol * max(np.linalg.norm(W), np.linalg.norm(Z))
                eps_dual = scale * self.abs_tol + self.rel_tol * np.linalg.norm(U)
                if (primal[-1] <= eps_primal and dual[-1] <= eps_dual) or (callback is not None and callback(k, Z)):
                    converged = True
                    break
                if self.adapt_eta and k <= _BALANCE_ITERATIONS:
                    eta = _balanced_penalty(eta, primal[-1], dual[-1])
        return Z, eta, primal, dual, converged

    def _store_models(self, Z):
        """Per-task ``coef_``/``intercept_`` from the z-iterate, and the shared model ``w_0``."""
        n_tasks = len(self.tasks_)
        # Eliminating w_0 from Eq. 13.3 gives w_0 = lambda1/(lambda1+lambda2) * mean(w_t) (spec §4.1 [D]).
        shared = Z.mean(axis=0) / (1.0 + self.lambda2 / self.lambda1)
        n_features = self.n_features_in_
        self.coef_ = Z[:, :n_features].copy()
        self.intercept_ = Z[:, n_features].copy() if self.fit_intercept else np.zeros(n_tasks)
        self.shared_coef_ = shared[:n_features].copy()
        self.shared_intercept_ = float(shared[n_features]) if self.fit_intercept else 0.0

    def decision_function(self, X, tasks=None):
        """Signed distance to each row's task hyperplane.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.
        tasks : array-like of shape (n_samples,), default=None
            Task id of each row. Ids not seen in ``fit`` (and ``None``) use the
            cold-start model ``w_0``.

        Returns
        -------
        ndarray of shape (n_samples,)
            Positive values predict ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        tasks = check_tasks(tasks, X.shape[0], f"{type(self).__name__}.decision_function")
        coef = np.vstack([self.coef_, self.shared_coef_])
        intercept = np.append(self.intercept_, self.shared_intercept_)
        row = np.full(X.shape[0], len(self.tasks_))  # last row of coef: cold start
        if tasks is not None:
            position = np.searchsorted(self.tasks_, tasks)
            position = np.minimum(position, len(self.tasks_) - 1)
            known = self.tasks_[position] == tasks
            row[known] = position[known]
        return np.einsum("ij,ij->i", X, coef[row]) + intercept[row]
