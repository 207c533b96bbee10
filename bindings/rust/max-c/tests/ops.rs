//! The typed op helpers: together they add every op of the registry, results of a graph
//! built with them match values computed here, and bad calls are errors naming the op.
use max_c::*;
use std::collections::BTreeSet;

/// The op names a graph's text shows (`%3 = matmul(%0, %1) : ...`).
fn ops_in(graph: &Graph) -> BTreeSet<String> {
    let text = graph.to_text().unwrap();
    text.lines()
        .filter_map(|l| l.split_once(" = ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once('(').map(|(name, _)| name.trim().to_string()))
        .collect()
}

/// Elementwise, reductions, shapes, indexing and normalization on x, y: float32 [2, 4].
fn build_dense(g: &Graph) -> Result<()> {
    let x = g.add_input("x", DType::Float32, [2, 4])?;
    let y = g.add_input("y", DType::Float32, [2, 4])?;
    let mut out = vec![
        x.abs()?, x.acos()?, x.atanh()?, x.cos()?, x.erf()?, x.exp()?, x.floor()?, x.log()?,
        x.log1p()?, x.negate()?, x.relu()?, x.round()?, x.rsqrt()?, x.sigmoid()?, x.silu()?,
        x.sin()?, x.sqrt()?, x.tanh()?, x.trunc()?, x.as_interleaved_complex()?,
        x.gelu(GeluApproximation::Tanh)?,
    ];
    let (nan, inf) = (x.is_nan()?, x.is_inf()?);
    out.extend([nan.logical_not()?, nan.logical_and(&inf)?, nan.logical_or(&inf)?, nan.logical_xor(&inf)?]);
    for f in [Value::add, Value::sub, Value::mul, Value::div, Value::modulo, Value::pow, Value::maximum, Value::minimum] {
        out.push(f(&x, &y)?);
    }
    for f in [Value::equal, Value::not_equal, Value::greater, Value::greater_equal, Value::less, Value::less_equal] {
        out.push(f(&x, &y)?);
    }
    out.extend([x.matmul(&y.transpose(0, 1)?)?, x.outer(&y)?, x.greater(&y)?.select(&x, &y)?]);
    out.extend([x.argmax(1)?, x.argmin(1)?, x.max(1)?, x.min(0)?, x.mean(1)?, x.sum(-1)?]);
    out.extend([x.cumsum(1, true, false)?, x.softmax(-1)?, x.logsoftmax(-1)?, x.flatten(0, 1)?.argsort(true)?]);
    out.push(x.top_k(2, -1)?.1);
    let four = g.constant(&[1.0f32, 0.5, 2.0, 1.5], &[4])?;
    let zero = g.constant(&[0.0f32; 4], &[4])?;
    out.extend([x.layer_norm(&four, &zero, 1e-5)?, x.rms_norm(&four, 1e-6)?]);
    out.extend([x.band_part(Some(0), None, false)?, x.clamp(Some(-0.5), Some(0.5))?, x.cast(DType::Int32)?]);
    out.extend([x.reshape([4, 2])?, x.unsqueeze(0)?.squeeze(0)?, x.permute(&[1, 0])?, x.broadcast_to([3, 2, 4])?]);
    out.extend([x.tile([2, 1])?, x.pad(&[0, 0, 1, 1], 0.0)?, x.rebind([2, 4], "x is 2x4")?]);
    out.extend(x.split([1, 3], 1)?);
    out.extend(x.chunk(2, 1)?);
    out.push(x.repeat_interleave(2, Some(1))?);
    let counts = g.constant(&[1i64, 0, 2, 1], &[4])?;
    out.push(x.repeat_interleave_tensor(&counts, Some(1), "r")?);
    let shape = g.shape_to_tensor([2, 4])?;
    out.push(x.broadcast_to_tensor(&shape, [2, 4])?);
    out.push(x.slice(&[Index::At(1), Index::Range { start: Some(1), stop: None, step: 2 }])?);
    let rows = g.constant(&[1i64, 0], &[2])?;
    out.extend([x.gather(&rows, 0)?, x.gather_nd(&g.constant(&[1i64], &[1, 1])?, 0)?]);
    let cols = g.constant(&[3i64, 0], &[2, 1])?;
    out.push(x.scatter(&g.constant(&[9.0f32, 8.0], &[2, 1])?, &cols, 1)?);
    out.push(x.scatter_nd(&g.constant(&[7.0f32; 4], &[1, 4])?, &g.constant(&[0i64], &[1, 1])?)?);
    out.extend([x.nonzero("nonzeros")?, x.masked_scatter(&nan, &y.flatten(0, 1)?, "masked")?]);
    out.push(g.constant(&[2i64, 4], &[2])?.bind_dims(["rows", "cols"])?);
    let bits = x.bitcast(DType::Int32)?;
    out.extend([bits.bitwise_and(&bits)?, bits.bitwise_or(&bits)?, bits.bitwise_xor(&bits)?, bits.bitwise_not()?]);
    out.extend([g.concat(&[&x, &y], 0)?, g.stack(&[&x, &y], 0)?]);
    let (start, stop, step) = (g.scalar(0i64)?, g.scalar(6i64)?, g.scalar(2i64)?);
    out.push(g.range(&start, &stop, &step, Some(Dim::Static(3)))?);
    out.push(g.constant_external("w", DType::Float32, [4])?);
    let refs: Vec<&Value> = out.iter().collect();
    g.set_outputs(&refs)
}

/// Convolution, pooling and the quantized ops.
fn build_image_and_quantized(g: &Graph) -> Result<()> {
    let img = g.add_input("img", DType::Float32, [1, 4, 4, 2])?;
    let filter = g.add_weight("filter", DType::Float32, [3, 3, 2, 3])?;
    let bias = g.add_weight("bias", DType::Float32, [3])?;
    let conv = img.conv2d(&filter, Some(&bias), &Conv2d { padding: Some([1, 1, 1, 1]), ..Conv2d::default() })?;
    let plain = img.conv2d(&filter, None, &Conv2d::default())?;
    let avg = img.avg_pool2d(&Pool2d { count_boundary: Some(false), ..Pool2d::new([2, 2]) })?;
    let max = img.max_pool2d(&Pool2d { stride: Some([2, 2]), ..Pool2d::new([2, 2]) })?;
    let enc = QuantEncoding::Q4_0;
    let q = g.add_weight("q", DType::UInt8, [2, enc.row_bytes(32)?])?;
    let lhs = g.add_input("lhs", DType::Float32, [1, 32])?;
    g.set_outputs(&[&conv, &plain, &avg, &max, &q.dequantize(enc)?, &lhs.qmatmul(&q, enc)?])
}

/// cond, while_loop and call on x: float32 [2], each with a one-op subgraph.
fn build_control_flow(g: &Graph) -> Result<()> {
    let x = g.add_input("x", DType::Float32, [2])?;
    let p = g.add_input("p", DType::Bool, [0i64; 0])?;
    let negate = Graph::new("negate")?;
    let v = negate.add_input("v", DType::Float32, [2])?;
    negate.set_outputs(&[&v.negate()?])?;
    let nonempty = Graph::new("nonempty")?;
    let v = nonempty.add_input("v", DType::Float32, [2])?;
    nonempty.set_outputs(&[&v.sum(0)?.reshape([0i64; 0])?.greater(&nonempty.scalar(0.0f32)?)?])?;
    let mut out = g.cond(&p, &[&x], &negate, &negate)?;
    out.extend(g.while_loop(&[&x], &nonempty, &negate)?);
    out.extend(g.call(&negate, &[&x], "")?);
    let refs: Vec<&Value> = out.iter().collect();
    g.set_outputs(&refs)
}

#[test]
fn helpers_add_every_registered_op() {
    let (dense, image) = (Graph::new("dense").unwrap(), Graph::new("image").unwrap());
    let flow = Graph::new("flow").unwrap();
    build_dense(&dense).unwrap();
    build_image_and_quantized(&image).unwrap();
    build_control_flow(&flow).unwrap();
    dense.verify().unwrap();
    image.verify().unwrap();
    flow.verify().unwrap();
    let added: BTreeSet<String> = [&dense, &image, &flow].iter().flat_map(|g| ops_in(g)).collect();
    let registered: BTreeSet<String> = ops().unwrap().into_iter().map(|(name, _)| name).collect();
    let missing: Vec<&String> = registered.difference(&added).collect();
    assert!(missing.is_empty(), "registered ops without a typed helper: {missing:?}");
    assert!(registered.len() >= 87, "{} ops registered", registered.len());
}

const X: [f32; 8] = [0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 0.0, 3.0];
const Y: [f32; 8] = [1.0, -2.0, 0.5, 0.25, 2.0, 1.0, -1.0, 0.0];

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{got:?} vs {want:?}");
    }
}

#[test]
fn helper_results_match_values_computed_here() {
    let g = Graph::new("typed").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("rows"), Dim::from(4)]).unwrap();
        let y = g.add_input("y", DType::Float32, [Dim::from("rows"), Dim::from(4)]).unwrap();
        let softmax = x.softmax(-1).unwrap();
        let bigger = x.greater(&y).unwrap().select(&x, &y).unwrap();
        let (top, top_idx) = x.top_k(2, -1).unwrap();
        let row_sums = g.concat(&[&x, &y], 1).unwrap().sum(1).unwrap();
        let cols = x.slice(&[Index::Full, Index::Range { start: Some(1), stop: Some(4), step: 2 }]).unwrap();
        let picked = x.gather(&g.constant(&[3i64, 0], &[2]).unwrap(), 1).unwrap();
        let gram = x.matmul(&y.transpose(0, 1).unwrap()).unwrap();
        let scaled = x.mul(&g.scalar(2.0f32).unwrap()).unwrap().cumsum(1, false, false).unwrap();
        let last_row = x.slice(&[Index::At(-1), Index::NewAxis, Index::range(1, 3)]).unwrap();
        g.set_named_outputs(&[
            ("softmax", &softmax), ("bigger", &bigger), ("top", &top), ("top_idx", &top_idx),
            ("row_sums", &row_sums), ("cols", &cols), ("picked", &picked), ("gram", &gram),
            ("scaled", &scaled), ("last_row", &last_row),
        ])
        .unwrap();
    }
    let model = Context::new(1).unwrap().compile(&g, &CompileOptions::default()).unwrap().init(&[]).unwrap();
    let xt = Tensor::from_slice(&X, &[2, 4]).unwrap();
    let yt = Tensor::from_slice(&Y, &[2, 4]).unwrap();
    let out = model.execute(&[&xt, &yt]).unwrap();
    let f = |i: usize| out[i].to_vec::<f32>().unwrap();
    let rows: Vec<&[f32]> = X.chunks(4).collect();

    let softmax: Vec<f32> = rows
        .iter()
        .flat_map(|r| {
            let m = r.iter().cloned().fold(f32::MIN, f32::max);
            let s: f32 = r.iter().map(|v| (v - m).exp()).sum();
            r.iter().map(move |v| (v - m).exp() / s)
        })
        .collect();
    close(&f(0), &softmax);
    close(&f(1), &X.iter().zip(&Y).map(|(a, b)| if a > b { *a } else { *b }).collect::<Vec<_>>());
    close(&f(2), &[2.0, 0.5, 3.0, 1.5]);
    assert_eq!(out[3].to_vec::<i64>().unwrap(), vec![2, 0, 3, 1]);
    let sums: Vec<f32> = (0..2).map(|r| X[r * 4..r * 4 + 4].iter().chain(&Y[r * 4..r * 4 + 4]).sum()).collect();
    close(&f(4), &sums);
    assert_eq!(out[4].shape().unwrap(), vec![2, 1], "a reduction keeps its axis");
    close(&f(5), &[-1.0, 0.25, 1.5, 3.0]);
    close(&f(6), &[0.25, 0.5, 3.0, -0.75]);
    let gram: Vec<f32> = (0..2).flat_map(|i| (0..2).map(move |j| (0..4).map(|k| X[i * 4 + k] * Y[j * 4 + k]).sum())).collect();
    close(&f(7), &gram);
    let scaled: Vec<f32> = rows.iter().flat_map(|r| r.iter().scan(0.0, |acc, v| { *acc += 2.0 * v; Some(*acc) })).collect();
    close(&f(8), &scaled);
    assert_eq!(out[9].shape().unwrap(), vec![1, 2]);
    close(&f(9), &X[5..7]);
}

#[test]
fn helper_errors_name_the_op_and_keep_the_graph() {
    let g = Graph::new("errors").unwrap();
    let x = g.add_input("x", DType::Float32, [2, 4]).unwrap();
    let w = g.add_weight("w", DType::Float32, [3, 5]).unwrap();
    let ops_before = g.num_ops().unwrap();
    let e = x.matmul(&w).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("matmul"), "{e}");
    let e = x.reshape([3, 3]).unwrap_err();
    assert!(e.message.contains("reshape"), "{e}");
    let e = x.logical_and(&x).unwrap_err();
    assert!(e.message.contains("logical_and"), "{e}");
    let e = x.max_pool2d(&Pool2d { count_boundary: Some(true), ..Pool2d::new([1, 1]) }).unwrap_err();
    assert!(e.message.contains("count_boundary"), "{e}");
    let e = g.concat(&[], 0).unwrap_err();
    assert!(e.message.contains("concat"), "{e}");
    let e = g.constant(&[1.0f32; 3], &[2, 2]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert_eq!(g.num_ops().unwrap(), ops_before, "failed helpers add nothing");

    // Values of two graphs do not mix.
    let other = Graph::new("other").unwrap();
    let z = other.add_input("z", DType::Float32, [2, 4]).unwrap();
    let e = x.add(&z).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("other"), "{e}");
    assert_eq!(z.graph().name().unwrap(), "other");
}

/// Compiles `g` on the CPU with no weights.
fn model(g: &Graph) -> Model {
    Context::new(1).unwrap().compile(g, &CompileOptions::default()).unwrap().init(&[]).unwrap()
}

/// nonzero's count is a symbol no input binds: each execution computes it and runs what
/// follows (here a gather_nd of the found elements) for that count, zero included.
#[test]
fn nonzero_count_is_decided_at_run_time() {
    let g = Graph::new("nonzero").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [2, 3]).unwrap();
        let indices = x.nonzero("count").unwrap();
        assert_eq!(indices.shape().unwrap(), vec![Dim::from("count"), Dim::from(2)]);
        let doubled = x.gather_nd(&indices, 0).unwrap().mul(&g.scalar(2.0f32).unwrap()).unwrap();
        g.set_named_outputs(&[("indices", &indices), ("doubled", &doubled)]).unwrap();
    }
    let m = model(&g);
    let some = Tensor::from_slice(&[0.0f32, 1.5, 0.0, -2.0, 0.0, 3.0], &[2, 3]).unwrap();
    let out = m.execute(&[&some]).unwrap();
    assert_eq!(out[0].shape().unwrap(), vec![3, 2]);
    assert_eq!(out[0].to_vec::<i64>().unwrap(), vec![0, 1, 1, 0, 1, 2]);
    close(&out[1].to_vec::<f32>().unwrap(), &[3.0, -4.0, 6.0]);

    let none = Tensor::from_slice(&[0.0f32; 6], &[2, 3]).unwrap();
    let out = m.execute(&[&none]).unwrap();
    assert_eq!(out[0].shape().unwrap(), vec![0, 2]);
    assert_eq!(out[1].shape().unwrap(), vec![0]);
    assert!(out[0].to_vec::<i64>().unwrap().is_empty());
}

/// masked_scatter fills the masked positions of the input, row-major, with the updates in
/// order; a mask broadcast along rows, and too few updates an execution error.
#[test]
fn masked_scatter_fills_masked_positions_in_order() {
    let g = Graph::new("masked_scatter").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [2, 3]).unwrap();
        let mask = g.add_input("mask", DType::Bool, [3]).unwrap();
        let updates = g.add_input("updates", DType::Float32, [Dim::from("u")]).unwrap();
        g.set_outputs(&[&x.masked_scatter(&mask, &updates, "filled").unwrap()]).unwrap();
    }
    let m = model(&g);
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let mask = Tensor::from_bytes(DType::Bool, &[3], &[1, 0, 1]).unwrap();
    let updates = Tensor::from_slice(&[-1.0f32, -2.0, -3.0, -4.0, -5.0], &[5]).unwrap();
    let out = m.execute(&[&x, &mask, &updates]).unwrap();
    assert_eq!(out[0].shape().unwrap(), vec![2, 3]);
    close(&out[0].to_vec::<f32>().unwrap(), &[-1.0, 2.0, -2.0, -3.0, 5.0, -4.0]);

    let three = Tensor::from_slice(&[-1.0f32, -2.0, -3.0], &[3]).unwrap();
    assert!(m.execute(&[&x, &mask, &three]).is_err(), "4 masked positions, 3 updates");
}

#[test]
fn bitwise_helpers_compute() {
    let g = Graph::new("bitwise").unwrap();
    {
        let a = g.add_input("a", DType::Int32, [4]).unwrap();
        let b = g.add_input("b", DType::Int32, [4]).unwrap();
        let f = g.add_input("f", DType::Float32, [2]).unwrap();
        let out = [a.bitwise_and(&b), a.bitwise_or(&b), a.bitwise_xor(&b), a.bitwise_not(), f.bitcast(DType::Int32)];
        let out: Vec<Value> = out.into_iter().map(|v| v.unwrap()).collect();
        g.set_outputs(&out.iter().collect::<Vec<_>>()).unwrap();
    }
    let a = Tensor::from_slice(&[12i32, 10, -1, 0], &[4]).unwrap();
    let b = Tensor::from_slice(&[10i32, 6, 5, 7], &[4]).unwrap();
    let f = Tensor::from_slice(&[1.0f32, -2.5], &[2]).unwrap();
    let out = model(&g).execute(&[&a, &b, &f]).unwrap();
    let i = |k: usize| out[k].to_vec::<i32>().unwrap();
    assert_eq!(i(0), [8, 2, 5, 0]);
    assert_eq!(i(1), [14, 14, -1, 7]);
    assert_eq!(i(2), [6, 12, -6, 7]);
    assert_eq!(i(3), [-13, -11, 0, -1]);
    assert_eq!(i(4), [1.0f32.to_bits() as i32, (-2.5f32).to_bits() as i32]);
    assert!(g.add_input("p", DType::Bool, [4]).unwrap().bitwise_not().is_err(), "bool takes logical_not");
}
