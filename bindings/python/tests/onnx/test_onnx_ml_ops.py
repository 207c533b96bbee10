"""ai.onnx.ml operators in the forms converters other than the sklearn tests' write them:
each single-node model runs in max_c and in ONNX Runtime on the same inputs, which must agree
(labels exactly, values to 1e-5); the branches onnxruntime takes for one score, two classes,
each post_transform, kernel and tree test are covered here."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import max_c
from max_c.engine import InferenceSession

ML = "ai.onnx.ml"


def _model(path, op, attrs, x_type, outputs, features=4, ml_opset=3):
    node = helper.make_node(op, ["X"], [name for name, _ in outputs], domain=ML, **attrs)
    graph = helper.make_graph(
        [node], op, [helper.make_tensor_value_info("X", x_type, ["N", features])],
        [helper.make_tensor_value_info(name, t, None) for name, t in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)])
    onnx.save(model, str(path))
    return path


def _agree(path, x):
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"X": x})
    got = [t.to_numpy() for t in InferenceSession(num_threads=1).load(path).execute(x)]
    for e, g in zip(expected, got):
        assert g.shape == e.shape
        if e.dtype.kind in "iu":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def _x(rows=9, features=4, seed=0):
    return (np.random.default_rng(seed).standard_normal((rows, features)) * 2).astype(np.float32)


CLASSIFIER_OUT = [("Y", TensorProto.INT64), ("Z", TensorProto.FLOAT)]
FLOAT_OUT = [("Y", TensorProto.FLOAT)]


@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_linear_classifier_transforms(tmp_path, transform):
    coef = np.random.default_rng(1).standard_normal(12).round(1)  # some products are exactly 0
    attrs = dict(coefficients=coef.tolist(), intercepts=[0.1, 0.0, -0.2], classlabels_ints=[5, 6, 7],
                 post_transform=transform)
    x = _x()
    if transform == "PROBIT":  # its input must be a probability
        x = np.abs(x) / 20
    x[0] = 0  # every score 0 + intercept: SOFTMAX_ZERO's zero column
    _agree(_model(tmp_path / "m.onnx", "LinearClassifier", attrs, TensorProto.FLOAT, CLASSIFIER_OUT), x)


@pytest.mark.parametrize("labels", [[3, 9], []])
@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_linear_classifier_one_score(tmp_path, labels, transform):
    attrs = dict(coefficients=[0.5, -1, 0.25, 2], intercepts=[0.3], post_transform=transform)
    if labels:
        attrs["classlabels_ints"] = labels
    _agree(_model(tmp_path / "m.onnx", "LinearClassifier", attrs, TensorProto.FLOAT, CLASSIFIER_OUT), _x())


@pytest.mark.parametrize("targets,transform", [(1, "NONE"), (1, "LOGISTIC"), (2, "SOFTMAX"), (2, "LOGISTIC")])
def test_linear_regressor(tmp_path, targets, transform):
    attrs = dict(coefficients=np.linspace(-1, 1, 4 * targets).tolist(), intercepts=[0.5] * targets,
                 targets=targets, post_transform=transform)
    _agree(_model(tmp_path / "m.onnx", "LinearRegressor", attrs, TensorProto.FLOAT, FLOAT_OUT), _x())


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_scaler_and_normalizer(tmp_path, norm):
    x = _x()
    x[1] = 0  # a zero divisor leaves the row as it is
    _agree(_model(tmp_path / "s.onnx", "Scaler", dict(offset=[0.5, 0.0, -1.0, 2.0], scale=[1.0, 2.0, 3.0, 4.0]), TensorProto.FLOAT, FLOAT_OUT), x)
    _agree(_model(tmp_path / "n.onnx", "Normalizer", dict(norm=norm), TensorProto.FLOAT, FLOAT_OUT), x)


def _two_trees(prefix, ids, weights, extra_modes=False):
    """Two depth-2 trees over features 0..3; tree 1's nodes listed out of order (its root
    first, as onnxruntime takes a tree's first node for its root)."""
    modes = ["BRANCH_LEQ", "BRANCH_LT" if extra_modes else "BRANCH_LEQ", "LEAF", "LEAF", "LEAF"]
    modes2 = ["BRANCH_NEQ" if extra_modes else "BRANCH_LEQ", "LEAF", "LEAF", "LEAF",
              "BRANCH_GTE" if extra_modes else "BRANCH_LEQ"]
    attrs = dict(
        nodes_treeids=[0] * 5 + [1] * 5,
        nodes_nodeids=[0, 1, 2, 3, 4, 0, 2, 3, 4, 1],
        nodes_featureids=[0, 1, 0, 0, 0, 2, 0, 0, 0, 3],
        nodes_values=[0.1, -0.5, 0, 0, 0, 0.0, 0, 0, 0, 0.7],
        nodes_modes=modes + modes2,
        nodes_truenodeids=[1, 3, 0, 0, 0, 1, 0, 0, 0, 2],
        nodes_falsenodeids=[2, 4, 0, 0, 0, 4, 0, 0, 0, 3],
        nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 1, 0, 0, 0, 0],
    )
    leaves = [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)]
    t, n, i, w = [], [], [], []
    for (tree, node), (ids_here, weights_here) in zip(leaves, zip(ids, weights)):
        for k, v in zip(ids_here, weights_here):
            t.append(tree), n.append(node), i.append(k), w.append(v)
    attrs.update({prefix + "treeids": t, prefix + "nodeids": n, prefix + "ids": i, prefix + "weights": w})
    return attrs


def _tree_x():
    x = _x(rows=12)
    x[0, 0] = np.nan  # missing: tree 0's root goes true
    x[1, 2] = 0.0  # tree 1's root (NEQ 0) is false
    return x


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("transform", ["NONE", "SOFTMAX"])
def test_tree_regressor(tmp_path, aggregate, transform):
    ids = [[0, 1]] * 6
    weights = [[1.5, -2], [0.25, 3], [-1, 1], [2, 0.5], [0.75, -0.25], [-3, 2]]
    attrs = _two_trees("target_", ids, weights, extra_modes=True)
    attrs.update(n_targets=2, aggregate_function=aggregate, post_transform=transform, base_values=[0.5, -0.5])
    _agree(_model(tmp_path / "m.onnx", "TreeEnsembleRegressor", attrs, TensorProto.FLOAT, FLOAT_OUT), _tree_x())


@pytest.mark.parametrize("case", ["multiclass", "both_classes", "one_class_positive", "one_class_mixed"])
@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_tree_classifier(tmp_path, case, transform):
    if case == "multiclass":
        ids, labels = [[0, 1, 2]] * 6, [4, 8, 15]
        weights = [[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25], [0, 1, 0]]
        base = [0.1, 0.0, -0.1]
    elif case == "both_classes":  # onnxruntime labels these 1 or 0, whatever classlabels says
        ids, labels = [[0, 1]] * 6, [3, 7]
        weights = [[0.2, 0.8], [0.6, 0.4], [0.9, 0.1], [0.3, 0.7], [0.5, 0.5], [1, 0]]
        base = []
    else:
        ids, labels = [[0]] * 6, [3, 7]
        weights = [[0.2], [0.6], [0.9], [0.3], [0.5], [0.1]]
        if case == "one_class_mixed":
            weights = [[-w[0] + 0.4] for w in weights]
        base = [0.05]
    attrs = _two_trees("class_", ids, weights)
    attrs.update(classlabels_int64s=labels, post_transform=transform)
    if base:
        attrs["base_values"] = base
    _agree(_model(tmp_path / "m.onnx", "TreeEnsembleClassifier", attrs, TensorProto.FLOAT, CLASSIFIER_OUT), _tree_x())


@pytest.mark.parametrize("kernel", ["LINEAR", "POLY", "RBF", "SIGMOID"])
def test_svm_regressor(tmp_path, kernel):
    rng = np.random.default_rng(5)
    attrs = dict(kernel_type=kernel, kernel_params=[0.3, 0.1, 2.0], n_supports=5,
                 support_vectors=rng.standard_normal(20).tolist(), coefficients=rng.standard_normal(5).tolist(),
                 rho=[0.25])
    _agree(_model(tmp_path / "m.onnx", "SVMRegressor", attrs, TensorProto.FLOAT, FLOAT_OUT), _x())
    attrs.update(one_class=1)
    _agree(_model(tmp_path / "o.onnx", "SVMRegressor", attrs, TensorProto.FLOAT, FLOAT_OUT), _x())


@pytest.mark.parametrize("classes", [2, 3])
def test_svm_classifier_liblinear(tmp_path, classes):
    rng = np.random.default_rng(6)
    attrs = dict(coefficients=rng.standard_normal(4 * classes).tolist(), rho=[0.1],
                 classlabels_ints=list(range(10, 10 + classes)), kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0])
    _agree(_model(tmp_path / "m.onnx", "SVMClassifier", attrs, TensorProto.FLOAT, CLASSIFIER_OUT), _x())


def _x_with(values, dtype):
    return np.array(values, dtype=dtype).reshape(-1, 4)


def test_imputer(tmp_path):
    x = _x()
    x[::3, 1] = np.nan
    attrs = dict(imputed_value_floats=[1.0, 2.0, 3.0, 4.0], replaced_value_float=float("nan"))
    _agree(_model(tmp_path / "f.onnx", "Imputer", attrs, TensorProto.FLOAT, FLOAT_OUT), x)
    attrs = dict(imputed_value_int64s=[7], replaced_value_int64=-1)
    xi = _x_with([1, -1, 3, -1, -1, 0, 2, 5], np.int64)
    _agree(_model(tmp_path / "i.onnx", "Imputer", attrs, TensorProto.INT64, [("Y", TensorProto.INT64)]), xi)


def test_one_hot_encoder(tmp_path):
    attrs = dict(cats_int64s=[4, 1, 9, 2], zeros=1)
    xi = _x_with([1, 4, 9, 3, 2, 2, 0, 4], np.int64)
    node = helper.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, **attrs)
    graph = helper.make_graph([node], "ohe", [helper.make_tensor_value_info("X", TensorProto.INT64, ["N", 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)]), str(path))
    _agree(path, xi)


def test_label_encoder(tmp_path):
    attrs = dict(keys_int64s=[3, 1, 3, 8], values_int64s=[10, 11, 12, 13], default_int64=-5)
    xi = _x_with([3, 1, 8, 0, 3, 2, 1, 8], np.int64)
    _agree(_model(tmp_path / "i.onnx", "LabelEncoder", attrs, TensorProto.INT64, [("Y", TensorProto.INT64)]), xi)
    attrs = dict(keys_floats=[0.5, 2.0, -1.0], values_floats=[1.5, 2.5, 3.5], default_float=7.0)
    xf = _x_with([0.5, np.nan, -1.0, 2.0, 0.5, 0.25, np.nan, -1.0], np.float32)
    _agree(_model(tmp_path / "f.onnx", "LabelEncoder", attrs, TensorProto.FLOAT, [("Y", TensorProto.FLOAT)]), xf)


def test_label_encoder_nan_key_is_refused(tmp_path):
    """Whether a NaN key matches NaN depends on the ai.onnx.ml opset and on the peer."""
    attrs = dict(keys_floats=[0.5, float("nan"), -1.0], values_int64s=[1, 2, 3])
    path = _model(tmp_path / "f.onnx", "LabelEncoder", attrs, TensorProto.FLOAT, [("Y", TensorProto.INT64)])
    with pytest.raises(max_c.MaxError, match="NaN key") as err:
        InferenceSession().load(path)
    assert err.value.code_name == "UNIMPLEMENTED"


def test_string_operands_are_refused_naming_the_node(tmp_path):
    attrs = dict(keys_strings=["a", "b"], values_int64s=[1, 2])
    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, name="encode_words", **attrs)
    graph = helper.make_graph([node], "le", [helper.make_tensor_value_info("X", TensorProto.INT64, ["N"])],
                              [helper.make_tensor_value_info("Y", TensorProto.INT64, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)]), str(path))
    with pytest.raises(max_c.MaxError, match="encode_words.*keys_strings") as err:
        InferenceSession().load(path)
    assert err.value.code_name == "UNIMPLEMENTED"
