"""scikit-learn models as they ship through skl2onnx: each is trained on fixed-seed synthetic
data, converted (classifiers without ZipMap), loaded by max_c and run against ONNX Runtime
on the same .onnx file at two batch sizes: labels exactly, probabilities and values to 1e-5.
What max_c cannot express (ZipMap's sequence of maps, string class labels) must fail at load
with UNIMPLEMENTED naming the node.

scikit-learn and skl2onnx are pinned in scripts/requirements/test.in; a missing package fails
the suite, it does not skip it.
"""
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from skl2onnx import to_onnx
from sklearn.compose import ColumnTransformer  # noqa: F401  (imported to fail early when absent)
from sklearn.datasets import make_classification, make_regression
from sklearn.decomposition import PCA
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC

import max_c
from max_c.engine import InferenceSession

BATCHES = (1, 37)
RTOL, ATOL = 1e-5, 1e-6


def _classification(classes, seed=0):
    x, y = make_classification(n_samples=300, n_features=8, n_informative=5, n_classes=classes,
                               random_state=seed)
    return x.astype(np.float32), y


def _regression(seed=2):
    x, y = make_regression(n_samples=300, n_features=8, noise=0.5, random_state=seed)
    return x.astype(np.float32), y


def _categories(seed=3):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, size=(300, 3)).astype(np.int64)
    return x, ((x[:, 0] + 2 * x[:, 1] - x[:, 2]) > 4).astype(np.int64)


def _with_missing(classes):
    x, y = _classification(classes, seed=4)
    x[::7, 2] = np.nan
    x[3::11, 5] = np.nan
    return x, y


# name -> (estimator factory, data factory). Every model's converted graph uses ai.onnx.ml
# operators, except MLPClassifier and the k-nearest-neighbours pipeline (standard ONNX plus
# ArrayFeatureExtractor).
MODELS = {
    "logistic_regression_binary": (lambda: LogisticRegression(), lambda: _classification(2)),
    "logistic_regression_multiclass": (lambda: LogisticRegression(), lambda: _classification(3)),
    "random_forest_classifier": (lambda: RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0),
                                 lambda: _classification(3)),
    "random_forest_classifier_binary": (lambda: RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0),
                                        lambda: _classification(2)),
    "gradient_boosting_classifier": (lambda: GradientBoostingClassifier(n_estimators=10, random_state=0),
                                     lambda: _classification(3)),
    "gradient_boosting_classifier_binary": (lambda: GradientBoostingClassifier(n_estimators=10, random_state=0),
                                            lambda: _classification(2)),
    "scaler_svc_probability": (lambda: make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)),
                               lambda: _classification(3)),
    "svc_binary_probability": (lambda: SVC(probability=True, random_state=0), lambda: _classification(2)),
    "svc_poly": (lambda: SVC(kernel="poly", degree=3), lambda: _classification(3)),
    "svc_sigmoid_binary": (lambda: make_pipeline(StandardScaler(), SVC(kernel="sigmoid")), lambda: _classification(2)),
    "svc_linear": (lambda: SVC(kernel="linear"), lambda: _classification(3)),
    "svr": (lambda: SVR(), _regression),
    "pca_kneighbors": (lambda: make_pipeline(PCA(n_components=4), KNeighborsClassifier()), lambda: _classification(3)),
    "mlp_classifier": (lambda: MLPClassifier(hidden_layer_sizes=(16,), max_iter=300, random_state=0),
                       lambda: _classification(3)),
    "random_forest_regressor": (lambda: RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0),
                                _regression),
    "ridge": (lambda: Ridge(), _regression),
    "linear_svc": (lambda: LinearSVC(), lambda: _classification(3)),
    "linear_svc_binary": (lambda: LinearSVC(), lambda: _classification(2)),
    "normalizer_logistic": (lambda: make_pipeline(Normalizer(), LogisticRegression()), lambda: _classification(3)),
    "one_hot_logistic": (lambda: make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression()),
                         _categories),
    "imputer_logistic": (lambda: make_pipeline(SimpleImputer(), LogisticRegression()), lambda: _with_missing(3)),
}


def _is_classifier(estimator):
    return hasattr(estimator, "classes_")


def _convert(estimator, x, path, zipmap=False):
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    # skl2onnx ends a classifier's graph with a ZipMap unless told not to (LinearSVC has no
    # probabilities, so neither ZipMap nor the option).
    wants = _is_classifier(final) and not isinstance(final, LinearSVC)
    options = {id(final): {"zipmap": zipmap}} if wants else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onx = to_onnx(estimator, x[:1], options=options)
    onnx.save(onx, str(path))
    return path


def _fit(estimator, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the deliberately short fits
        return estimator.fit(x, y)


def _inputs(x, batch, seed):
    """Rows the model was not trained on: training rows resampled and jittered (integer
    categories resampled only, one unseen category mixed in for the encoder)."""
    rng = np.random.default_rng(seed)
    rows = x[rng.integers(0, len(x), size=batch)].copy()
    if rows.dtype.kind == "i":
        rows[0, 0] = 9  # a category the encoder never saw (handle_unknown='ignore': all zeros)
        return rows
    jitter = rng.standard_normal(rows.shape).astype(np.float32) * 0.3
    return np.where(np.isnan(rows), rows, rows + jitter).astype(np.float32)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_onnxruntime(name, tmp_path):
    make_estimator, make_data = MODELS[name]
    x, y = make_data()
    estimator = _fit(make_estimator(), x, y)
    path = _convert(estimator, x, tmp_path / f"{name}.onnx")
    model = InferenceSession(num_threads=1).load(path)
    reference = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    input_name = reference.get_inputs()[0].name
    for batch in BATCHES:
        rows = _inputs(x, batch, seed=batch)
        expected = reference.run(None, {input_name: rows})
        got = [t.to_numpy() for t in model.execute(rows)]
        assert len(got) == len(expected)
        for k, (e, g) in enumerate(zip(expected, got)):
            assert g.shape == e.shape, f"{name} output {k} at batch {batch}"
            if e.dtype.kind in "iu":
                np.testing.assert_array_equal(g, e, err_msg=f"{name} labels at batch {batch}")
            else:
                np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=f"{name} output {k} at batch {batch}")
    if _is_classifier(estimator):  # the converted graph's labels are the estimator's own
        rows = _inputs(x, BATCHES[-1], seed=7)
        labels = model.execute(rows)[0].to_numpy()
        assert (labels == estimator.predict(rows)).mean() > 0.9


def test_zipmap_fails_at_load_naming_it(tmp_path):
    x, y = _classification(3)
    estimator = _fit(LogisticRegression(), x, y)
    path = _convert(estimator, x, tmp_path / "zipmap.onnx", zipmap=True)
    with pytest.raises(max_c.MaxError, match=r"\(ZipMap\).*sequence of maps") as err:
        InferenceSession().load(path)
    assert err.value.code_name == "UNIMPLEMENTED"


def test_string_labels_fail_at_load_naming_the_node(tmp_path):
    x, y = _classification(3)
    estimator = _fit(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0), x,
                     np.array(["ant", "bee", "cat"])[y])
    path = _convert(estimator, x, tmp_path / "strings.onnx")
    with pytest.raises(max_c.MaxError, match=r"\(TreeEnsembleClassifier\).*string class labels") as err:
        InferenceSession().load(path)
    assert err.value.code_name == "UNIMPLEMENTED"
