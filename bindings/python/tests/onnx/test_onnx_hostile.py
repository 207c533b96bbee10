"""Hostile ONNX models: valid protobuf, small files, whose ranks, attributes, initializer
sizes or constant inputs are wrong or enormous (the shapes a structure-aware fuzzer finds).
Each must be refused at import with a status whose code says why (INVALID_ARGUMENT for what
ONNX forbids, RESOURCE_EXHAUSTED for sizes past what the importer builds) and whose message
names the node (or the initializer) and the bad value; nothing may crash, hang, or allocate
what the file asks for. After each refusal the same session still loads and runs a model."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from max_c import _errors
from max_c.engine import InferenceSession

F32, I64 = TensorProto.FLOAT, TensorProto.INT64
HUGE = 1 << 40
INVALID, EXHAUSTED = "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def node(op, inputs, outputs, **attrs):
    """The node under test: always named "hostile", so every message can be checked for it."""
    return helper.make_node(op, inputs, outputs, name="hostile", **attrs)


def model(nodes, inputs, outputs, initializers=(), opset=17, domains=()):
    graph = helper.make_graph(nodes, "hostile_graph", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    return helper.make_model(graph, opset_imports=opsets)


@pytest.fixture(scope="module")
def session():
    return InferenceSession(num_threads=1)


def still_usable(session, tmp_path):
    """The session that refused a model still imports, compiles and runs another."""
    m = model([helper.make_node("Add", ["a", "b"], ["y"])], [vi("a", F32, [2]), vi("b", F32, [2])],
              [vi("y", F32, [2])])
    path = tmp_path / "ok.onnx"
    onnx.save(m, str(path))
    (y,) = session.load(str(path)).execute(np.float32([1, 2]), np.float32([3, 4]))
    np.testing.assert_array_equal(y.to_numpy(), np.float32([4, 6]))


def refused(session, tmp_path, m, code, *words):
    path = tmp_path / "hostile.onnx"
    onnx.save(m, str(path))
    with pytest.raises(_errors.MaxError) as e:
        session.load(str(path))
    assert e.value.code_name == code, str(e.value)
    for w in words:
        assert w in e.value.message, f"{w!r} not in {e.value.message!r}"
    still_usable(session, tmp_path)


# ---- Conv, ConvTranspose, pooling: ranks and windows ----

def conv(x_shape, w_shape, **attrs):
    return model([node("Conv", ["x", "w"], ["y"], **attrs)], [vi("x", F32, x_shape)], [vi("y", F32, None)],
                 [init("w", np.zeros(w_shape, np.float32))])


def test_conv_filter_of_lower_rank_than_the_input(session, tmp_path):
    """x rank 5 with W rank 4: the filter's dims were read past its end."""
    refused(session, tmp_path, conv([1, 1, 4, 4, 4], [1, 1, 3, 3]), INVALID, "'hostile' (Conv)", "W has rank 4",
            "X has rank 5")


def test_conv3d_group_zero(session, tmp_path):
    refused(session, tmp_path, conv([1, 2, 4, 4, 4], [2, 2, 3, 3, 3], group=0), INVALID, "'hostile'",
            "group must be positive, got 0")


def test_conv3d_stride_zero(session, tmp_path):
    refused(session, tmp_path, conv([1, 1, 4, 4, 4], [1, 1, 3, 3, 3], strides=[0, 1, 1]), INVALID, "'hostile'",
            "'strides' entry 0 is 0")


def test_conv3d_filter_depth_past_the_unrolled_taps(session, tmp_path):
    """Each depth tap of a 3-D convolution is one slice: a filter deep by the million is refused
    before a million ops are built."""
    m = model([node("Conv", ["x", "w"], ["y"])], [vi("x", F32, [1, 1, 1 << 21, 1, 1]), vi("w", F32, [1, 1, 1 << 20, 1, 1])],
              [vi("y", F32, None)])
    refused(session, tmp_path, m, EXHAUSTED, "'hostile'", "filter depth")


def test_pool_kernel_shorter_than_the_spatial_rank(session, tmp_path):
    """A 1-entry kernel_shape on a 3-D pool: the missing entries were read past the list."""
    m = model([node("MaxPool", ["x"], ["y"], kernel_shape=[2])], [vi("x", F32, [1, 1, 4, 4, 4])],
              [vi("y", F32, None)])
    refused(session, tmp_path, m, INVALID, "'hostile' (MaxPool)", "the kernel has 1 dims", "3 spatial dims")


def test_deform_conv_stride_zero(session, tmp_path):
    m = model([node("DeformConv", ["x", "w", "off"], ["y"], strides=[0, 1])],
              [vi("x", F32, [1, 1, 4, 4]), vi("w", F32, [1, 1, 2, 2]), vi("off", F32, [1, 8, 3, 3])],
              [vi("y", F32, None)], opset=19)
    refused(session, tmp_path, m, INVALID, "'hostile' (DeformConv)", "'strides' entry 0 is 0")


def test_causal_conv_with_a_filter_count_other_than_the_channels(session, tmp_path):
    """A depthwise filter per channel: a trillion filters for 4 channels reached oneDNN,
    which divided by zero."""
    m = model([node("CausalConvWithState", ["x", "w"], ["y", "state"])],
              [vi("x", F32, [2, 4, 8]), vi("w", F32, [HUGE, 1, 4])], [vi("y", F32, None), vi("state", F32, None)],
              opset=27)
    refused(session, tmp_path, m, INVALID, "'hostile' (CausalConvWithState)", "1099511627776 filters", "4 channels")


# ---- tables the importer fills: identities, ranges, index lists ----

def test_eye_like_whose_rows_times_cols_wrap(session, tmp_path):
    """2^32 x 2^32 elements wrapped to 0, and the identity's ones were written into an empty
    table: such an input now passes no tensor's element limit (base/checked_math.h)."""
    m = model([node("EyeLike", ["x"], ["y"])], [vi("x", F32, [1 << 32, 1 << 32])], [vi("y", F32, None)])
    refused(session, tmp_path, m, INVALID, "input 'x'", "multiply to more than")


def test_eye_like_whose_identity_table_is_too_large(session, tmp_path):
    m = model([node("EyeLike", ["x"], ["y"])], [vi("x", F32, [1 << 28, 1 << 28])], [vi("y", F32, None)])
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (EyeLike)", "the identity")


def test_eye_like_of_ten_billion_elements(session, tmp_path):
    m = model([node("EyeLike", ["x"], ["y"])], [vi("x", F32, [100000, 100000])], [vi("y", F32, None)])
    refused(session, tmp_path, m, EXHAUSTED, "'hostile'", "10000000000 elements")


def test_einsum_diagonal_whose_mask_wraps(session, tmp_path):
    m = model([node("Einsum", ["x"], ["y"], equation="ii->i")], [vi("x", F32, [1 << 32, 1 << 32])],
              [vi("y", F32, None)], opset=12)
    refused(session, tmp_path, m, INVALID, "input 'x'", "multiply to more than")


def test_einsum_diagonal_mask_too_large(session, tmp_path):
    m = model([node("Einsum", ["x"], ["y"], equation="ii->i")], [vi("x", F32, [1 << 28, 1 << 28])],
              [vi("y", F32, None)], opset=12)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (Einsum)", "the diagonal mask")


def one_hot(depth):
    return model([node("OneHot", ["i", "depth", "values"], ["y"])], [vi("i", I64, [2])], [vi("y", F32, None)],
                 [init("depth", depth), init("values", np.float32([0, 1]))], opset=11)


def test_one_hot_depth_of_a_trillion(session, tmp_path):
    refused(session, tmp_path, one_hot(np.int64(1 << 40)), EXHAUSTED, "'hostile' (OneHot)", "depth 1.09951e+12")


def test_one_hot_depth_not_a_number(session, tmp_path):
    refused(session, tmp_path, one_hot(np.float32(np.nan)), INVALID, "'hostile'", "depth must be at least 1")


def pad(mode, pads):
    return model([node("Pad", ["x", "pads"], ["y"], mode=mode)], [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                 [init("pads", np.int64(pads))], opset=13)


def test_pad_edge_by_a_trillion(session, tmp_path):
    """edge pads build an index list per axis: a trillion entries were allocated."""
    refused(session, tmp_path, pad("edge", [0, HUGE, 0, 0]), EXHAUSTED, "'hostile' (Pad)", "index list")


def test_hardmax_over_a_trillion_positions(session, tmp_path):
    m = model([node("Hardmax", ["x"], ["y"])], [vi("x", F32, [1, HUGE])], [vi("y", F32, None)], opset=13)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (Hardmax)", "position range")


def test_gather_elements_with_a_trillion_indices(session, tmp_path):
    m = model([node("GatherElements", ["x", "i"], ["y"], axis=1)], [vi("x", F32, [2, 2]), vi("i", I64, [HUGE, 2])],
              [vi("y", F32, None)], opset=13)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (GatherElements)", "index range")


def test_max_pool_indices_window_table_that_wraps(session, tmp_path):
    m = model([node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[1 << 30, 1 << 30], pads=[0, 0, 1 << 30, 1 << 30])],
              [vi("x", F32, [1, 1, 1 << 20, 1 << 20])], [vi("y", F32, None), vi("idx", I64, None)])
    refused(session, tmp_path, m, INVALID, "'hostile' (MaxPool)", "multiply to more than")


def test_affine_grid_whose_size_wraps(session, tmp_path):
    m = model([node("AffineGrid", ["theta", "size"], ["y"])], [vi("theta", F32, [1, 2, 3])], [vi("y", F32, None)],
              [init("size", np.int64([1, 1, 1 << 32, 1 << 32]))], opset=20)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (AffineGrid)", "base grid")


def test_col2im_with_a_huge_block(session, tmp_path):
    """A 2 x 2 image padded to fit a 2^20 x 2^20 block: every (block element, block) pair was
    visited while the index table was built."""
    m = model([node("Col2Im", ["x", "image", "block"], ["y"], pads=[1 << 20] * 4)], [vi("x", F32, [1, 4, 1])],
              [vi("y", F32, None)], [init("image", np.int64([2, 2])), init("block", np.int64([1 << 20, 1 << 20]))],
              opset=18)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (Col2Im)", "the block")


def test_mel_weight_matrix_of_a_huge_dft(session, tmp_path):
    m = model([node("MelWeightMatrix", ["mels", "dft", "rate", "lo", "hi"], ["y"])], [], [vi("y", F32, None)],
              [init("mels", np.int64(1 << 31)), init("dft", np.int64(1 << 62)), init("rate", np.int64(16000)),
               init("lo", np.float32(0)), init("hi", np.float32(8000))], opset=17)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (MelWeightMatrix)", "mel matrix")


def test_tfidf_output_coordinate_of_a_trillion(session, tmp_path):
    m = model([node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1,
                    max_skip_count=0, ngram_counts=[0], ngram_indexes=[HUGE], pool_int64s=[7])],
              [vi("x", I64, [1, 4])], [vi("y", F32, None)], opset=9)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (TfIdfVectorizer)", "coordinate 1099511627776")


def test_roi_align_output_height_near_int64_max(session, tmp_path):
    """Each output bin's sample offsets are a table built here: 2^62 bins ran for ever."""
    m = model([node("RoiAlign", ["x", "rois", "idx"], ["y"], output_height=1 << 62, output_width=5, sampling_ratio=2)],
              [vi("x", F32, [1, 1, 10, 10]), vi("rois", F32, [3, 4]), vi("idx", I64, [3])], [vi("y", F32, None)],
              opset=16)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (RoiAlign)", "sample offsets")


def test_split_num_outputs_other_than_the_outputs(session, tmp_path):
    """num_outputs of a trillion for a two-output node: one split size was made per output it named."""
    m = model([node("Split", ["x"], ["a", "b"], axis=0, num_outputs=HUGE)], [vi("x", F32, [4, 2])],
              [vi("a", F32, None), vi("b", F32, None)], opset=18)
    refused(session, tmp_path, m, INVALID, "'hostile' (Split)", "num_outputs is 1099511627776", "2 outputs")


# ---- ops unrolled at import ----

def test_det_of_huge_matrices(session, tmp_path):
    m = model([node("Det", ["x"], ["y"])], [vi("x", F32, [1 << 20, 1 << 20])], [vi("y", F32, None)], opset=11)
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (Det)", "unrolled per column")


def test_lrn_window_of_a_trillion(session, tmp_path):
    m = model([node("LRN", ["x"], ["y"], size=HUGE)], [vi("x", F32, [1, 4, 2, 2])], [vi("y", F32, None)])
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (LRN)", "'size' is 1099511627776")


def test_rnn_over_a_trillion_steps(session, tmp_path):
    m = model([node("RNN", ["x", "w", "r"], ["y"], hidden_size=1)],
              [vi("x", F32, [HUGE, 1, 1]), vi("w", F32, [1, 1, 1]), vi("r", F32, [1, 1, 1])], [vi("y", F32, None)])
    refused(session, tmp_path, m, EXHAUSTED, "'hostile' (RNN)", "1099511627776 steps")


# ---- constant inputs folded at import ----

def test_slice_of_a_known_shape_with_a_step_near_int64_max(session, tmp_path):
    """Stepping past int64 while folding wrapped to a negative index and read before the shape."""
    m = model([helper.make_node("Shape", ["x"], ["s"]),
               node("Slice", ["s", "starts", "ends", "axes", "steps"], ["y"])],
              [vi("x", F32, [2, 3, 4])], [vi("y", I64, None)],
              [init("starts", np.int64([1])), init("ends", np.int64([3])), init("axes", np.int64([0])),
               init("steps", np.int64([(1 << 63) - 1]))], opset=13)
    path = tmp_path / "slice.onnx"
    onnx.save(m, str(path))
    (y,) = session.load(str(path)).execute(np.zeros((2, 3, 4), np.float32))
    np.testing.assert_array_equal(y.to_numpy(), np.int64([3]))


# ---- initializers whose dims disagree with their data ----

def test_initializer_whose_byte_size_wraps(session, tmp_path):
    """[2^59 + 1] float32 is 2^61 + 4 bytes, which wrapped to 4: four bytes of raw_data passed
    for a tensor that executing then wrote far past."""
    t = TensorProto(name="w", data_type=F32, dims=[(1 << 59) + 1], raw_data=b"\0" * 4)
    m = model([node("Identity", ["w"], ["y"])], [], [vi("y", F32, None)], [t])
    refused(session, tmp_path, m, INVALID, "initializer 'w'", "too many elements")


# ---- Loop ----

def loop(trip_count, scanned):
    body_outputs = [vi("cond_out", TensorProto.BOOL, []), vi("v_out", F32, [2])]
    body_nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Add", ["v_in", "one"], ["v_out"])]
    if scanned:
        body_outputs.append(vi("row", F32, [2]))
        body_nodes.append(helper.make_node("Identity", ["v_in"], ["row"]))
    body = helper.make_graph(body_nodes, "body",
                             [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []), vi("v_in", F32, [2])],
                             body_outputs, initializer=[init("one", np.float32([1, 1]))])
    outputs = [vi("v", F32, [2])] + ([vi("rows", F32, None)] if scanned else [])
    return model([node("Loop", ["m", "", "v0"], [o.name for o in outputs], body=body)], [vi("v0", F32, [2])], outputs,
                 [init("m", np.int64(trip_count))], opset=16)


def test_loop_scan_output_of_a_huge_trip_count(session, tmp_path):
    refused(session, tmp_path, loop(4_600_000_000_000_000, scanned=True), EXHAUSTED, "'hostile' (Loop)",
            "4600000000000000")
