//! Typed helpers for every op in libmax_c's registry (MAX's `max.graph.ops`), as methods on
//! [`Value`] (ops with a main input) and on [`Graph`] (ops that make values from several
//! inputs or from nothing). Each adds one op to the graph the value belongs to and returns
//! its result:
//!
//! ```no_run
//! # use max_c::*;
//! # fn main() -> Result<()> {
//! let g = Graph::new("mlp")?;
//! let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(4)])?;
//! let w = g.add_weight("w", DType::Float32, [4, 3])?;
//! let y = x.matmul(&w)?.relu()?.softmax(-1)?;
//! g.set_named_outputs(&[("y", &y)])?;
//! # Ok(()) }
//! ```
//!
//! Errors: the library checks every op as it is added (arity, dtypes, shapes, attributes)
//! and a failure is an INVALID_ARGUMENT naming the op and what is wrong; the graph is left as
//! it was. Values of two different graphs cannot be combined (INVALID_ARGUMENT).
//!
//! The helpers set only the attributes they take; the others keep the registry's defaults.
//! For attribute combinations a helper does not offer, [`Graph::add_op`] takes any op with
//! any [`Attrs`]. `tests/ops.rs` builds graphs with every helper and checks that together
//! they add every registered op.
//!
//! Thread-safety: like the graph, helpers need external synchronization (`Graph` is `Send`,
//! not `Sync`).

use super::*;

/// The one result of an op that has one (a registry change that gives more is reported, not
/// hidden).
fn single<'g>(op: &str, mut outputs: Vec<Value<'g>>) -> Result<Value<'g>> {
    match outputs.len() {
        1 => Ok(outputs.remove(0)),
        n => Err(Error::new(sys::MAX_STATUS_INTERNAL, format!("op '{op}' gave {n} results, expected 1"))),
    }
}

fn maybe<T>(attrs: Attrs, value: Option<T>, set: impl FnOnce(Attrs, T) -> Attrs) -> Attrs {
    match value {
        Some(v) => set(attrs, v),
        None => attrs,
    }
}

impl<'g> Value<'g> {
    /// The graph this value belongs to.
    pub fn graph(&self) -> &'g Graph {
        self.graph
    }

    /// Adds `op` on this value followed by `others`, expecting one result.
    fn apply(&self, op: &str, others: &[&Value<'g>], attrs: Attrs) -> Result<Value<'g>> {
        single(op, self.apply_n(op, others, attrs)?)
    }

    fn apply_n(&self, op: &str, others: &[&Value<'g>], attrs: Attrs) -> Result<Vec<Value<'g>>> {
        let mut inputs: Vec<&Value<'g>> = Vec::with_capacity(1 + others.len());
        inputs.push(self);
        inputs.extend_from_slice(others);
        self.graph.add_op(op, &inputs, &attrs)
    }
}

macro_rules! unary_ops {
    ($($(#[$doc:meta])* $name:ident => $op:literal;)*) => {
        /// Elementwise unary ops: one input, no attributes, same shape.
        impl<'g> Value<'g> {
            $($(#[$doc])* pub fn $name(&self) -> Result<Value<'g>> {
                self.apply($op, &[], Attrs::new())
            })*
        }
    };
}

macro_rules! binary_ops {
    ($($(#[$doc:meta])* $name:ident => $op:literal;)*) => {
        /// Elementwise binary ops (numpy broadcasting, MAX's type promotion) and products.
        impl<'g> Value<'g> {
            $($(#[$doc])* pub fn $name(&self, rhs: &Value<'g>) -> Result<Value<'g>> {
                self.apply($op, &[rhs], Attrs::new())
            })*
        }
    };
}

unary_ops! {
    /// `|x|`.
    abs => "abs";
    /// `acos(x)`, input clamped to [-1, 1]; float only.
    acos => "acos";
    /// `atanh(x)`.
    atanh => "atanh";
    /// `cos(x)`.
    cos => "cos";
    /// The error function.
    erf => "erf";
    /// `e^x`.
    exp => "exp";
    /// Rounds down.
    floor => "floor";
    /// Whether each element is infinite (bool).
    is_inf => "is_inf";
    /// Whether each element is NaN (bool).
    is_nan => "is_nan";
    /// Natural logarithm.
    log => "log";
    /// `ln(1 + x)`.
    log1p => "log1p";
    /// Logical not of a bool value.
    logical_not => "logical_not";
    /// `-x`.
    negate => "negate";
    /// `max(x, 0)`.
    relu => "relu";
    /// Rounds to the nearest integer, ties to even.
    round => "round";
    /// `1 / sqrt(x)`.
    rsqrt => "rsqrt";
    /// `1 / (1 + e^-x)`.
    sigmoid => "sigmoid";
    /// `x * sigmoid(x)`.
    silu => "silu";
    /// `sin(x)`.
    sin => "sin";
    /// `sqrt(x)`.
    sqrt => "sqrt";
    /// `tanh(x)`.
    tanh => "tanh";
    /// Rounds towards zero.
    trunc => "trunc";
    /// `[..., 2n]` as `[..., n, 2]` (real, imaginary) pairs.
    as_interleaved_complex => "as_interleaved_complex";
}

binary_ops! {
    /// `self + rhs`.
    add => "add";
    /// `self - rhs`.
    sub => "sub";
    /// `self * rhs`.
    mul => "mul";
    /// `self / rhs`, true division (integers give floats).
    div => "div";
    /// `self mod rhs` (MAX's `mod`; the name is a Rust keyword).
    modulo => "mod";
    /// `self ^ rhs`.
    pow => "pow";
    /// Batched, broadcasting matrix product; a rank-1 side is a row (lhs) or column (rhs).
    matmul => "matmul";
    /// Outer product of both inputs flattened to rank 1.
    outer => "outer";
    /// `self == rhs` (bool).
    equal => "equal";
    /// `self != rhs` (bool).
    not_equal => "not_equal";
    /// `self > rhs` (bool).
    greater => "greater";
    /// `self >= rhs` (bool).
    greater_equal => "greater_equal";
    /// `self < rhs` (bool).
    less => "less";
    /// `self <= rhs` (bool).
    less_equal => "less_equal";
    /// Logical and of bool values.
    logical_and => "logical_and";
    /// Logical or of bool values.
    logical_or => "logical_or";
    /// Logical xor of bool values.
    logical_xor => "logical_xor";
    /// Elementwise maximum (MAX's `max(x, y)`).
    maximum => "max";
    /// Elementwise minimum (MAX's `min(x, y)`).
    minimum => "min";
}

// ======================================================================================
// Reductions, scans, sorting, normalization
// ======================================================================================

impl<'g> Value<'g> {
    /// Index of the largest element along `axis` (kept as size 1), int64.
    pub fn argmax(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("argmax", &[], Attrs::new().int("axis", axis))
    }
    /// Index of the smallest element along `axis` (kept as size 1), int64.
    pub fn argmin(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("argmin", &[], Attrs::new().int("axis", axis))
    }
    /// The int64 indices that sort a rank-1 value.
    pub fn argsort(&self, ascending: bool) -> Result<Value<'g>> {
        self.apply("argsort", &[], Attrs::new().bool("ascending", ascending))
    }
    /// Largest element along `axis` (kept as size 1).
    pub fn max(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("max", &[], Attrs::new().int("axis", axis))
    }
    /// Smallest element along `axis` (kept as size 1).
    pub fn min(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("min", &[], Attrs::new().int("axis", axis))
    }
    /// Mean along `axis` (kept as size 1).
    pub fn mean(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("mean", &[], Attrs::new().int("axis", axis))
    }
    /// Sum along `axis` (kept as size 1).
    pub fn sum(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("sum", &[], Attrs::new().int("axis", axis))
    }
    /// Running sum along `axis`; `exclusive` starts at 0 and drops the last element,
    /// `reverse` sums back to front.
    pub fn cumsum(&self, axis: i64, exclusive: bool, reverse: bool) -> Result<Value<'g>> {
        self.apply("cumsum", &[], Attrs::new().int("axis", axis).bool("exclusive", exclusive).bool("reverse", reverse))
    }
    /// The `k` largest elements along `axis` and their int64 indices: `(values, indices)`.
    pub fn top_k(&self, k: i64, axis: i64) -> Result<(Value<'g>, Value<'g>)> {
        let outs = self.apply_n("top_k", &[], Attrs::new().int("k", k).int("axis", axis))?;
        match outs[..] {
            [values, indices] => Ok((values, indices)),
            _ => Err(Error::new(sys::MAX_STATUS_INTERNAL, format!("op 'top_k' gave {} results, expected 2", outs.len()))),
        }
    }
    /// Softmax along `axis`.
    pub fn softmax(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("softmax", &[], Attrs::new().int("axis", axis))
    }
    /// Log-softmax along `axis`.
    pub fn logsoftmax(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("logsoftmax", &[], Attrs::new().int("axis", axis))
    }
    /// Layer normalization over the last dim; `gamma` and `beta` match it, `epsilon > 0`.
    pub fn layer_norm(&self, gamma: &Value<'g>, beta: &Value<'g>, epsilon: f64) -> Result<Value<'g>> {
        self.apply("layer_norm", &[gamma, beta], Attrs::new().float("epsilon", epsilon))
    }
    /// RMS normalization over the last dim, scaled by `weight` (the registry's defaults for
    /// `weight_offset` and `multiply_before_cast`).
    pub fn rms_norm(&self, weight: &Value<'g>, epsilon: f64) -> Result<Value<'g>> {
        self.apply("rms_norm", &[weight], Attrs::new().float("epsilon", epsilon))
    }
    /// Keeps the band of the last two dims with at most `num_lower` sub- and `num_upper`
    /// super-diagonals (`None`: all); `exclude` keeps the rest instead.
    pub fn band_part(&self, num_lower: Option<i64>, num_upper: Option<i64>, exclude: bool) -> Result<Value<'g>> {
        let attrs = maybe(Attrs::new(), num_lower, |a, n| a.int("num_lower", n));
        let attrs = maybe(attrs, num_upper, |a, n| a.int("num_upper", n));
        self.apply("band_part", &[], attrs.bool("exclude", exclude))
    }
    /// Limits every element to `[min, max]` (`None`: unbounded on that side).
    pub fn clamp(&self, min: Option<f64>, max: Option<f64>) -> Result<Value<'g>> {
        let attrs = maybe(Attrs::new(), min, |a, v| a.float("min", v));
        self.apply("clamp", &[], maybe(attrs, max, |a, v| a.float("max", v)))
    }
    /// GELU, exact or approximated.
    pub fn gelu(&self, approximate: GeluApproximation) -> Result<Value<'g>> {
        self.apply("gelu", &[], Attrs::new().string("approximate", approximate.name()))
    }
    /// Elementwise `self ? x : y` for a bool condition (MAX's `where(condition, x, y)`).
    pub fn select(&self, x: &Value<'g>, y: &Value<'g>) -> Result<Value<'g>> {
        self.apply("where", &[x, y], Attrs::new())
    }
}

/// How [`Value::gelu`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GeluApproximation {
    /// The exact `x * Φ(x)` (MAX's "none").
    #[default]
    Exact,
    /// `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
    Tanh,
    /// `x * sigmoid(1.702 x)`.
    Quick,
}

impl GeluApproximation {
    /// The attribute's value: "none", "tanh" or "quick".
    pub fn name(self) -> &'static str {
        match self {
            GeluApproximation::Exact => "none",
            GeluApproximation::Tanh => "tanh",
            GeluApproximation::Quick => "quick",
        }
    }
}

// ======================================================================================
// Shape and layout
// ======================================================================================

impl<'g> Value<'g> {
    /// The same elements with `shape` (one dim may be -1).
    pub fn reshape<D: Into<Dim>>(&self, shape: impl IntoIterator<Item = D>) -> Result<Value<'g>> {
        self.apply("reshape", &[], Attrs::new().dims("shape", shape))
    }
    /// Dims `start_dim..=end_dim` merged into one.
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Value<'g>> {
        self.apply("flatten", &[], Attrs::new().int("start_dim", start_dim).int("end_dim", end_dim))
    }
    /// Removes the size-1 dim `axis`.
    pub fn squeeze(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("squeeze", &[], Attrs::new().int("axis", axis))
    }
    /// Inserts a size-1 dim at `axis` (negative counts from rank + 1).
    pub fn unsqueeze(&self, axis: i64) -> Result<Value<'g>> {
        self.apply("unsqueeze", &[], Attrs::new().int("axis", axis))
    }
    /// Swaps two axes.
    pub fn transpose(&self, axis_1: i64, axis_2: i64) -> Result<Value<'g>> {
        self.apply("transpose", &[], Attrs::new().int("axis_1", axis_1).int("axis_2", axis_2))
    }
    /// Reorders the axes: result axis `i` is input axis `dims[i]`.
    pub fn permute(&self, dims: &[i64]) -> Result<Value<'g>> {
        self.apply("permute", &[], Attrs::new().ints("dims", dims))
    }
    /// Broadcasts to `shape` (each dim 1 or equal to the target).
    pub fn broadcast_to<D: Into<Dim>>(&self, shape: impl IntoIterator<Item = D>) -> Result<Value<'g>> {
        self.apply("broadcast_to", &[], Attrs::new().dims("shape", shape))
    }
    /// Broadcasts to the shape held by the rank-1 integer value `shape`, whose result dims are
    /// `out_dims`.
    pub fn broadcast_to_tensor<D: Into<Dim>>(&self, shape: &Value<'g>, out_dims: impl IntoIterator<Item = D>) -> Result<Value<'g>> {
        self.apply("broadcast_to", &[shape], Attrs::new().dims("out_dims", out_dims))
    }
    /// Repeats the value `repeats[i]` times along axis `i`.
    pub fn tile<D: Into<Dim>>(&self, repeats: impl IntoIterator<Item = D>) -> Result<Value<'g>> {
        self.apply("tile", &[], Attrs::new().dims("repeats", repeats))
    }
    /// Pads with `value`: `paddings` is `[before_0, after_0, before_1, ...]` (2 × rank).
    pub fn pad(&self, paddings: &[i64], value: f64) -> Result<Value<'g>> {
        self.apply("pad", &[], Attrs::new().ints("paddings", paddings).float("value", value))
    }
    /// Splits along `axis` into pieces of `sizes` (summing to the dim).
    pub fn split<D: Into<Dim>>(&self, sizes: impl IntoIterator<Item = D>, axis: i64) -> Result<Vec<Value<'g>>> {
        self.apply_n("split", &[], Attrs::new().dims("split_sizes", sizes).int("axis", axis))
    }
    /// Splits along `axis` into `chunks` equal pieces.
    pub fn chunk(&self, chunks: i64, axis: i64) -> Result<Vec<Value<'g>>> {
        self.apply_n("chunk", &[], Attrs::new().int("chunks", chunks).int("axis", axis))
    }
    /// Repeats every element `repeats` times along `axis` (`None`: of the flattened value).
    pub fn repeat_interleave(&self, repeats: i64, axis: Option<i64>) -> Result<Value<'g>> {
        let attrs = Attrs::new().int("repeats", repeats);
        self.apply("repeat_interleave", &[], maybe(attrs, axis, |a, v| a.int("axis", v)))
    }
    /// Repeats element `i` `repeats[i]` times along `axis` (`None`: flattened); `out_dim`
    /// names the result's length.
    pub fn repeat_interleave_tensor(&self, repeats: &Value<'g>, axis: Option<i64>, out_dim: impl Into<Dim>) -> Result<Value<'g>> {
        let attrs = Attrs::new().dims("out_dim", [out_dim.into()]);
        self.apply("repeat_interleave", &[repeats], maybe(attrs, axis, |a, v| a.int("axis", v)))
    }
    /// Asserts at run time that the value has `shape`, failing with `message`.
    pub fn rebind<D: Into<Dim>>(&self, shape: impl IntoIterator<Item = D>, message: &str) -> Result<Value<'g>> {
        self.apply("rebind", &[], Attrs::new().dims("shape", shape).string("message", message))
    }
    /// The value with another dtype.
    pub fn cast(&self, dtype: DType) -> Result<Value<'g>> {
        self.apply("cast", &[], Attrs::new().dtype("dtype", dtype))
    }
}

// ======================================================================================
// Indexing
// ======================================================================================

/// One axis of [`Value::slice`], like a numpy index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// A single position (negative from the end); the axis is removed.
    At(i64),
    /// `start..stop` by `step`, negative bounds from the end.
    Range {
        /// First position (`None`: the start, or the end for a negative step).
        start: Option<i64>,
        /// Position past the last (`None`: to the end, or the start for a negative step).
        stop: Option<i64>,
        /// Non-zero stride.
        step: i64,
    },
    /// The whole axis (`:`).
    Full,
    /// A new size-1 axis (numpy's `None`); consumes no input axis.
    NewAxis,
}

/// An open slice bound in the `slice_tensor` attributes.
const OPEN: i64 = i64::MAX;

impl Index {
    /// `start..stop` with step 1.
    pub fn range(start: i64, stop: i64) -> Index {
        Index::Range { start: Some(start), stop: Some(stop), step: 1 }
    }
}

/// The `slice_tensor` attributes of a list of indices.
#[derive(Default)]
struct SliceAttrs {
    starts: Vec<i64>,
    stops: Vec<i64>,
    steps: Vec<i64>,
    squeeze_axes: Vec<i64>,
    new_axes: Vec<i64>,
}

impl SliceAttrs {
    fn new(indices: &[Index]) -> SliceAttrs {
        let mut s = SliceAttrs::default();
        let mut out_axis = 0;
        for index in indices {
            match *index {
                Index::NewAxis => {
                    s.new_axes.push(out_axis);
                    out_axis += 1;
                }
                Index::At(i) => {
                    s.squeeze_axes.push(s.starts.len() as i64);
                    s.push(i, if i == -1 { OPEN } else { i + 1 }, 1);
                }
                Index::Full => {
                    s.push(OPEN, OPEN, 1);
                    out_axis += 1;
                }
                Index::Range { start, stop, step } => {
                    s.push(start.unwrap_or(OPEN), stop.unwrap_or(OPEN), step);
                    out_axis += 1;
                }
            }
        }
        s
    }
    fn push(&mut self, start: i64, stop: i64, step: i64) {
        self.starts.push(start);
        self.stops.push(stop);
        self.steps.push(step);
    }
}

impl<'g> Value<'g> {
    /// numpy-style slicing (MAX's `slice_tensor`): one [`Index`] per input axis, leading
    /// axes first; axes left out are taken whole.
    pub fn slice(&self, indices: &[Index]) -> Result<Value<'g>> {
        let s = SliceAttrs::new(indices);
        let attrs = Attrs::new()
            .dims("starts", s.starts)
            .dims("stops", s.stops)
            .ints("steps", &s.steps)
            .ints("squeeze_axes", &s.squeeze_axes)
            .ints("new_axes", &s.new_axes);
        self.apply("slice_tensor", &[], attrs)
    }
    /// Takes the entries of `indices` along `axis`.
    pub fn gather(&self, indices: &Value<'g>, axis: i64) -> Result<Value<'g>> {
        self.apply("gather", &[indices], Attrs::new().int("axis", axis))
    }
    /// Gathers slices addressed by the last dim of `indices`, after `batch_dims` shared dims.
    pub fn gather_nd(&self, indices: &Value<'g>, batch_dims: i64) -> Result<Value<'g>> {
        self.apply("gather_nd", &[indices], Attrs::new().int("batch_dims", batch_dims))
    }
    /// This value with `updates` written at `indices` along `axis`.
    pub fn scatter(&self, updates: &Value<'g>, indices: &Value<'g>, axis: i64) -> Result<Value<'g>> {
        self.apply("scatter", &[updates, indices], Attrs::new().int("axis", axis))
    }
    /// This value with `updates` written at the index tuples of `indices`.
    pub fn scatter_nd(&self, updates: &Value<'g>, indices: &Value<'g>) -> Result<Value<'g>> {
        self.apply("scatter_nd", &[updates, indices], Attrs::new())
    }
    /// The row-major indices of the nonzero elements, int64 `[out_dim, rank]` (MAX's
    /// `nonzero(x, out_dim)`). Only the data decides the count, so `out_dim` names it: a
    /// symbol no input binds is bound when the op runs (the engine plans what follows for
    /// it); a static dim, or a symbol an input binds, is checked then.
    pub fn nonzero(&self, out_dim: impl Into<Dim>) -> Result<Value<'g>> {
        self.apply("nonzero", &[], Attrs::new().dims("out_dim", [out_dim.into()]))
    }
    /// This int64 `[N]` shape itself, its entries named by the N symbols of `out_dim`, which
    /// no input binds: the engine binds them when the shape is computed and plans what
    /// follows (ops whose types use the symbols) for them.
    pub fn bind_dims<D: Into<Dim>>(&self, out_dim: impl IntoIterator<Item = D>) -> Result<Value<'g>> {
        self.apply("bind_dims", &[], Attrs::new().dims("out_dim", out_dim))
    }
    /// This value with the positions where the bool `mask` (broadcast to this shape) holds
    /// filled, in row-major order, by the elements of `updates` (this dtype) taken in order
    /// (MAX's `masked_scatter(input, mask, updates, out_dim)`); `out_dim` names how many
    /// positions that is. Running out of updates is an execution error.
    pub fn masked_scatter(&self, mask: &Value<'g>, updates: &Value<'g>, out_dim: impl Into<Dim>) -> Result<Value<'g>> {
        self.apply("masked_scatter", &[mask, updates], Attrs::new().dims("out_dim", [out_dim.into()]))
    }
}

// ======================================================================================
// Bitwise (libmax_c's extras beyond MAX's op set)
// ======================================================================================

impl<'g> Value<'g> {
    /// Bitwise and of integer or bool values of one dtype (broadcast; never promoted, since
    /// widening a signed operand would change the bits the other one meets).
    pub fn bitwise_and(&self, rhs: &Value<'g>) -> Result<Value<'g>> {
        self.apply("bitwise_and", &[rhs], Attrs::new())
    }
    /// Bitwise or, as [`Value::bitwise_and`].
    pub fn bitwise_or(&self, rhs: &Value<'g>) -> Result<Value<'g>> {
        self.apply("bitwise_or", &[rhs], Attrs::new())
    }
    /// Bitwise xor, as [`Value::bitwise_and`].
    pub fn bitwise_xor(&self, rhs: &Value<'g>) -> Result<Value<'g>> {
        self.apply("bitwise_xor", &[rhs], Attrs::new())
    }
    /// Every bit of an integer value flipped (bool is refused: that is
    /// [`Value::logical_not`]).
    pub fn bitwise_not(&self) -> Result<Value<'g>> {
        self.apply("bitwise_not", &[], Attrs::new())
    }
    /// Each element's bytes read as `dtype`, which must have the same width (unlike
    /// [`Value::cast`], no value is converted).
    pub fn bitcast(&self, dtype: DType) -> Result<Value<'g>> {
        self.apply("bitcast", &[], Attrs::new().dtype("dtype", dtype))
    }
}

// ======================================================================================
// Quantized
// ======================================================================================

impl<'g> Value<'g> {
    /// A quantized `uint8 [..., row_bytes]` value as float32 `[..., k]`.
    pub fn dequantize(&self, encoding: QuantEncoding) -> Result<Value<'g>> {
        self.apply("dequantize", &[], Attrs::new().string("encoding", encoding.name()))
    }
    /// `self @ dequantize(rhs)ᵀ` without dequantizing: `self` float32 `[..., k]`, `rhs`
    /// `uint8 [n, row_bytes]`, pre-transposed (one encoded row per output column, as GGUF
    /// stores a linear layer).
    pub fn qmatmul(&self, rhs: &Value<'g>, encoding: QuantEncoding) -> Result<Value<'g>> {
        self.apply("qmatmul", &[rhs], Attrs::new().string("encoding", encoding.name()))
    }
}

// ======================================================================================
// Convolution and pooling (NHWC)
// ======================================================================================

/// Attributes of [`Value::conv2d`]; unset ones keep the registry's defaults (stride 1,
/// dilation 1, no padding, 1 group, NHWC input, RSCF filter).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conv2d {
    /// `[h, w]` strides.
    pub stride: Option<[i64; 2]>,
    /// `[h, w]` dilations.
    pub dilation: Option<[i64; 2]>,
    /// `[top, bottom, left, right]`.
    pub padding: Option<[i64; 4]>,
    /// Groups the channels are split into.
    pub groups: Option<i64>,
    /// The input's layout name ("NHWC").
    pub input_layout: Option<String>,
    /// The filter's layout name ("RSCF").
    pub filter_layout: Option<String>,
}

impl Conv2d {
    fn attrs(&self) -> Attrs {
        let a = maybe(Attrs::new(), self.stride, |a, v| a.ints("stride", &v));
        let a = maybe(a, self.dilation, |a, v| a.ints("dilation", &v));
        let a = maybe(a, self.padding, |a, v| a.ints("padding", &v));
        let a = maybe(a, self.groups, |a, v| a.int("groups", v));
        let a = maybe(a, self.input_layout.as_deref(), |a, v| a.string("input_layout", v));
        maybe(a, self.filter_layout.as_deref(), |a, v| a.string("filter_layout", v))
    }
}

/// Attributes of [`Value::avg_pool2d`] and [`Value::max_pool2d`]; unset ones keep the
/// registry's defaults (stride 1, dilation 1, no padding, floor mode, boundary counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pool2d {
    /// `[h, w]` window.
    pub kernel_size: [i64; 2],
    /// `[h, w]` strides.
    pub stride: Option<[i64; 2]>,
    /// `[h, w]` dilations.
    pub dilation: Option<[i64; 2]>,
    /// `[top, bottom, left, right]`.
    pub padding: Option<[i64; 4]>,
    /// Round the output size up instead of down.
    pub ceil_mode: Option<bool>,
    /// Average pooling only: whether padding counts in the divisor.
    pub count_boundary: Option<bool>,
}

impl Pool2d {
    /// A `kh × kw` window with every other attribute at its default.
    pub fn new(kernel_size: [i64; 2]) -> Pool2d {
        Pool2d { kernel_size, ..Pool2d::default() }
    }
    fn attrs(&self) -> Attrs {
        let a = Attrs::new().ints("kernel_size", &self.kernel_size);
        let a = maybe(a, self.stride, |a, v| a.ints("stride", &v));
        let a = maybe(a, self.dilation, |a, v| a.ints("dilation", &v));
        let a = maybe(a, self.padding, |a, v| a.ints("padding", &v));
        maybe(a, self.ceil_mode, |a, v| a.bool("ceil_mode", v))
    }
}

impl<'g> Value<'g> {
    /// 2-D convolution of an NHWC value with an RSCF `filter` `(H, W, Cin/groups, Cout)`
    /// and an optional `(Cout,)` bias.
    pub fn conv2d(&self, filter: &Value<'g>, bias: Option<&Value<'g>>, options: &Conv2d) -> Result<Value<'g>> {
        match bias {
            Some(b) => self.apply("conv2d", &[filter, b], options.attrs()),
            None => self.apply("conv2d", &[filter], options.attrs()),
        }
    }
    /// Average pooling of an NHWC value.
    pub fn avg_pool2d(&self, options: &Pool2d) -> Result<Value<'g>> {
        let attrs = maybe(options.attrs(), options.count_boundary, |a, v| a.bool("count_boundary", v));
        self.apply("avg_pool2d", &[], attrs)
    }
    /// Max pooling of an NHWC value.
    ///
    /// Errors: INVALID_ARGUMENT when `count_boundary` is set (it means nothing here).
    pub fn max_pool2d(&self, options: &Pool2d) -> Result<Value<'g>> {
        if options.count_boundary.is_some() {
            return Err(Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, "op 'max_pool2d' has no attribute 'count_boundary'"));
        }
        self.apply("max_pool2d", &[], options.attrs())
    }
}

// ======================================================================================
// Ops on the graph: several inputs, or none
// ======================================================================================

impl Graph {
    fn apply<'g>(&'g self, op: &str, inputs: &[&Value<'g>], attrs: Attrs) -> Result<Value<'g>> {
        single(op, self.add_op(op, inputs, &attrs)?)
    }

    /// Joins `values` (one dtype and rank, other dims equal) along `axis`.
    pub fn concat<'g>(&'g self, values: &[&Value<'g>], axis: i64) -> Result<Value<'g>> {
        self.apply("concat", values, Attrs::new().int("axis", axis))
    }
    /// Stacks `values` (one type) along a new `axis`.
    pub fn stack<'g>(&'g self, values: &[&Value<'g>], axis: i64) -> Result<Value<'g>> {
        self.apply("stack", values, Attrs::new().int("axis", axis))
    }
    /// `[start, stop)` by `step`, from scalar values of one dtype; `out_dim` names or fixes
    /// the length (`None`: the library infers it from constant bounds).
    pub fn range<'g>(&'g self, start: &Value<'g>, stop: &Value<'g>, step: &Value<'g>, out_dim: Option<Dim>) -> Result<Value<'g>> {
        let attrs = maybe(Attrs::new(), out_dim, |a, d| a.dims("out_dim", [d]));
        self.apply("range", &[start, stop, step], attrs)
    }
    /// A rank-1 int64 value holding the dims of `shape` (symbolic ones at run time).
    pub fn shape_to_tensor<D: Into<Dim>>(&self, shape: impl IntoIterator<Item = D>) -> Result<Value<'_>> {
        self.apply("shape_to_tensor", &[], Attrs::new().dims("shape", shape))
    }
    /// A constant holding a copy of `data` with `shape` (MAX's `ops.constant`).
    ///
    /// Errors: INVALID_ARGUMENT when `data` does not have `shape`'s element count.
    pub fn constant<T: Element>(&self, data: &[T], shape: &[i64]) -> Result<Value<'_>> {
        self.add_constant(&Tensor::from_slice(data, shape)?)
    }
    /// A rank-0 constant.
    pub fn scalar<T: Element>(&self, value: T) -> Result<Value<'_>> {
        self.constant(&[value], &[])
    }
    /// [`Graph::constant`] placed on `device` (MAX's `ops.constant(value, dtype, device)`;
    /// see [`Graph::add_constant_on`]).
    pub fn constant_on<T: Element>(&self, data: &[T], shape: &[i64], device: DeviceRef) -> Result<Value<'_>> {
        self.add_constant_on(&Tensor::from_slice(data, shape)?, device)
    }
    /// A rank-0 constant on `device`: a scalar for a graph placed there.
    pub fn scalar_on<T: Element>(&self, value: T, device: DeviceRef) -> Result<Value<'_>> {
        self.constant_on(&[value], &[], device)
    }
    /// MAX's `constant_external(name, type)`: the same as [`Graph::add_weight`].
    pub fn constant_external<D: Into<Dim>>(&self, name: &str, dtype: DType, dims: impl IntoIterator<Item = D>) -> Result<Value<'_>> {
        self.add_weight(name, dtype, dims)
    }
}

// ======================================================================================
// Control flow and calls (ABI 1.6)
// ======================================================================================

impl Graph {
    /// Copies `subgraphs` into this graph and adds `op` on `inputs` with each copy's index
    /// under its attribute name. Checks the library's ABI first, so that an older library,
    /// which lacks the op, gets nothing added.
    fn apply_with_subgraphs<'g>(&'g self, op: &str, inputs: &[&Value<'g>], subgraphs: &[(&str, &Graph)], attrs: Attrs) -> Result<Vec<Value<'g>>> {
        require_abi_minor(6, &format!("op '{op}'"))?;
        let mut attrs = attrs;
        for (name, subgraph) in subgraphs {
            attrs = attrs.graph(name, self.add_subgraph(subgraph)?);
        }
        self.add_op(op, inputs, &attrs)
    }

    /// MAX's `cond`: runs `then_graph` on `args` when the rank-0 bool `pred` is true, else
    /// `else_graph`, and gives the results of the one that ran. Both are complete graphs
    /// whose inputs have exactly the types of `args` (a subgraph sees nothing of this graph:
    /// every value it uses is one of `args`) and whose outputs have equal types.
    ///
    /// Errors: INVALID_ARGUMENT naming the subgraph and the mismatch (the copies of the
    /// subgraphs stay in this graph, unused); UNIMPLEMENTED with a library older than ABI 1.6.
    pub fn cond<'g>(&'g self, pred: &Value<'g>, args: &[&Value<'g>], then_graph: &Graph, else_graph: &Graph) -> Result<Vec<Value<'g>>> {
        let mut inputs = Vec::with_capacity(1 + args.len());
        inputs.push(pred);
        inputs.extend_from_slice(args);
        let branches = [("then_graph", then_graph), ("else_graph", else_graph)];
        self.apply_with_subgraphs("cond", &inputs, &branches, Attrs::new())
    }

    /// MAX's `while_loop`: `v = values; while predicate(v) { v = body(v) }`, giving the final
    /// `v` (zero iterations allowed). `predicate` takes the values' types and gives one rank-0
    /// bool; `body` takes and gives exactly the values' types. Values a loop only reads are
    /// passed as extra loop values that `body` gives back unchanged.
    ///
    /// Errors: as [`Graph::cond`].
    pub fn while_loop<'g>(&'g self, values: &[&Value<'g>], predicate: &Graph, body: &Graph) -> Result<Vec<Value<'g>>> {
        let subgraphs = [("predicate", predicate), ("body", body)];
        self.apply_with_subgraphs("while_loop", values, &subgraphs, Attrs::new())
    }

    /// MAX's `call(graph, *args, prefix)`: the results of `graph` on `args` (which have the
    /// types of its inputs). The compiler inlines it; its weights are the model's weights
    /// named `prefix` + name, so one subgraph may serve several layers.
    ///
    /// Errors: as [`Graph::cond`].
    pub fn call<'g>(&'g self, graph: &Graph, args: &[&Value<'g>], prefix: &str) -> Result<Vec<Value<'g>>> {
        self.apply_with_subgraphs("call", args, &[("graph", graph)], Attrs::new().string("prefix", prefix))
    }
}
