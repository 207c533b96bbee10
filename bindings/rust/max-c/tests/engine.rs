//! The engine through the safe API: compile, bind weights, execute, metadata, named inputs,
//! reload, input errors, concurrent executes on one model, and device graphs (capture,
//! replay, debug_verify_replay; on the CPU the captured plan is rerun).
use max_c::*;

const IN: usize = 4;
const HIDDEN: usize = 8;

/// y = relu(x @ w + b) with x float32[batch, 4] and the weights w float32[4, 8], b float32[8].
fn mlp_graph() -> Graph {
    let g = Graph::new("mlp").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(IN)]).unwrap();
        let w = g.add_weight("w", DType::Float32, [IN, HIDDEN]).unwrap();
        let b = g.add_weight("b", DType::Float32, [HIDDEN]).unwrap();
        let h = g.add_op("matmul", &[&x, &w], &Attrs::new()).unwrap();
        let h = g.add_op("add", &[&h[0], &b], &Attrs::new()).unwrap();
        let y = g.add_op("relu", &[&h[0]], &Attrs::new()).unwrap();
        g.set_named_outputs(&[("y", &y[0])]).unwrap();
    }
    g
}

/// Deterministic values in [-1, 1) (a small LCG: the tests need no rand crate).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

struct Weights {
    w: Vec<f32>,
    b: Vec<f32>,
}

impl Weights {
    fn new(seed: u64) -> Weights {
        Weights { w: values(IN * HIDDEN, seed), b: values(HIDDEN, seed + 100) }
    }
    fn tensors(&self) -> (Tensor, Tensor) {
        (Tensor::from_slice(&self.w, &[IN as i64, HIDDEN as i64]).unwrap(), Tensor::from_slice(&self.b, &[HIDDEN as i64]).unwrap())
    }
    /// relu(x @ w + b) computed here, row by row.
    fn reference(&self, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / IN;
        let mut y = vec![0f32; rows * HIDDEN];
        for r in 0..rows {
            for j in 0..HIDDEN {
                let dot: f32 = (0..IN).map(|k| x[r * IN + k] * self.w[k * HIDDEN + j]).sum();
                y[r * HIDDEN + j] = (dot + self.b[j]).max(0.0);
            }
        }
        y
    }
}

fn batch(rows: usize, seed: u64) -> (Vec<f32>, Tensor) {
    let x = values(rows * IN, seed);
    let t = Tensor::from_slice(&x, &[rows as i64, IN as i64]).unwrap();
    (x, t)
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5 + 1e-5 * w.abs(), "element {i}: {g} vs {w}");
    }
}

fn model_with(weights: &Weights, options: &CompileOptions) -> Model {
    let ctx = Context::new(2).unwrap();
    let compiled = ctx.compile(&mlp_graph(), options).unwrap();
    let (w, b) = weights.tensors();
    compiled.init(&[("w", &w), ("b", &b)]).unwrap()
}

#[test]
fn compile_and_execute_symbolic_batches() {
    let weights = Weights::new(1);
    let model = model_with(&weights, &CompileOptions::default());
    for (rows, seed) in [(1, 10), (7, 11), (64, 12), (7, 13)] {
        let (x, xt) = batch(rows, seed);
        let out = model.execute(&[&xt]).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].shape().unwrap(), vec![rows as i64, HIDDEN as i64]);
        assert_eq!(out[0].dtype().unwrap(), DType::Float32);
        assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&x));
        assert_eq!(xt.to_vec::<f32>().unwrap(), x, "inputs are only read");
    }
}

#[test]
fn compile_options_keep_results() {
    let weights = Weights::new(2);
    let fused = model_with(&weights, &CompileOptions::default());
    let plain = model_with(&weights, &CompileOptions::new().fusion(false).constant_folding(false).fold_limit_bytes(0).plan_cache_capacity(1));
    for rows in [3, 5, 3] {
        let (_, xt) = batch(rows, rows as u64);
        let a = fused.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap();
        let b = plain.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap();
        assert_close(&b, &a);
    }
    // A capacity of 0 plans is refused when compiling.
    let ctx = Context::new(1).unwrap();
    let e = ctx.compile(&mlp_graph(), &CompileOptions::new().plan_cache_capacity(0)).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
}

#[test]
fn metadata() {
    let ctx = Context::new(1).unwrap();
    let compiled = ctx.compile(&mlp_graph(), &CompileOptions::default()).unwrap();
    let inputs = compiled.inputs().unwrap();
    assert_eq!(inputs.len(), 1);
    let x = &inputs[0];
    assert_eq!(x.name, "x");
    assert_eq!(x.dtype, DType::Float32);
    assert_eq!(x.dims, vec![Dim::Expr("batch".into()), Dim::Static(4)]);
    assert_eq!(x.shape(), vec![None, Some(4)], "a symbolic dim is unknown");
    assert_eq!(x.dim_names(), vec![Some("batch"), None]);
    assert_eq!(x.rank(), 2);
    assert_eq!(x.device, Device::cpu().unwrap());
    assert_eq!(x.to_string(), "x: [batch, 4] float32");

    let outputs = compiled.outputs().unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].name, "y");
    assert_eq!(outputs[0].shape(), vec![None, Some(HIDDEN as i64)]);
    assert_eq!(outputs[0].dim_names(), vec![Some("batch"), None]);

    let mut weights: Vec<(String, Vec<Option<i64>>)> =
        compiled.weights().unwrap().into_iter().map(|s| (s.name.clone(), s.shape())).collect();
    weights.sort();
    assert_eq!(weights, vec![("b".into(), vec![Some(8)]), ("w".into(), vec![Some(4), Some(8)])]);

    // The model reports its compiled model's signature.
    let w = Weights::new(3);
    let (wt, bt) = w.tensors();
    let model = Model::new(&compiled, &[("b", &bt), ("w", &wt)]).unwrap();
    assert_eq!(model.input_metadata().unwrap(), inputs);
    assert_eq!(model.output_metadata().unwrap(), outputs);
    assert_eq!(model.compiled_model().unwrap().inputs().unwrap(), inputs);
    assert!(format!("{model:?}").contains("x: [batch, 4] float32"), "{model:?}");
}

/// x + y with x, y float32[batch, 2]: two inputs sharing the symbol batch.
fn pair_model() -> Model {
    let g = Graph::new("pair").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(2)]).unwrap();
        let y = g.add_input("y", DType::Float32, [Dim::from("batch"), Dim::from(2)]).unwrap();
        let s = g.add_op("add", &[&x, &y], &Attrs::new()).unwrap();
        g.set_outputs(&[&s[0]]).unwrap();
    }
    Context::new(1).unwrap().compile(&g, &CompileOptions::default()).unwrap().init(&[]).unwrap()
}

#[test]
fn execute_by_name() {
    let model = pair_model();
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap();
    let b = Tensor::from_slice(&[10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0], &[3, 2]).unwrap();
    let want = vec![11.0f32, 22.0, 33.0, 44.0, 55.0, 66.0];
    for out in [
        model.execute(&[&a, &b]).unwrap(),
        model.execute_named(&[("x", &a), ("y", &b)]).unwrap(),
        model.execute_named(&[("y", &b), ("x", &a)]).unwrap(),
    ] {
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    }
    let e = model.execute_named(&[("x", &a), ("nope", &b)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains("nope"), "{e}");
    let e = model.execute_named(&[("x", &a)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("'y'"), "{e}");
    let e = model.execute_named(&[("x", &a), ("x", &a), ("y", &b)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert_eq!(model.execute(&[&a, &b]).unwrap()[0].to_vec::<f32>().unwrap(), want);
}

#[test]
fn reload_changes_results() {
    let (first, second) = (Weights::new(4), Weights::new(5));
    let model = model_with(&first, &CompileOptions::default());
    let (x, xt) = batch(4, 20);
    let run = |m: &Model| m.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap();
    let before = run(&model);
    assert_close(&before, &first.reference(&x));

    let (w2, b2) = second.tensors();
    model.reload(&[("w", &w2), ("b", &b2)]).unwrap();
    let after = run(&model);
    assert_close(&after, &second.reference(&x));
    assert_ne!(before, after);

    // Only the named weights change.
    let (_, b1) = first.tensors();
    model.reload(&[("b", &b1)]).unwrap();
    let mixed = Weights { w: second.w.clone(), b: first.b.clone() };
    assert_close(&run(&model), &mixed.reference(&x));

    // A failing reload changes nothing.
    let wrong = Tensor::from_slice(&[0f32; 32], &[8, 4]).unwrap();
    let e = model.reload(&[("b", &b2), ("w", &wrong)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("'w'"), "{e}");
    assert_close(&run(&model), &mixed.reference(&x));
    let e = model.reload(&[("nope", &b2)]).unwrap_err();
    assert!(e.message.contains("nope"), "{e}");
}

#[test]
fn init_errors_name_the_weight() {
    let ctx = Context::new(1).unwrap();
    let compiled = ctx.compile(&mlp_graph(), &CompileOptions::default()).unwrap();
    let (w, b) = Weights::new(6).tensors();
    let e = compiled.init(&[("w", &w)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains("'b'"), "{e}");
    let extra = Tensor::from_slice(&[0f32; 3], &[3]).unwrap();
    let e = compiled.init(&[("w", &w), ("b", &b), ("extra", &extra)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("extra"), "{e}");
    let b64 = Tensor::from_slice(&[0f64; 8], &[8]).unwrap();
    let e = compiled.init(&[("w", &w), ("b", &b64)]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("float64"), "{e}");
    assert!(compiled.init(&[("w", &w), ("b", &b)]).is_ok());
}

#[test]
fn bad_inputs_name_the_input_and_model_stays_usable() {
    let weights = Weights::new(7);
    let model = model_with(&weights, &CompileOptions::default());
    let (x, good) = batch(2, 30);
    let want = weights.reference(&x);
    let wrong_dtype = Tensor::from_slice(&[0f64; 8], &[2, 4]).unwrap();
    let wrong_rank = Tensor::from_slice(&[0f32; 8], &[8]).unwrap();
    let wrong_dim = Tensor::from_slice(&[0f32; 10], &[2, 5]).unwrap();
    let cases: [(&str, Vec<&Tensor>, &str); 5] = [
        ("dtype", vec![&wrong_dtype], "float64"),
        ("rank", vec![&wrong_rank], "rank"),
        ("static dim", vec![&wrong_dim], "5"),
        ("too few", vec![], "1 input"),
        ("too many", vec![&good, &good], "got 2"),
    ];
    for (what, inputs, detail) in cases {
        let e = model.execute(&inputs).unwrap_err();
        assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{what}: {e}");
        assert!(e.message.contains("'x'") || e.message.contains("(x)"), "{what}: the message names the input: {e}");
        assert!(e.message.contains(detail), "{what}: {e}");
        assert_close(&model.execute(&[&good]).unwrap()[0].to_vec::<f32>().unwrap(), &want);
    }
}

#[test]
fn compile_errors() {
    let ctx = Context::new(1).unwrap();
    let g = Graph::new("no_outputs").unwrap();
    g.add_input("x", DType::Float32, [2]).unwrap();
    let e = ctx.compile(&g, &CompileOptions::default()).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    let e = ctx.compile_file("/nonexistent/absent.maxg", &CompileOptions::default()).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains("absent.maxg"), "{e}");
}

#[test]
fn compile_file_round_trip() {
    let dir = std::env::temp_dir().join(format!("max_c_rs_engine_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mlp.maxg");
    mlp_graph().save(&path).unwrap();
    let ctx = Context::new(1).unwrap();
    let compiled = ctx.compile_file(&path, &CompileOptions::default()).unwrap();
    assert_eq!(compiled.inputs().unwrap()[0].dim_names(), vec![Some("batch"), None]);
    let weights = Weights::new(8);
    let (w, b) = weights.tensors();
    let model = compiled.init(&[("w", &w), ("b", &b)]).unwrap();
    let (x, xt) = batch(3, 40);
    assert_close(&model.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap(), &weights.reference(&x));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn file_device_places_a_model_file() {
    // ABI 1.5: CompileOptions::file_device moves a MAXG file wholly on the host onto that
    // device; a file that already places a value elsewhere is refused, naming the device.
    let dir = std::env::temp_dir().join(format!("max_c_rs_engine_placed_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let host_path = dir.join("mlp.maxg");
    mlp_graph().save(&host_path).unwrap();
    let gpu_path = dir.join("on_gpu.maxg");
    {
        // Building (and saving) a GPU graph needs no GPU.
        let g = Graph::new("on_gpu").unwrap();
        let x = g.add_input_on("x", DType::Float32, [2], DeviceRef::Gpu(0)).unwrap();
        let y = g.add_op("add", &[&x, &x], &Attrs::new()).unwrap();
        g.set_outputs(&[&y[0]]).unwrap();
        g.save(&gpu_path).unwrap();
    }

    let ctx = Context::new(1).unwrap();
    let cpu = Device::cpu().unwrap();
    let options = CompileOptions::default().file_device(&cpu);
    let compiled = ctx.compile_file(&host_path, &options).unwrap();
    assert!(compiled.inputs().unwrap()[0].device.is_host().unwrap());
    let weights = Weights::new(11);
    let (w, b) = weights.tensors();
    let model = compiled.init(&[("w", &w), ("b", &b)]).unwrap();
    let (x, xt) = batch(2, 60);
    assert_close(&model.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap(), &weights.reference(&x));

    let e = ctx.compile_file(&gpu_path, &options).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_FAILED_PRECONDITION, "{e}");
    assert!(e.message.contains("already placed on gpu:0"), "{e}");
    assert_eq!(e.code_name(), "FAILED_PRECONDITION");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn concurrent_executes_on_one_model() {
    const THREADS: usize = 8;
    const RUNS: usize = 200;
    let weights = Weights::new(9);
    let model = model_with(&weights, &CompileOptions::default());
    // Each thread its own batch size, so plans for several shapes are in use at once.
    let inputs: Vec<Tensor> = (0..THREADS).map(|t| batch(1 + t * 3, 50 + t as u64).1).collect();
    let expected: Vec<Vec<f32>> =
        inputs.iter().map(|x| model.execute(&[x]).unwrap()[0].to_vec::<f32>().unwrap()).collect();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (model, x, want) = (&model, &inputs[t], &expected[t]);
            s.spawn(move || {
                for run in 0..RUNS {
                    let got = model.execute(&[x]).unwrap()[0].to_vec::<f32>().unwrap();
                    assert_eq!(&got, want, "thread {t} run {run}: results differ");
                }
            });
        }
    });
    // A Model moved to another thread works too (Send), and clones share it.
    let clone = model.clone();
    let x = inputs[0].clone();
    let got = std::thread::spawn(move || clone.execute(&[&x]).unwrap()[0].to_vec::<f32>().unwrap()).join().unwrap();
    assert_eq!(got, expected[0]);
}

#[test]
fn reload_while_executing() {
    // Executes running beside reloads see either the old or the new weights, never a mix.
    let (first, second) = (Weights::new(21), Weights::new(22));
    let model = model_with(&first, &CompileOptions::default());
    let (x, xt) = batch(5, 23);
    let (old, fresh) = (first.reference(&x), second.reference(&x));
    let near = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(g, w)| (g - w).abs() <= 1e-5 + 1e-5 * w.abs());
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let got = model.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap();
                    assert!(near(&got, &old) || near(&got, &fresh), "a result from neither set of weights");
                }
            });
        }
        for i in 0..20 {
            let (w, b) = if i % 2 == 0 { second.tensors() } else { first.tensors() };
            model.reload(&[("w", &w), ("b", &b)]).unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

// ---- capture and replay (MAX's device graphs; on the CPU, the captured plan) ----------------

#[test]
fn replay_rewrites_the_captured_outputs() {
    let weights = Weights::new(31);
    let model = model_with(&weights, &CompileOptions::default());
    let ((a, at), (b, bt)) = (batch(3, 4), batch(3, 5));
    let out = model.capture(&[11], &[&at]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].shape().unwrap(), vec![3, HIDDEN as i64]);
    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&a));
    assert_eq!(out[0].to_vec::<f32>().unwrap(), model.execute(&[&at]).unwrap()[0].to_vec::<f32>().unwrap(), "capture gives execute's result");

    // The same tensor, rewritten in place: no new outputs come back.
    model.replay(&[11], &[&bt]).unwrap();
    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&b));
    model.debug_verify_replay(&[11], &[&bt]).unwrap();
    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&b)); // verify leaves them be
    model.replay(&[11], &[&at]).unwrap();
    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&a));
    assert_eq!(at.to_vec::<f32>().unwrap(), a, "inputs are only read");

    // A clone shares the model, and so its graphs; any u64 is a key.
    let clone = model.clone();
    clone.replay(&[11], &[&bt]).unwrap();
    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&b));
    let top = clone.capture(&[u64::MAX], &[&at]).unwrap();
    clone.replay(&[u64::MAX], &[&bt]).unwrap();
    assert_close(&top[0].to_vec::<f32>().unwrap(), &weights.reference(&b));

    // Capturing again under a key replaces its graph: new outputs; the old keep their values.
    let kept = out[0].to_vec::<f32>().unwrap();
    let (c, ct) = batch(3, 6);
    let again = model.capture(&[11], &[&ct]).unwrap();
    model.replay(&[11], &[&at]).unwrap();
    assert_close(&again[0].to_vec::<f32>().unwrap(), &weights.reference(&a));
    assert_eq!(out[0].to_vec::<f32>().unwrap(), kept);
    assert_ne!(weights.reference(&c), weights.reference(&a));
    drop(out);
    drop(again); // the graph holds its own reference to its outputs
    model.replay(&[11], &[&bt]).unwrap();
}

#[test]
fn graph_calls_check_keys_and_inputs() {
    let weights = Weights::new(32);
    let model = model_with(&weights, &CompileOptions::default());
    let (x, xt) = batch(2, 7);

    // One key per device, and the model runs on one.
    for keys in [&[1u64, 1][..], &[1, 2], &[]] {
        let e = model.capture(keys, &[&xt]).unwrap_err();
        assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{keys:?}: {e}");
        assert!(e.message.contains("one device"), "{keys:?}: {e}");
        let e = model.replay(keys, &[&xt]).unwrap_err();
        assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{keys:?}: {e}");
    }

    // Nothing captured under the key: FAILED_PRECONDITION naming it.
    let e = model.replay(&[12345], &[&xt]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_FAILED_PRECONDITION, "{e}");
    assert!(e.message.contains("nothing is captured under graph key 12345"), "{e}");
    let e = model.debug_verify_replay(&[12345], &[&xt]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_FAILED_PRECONDITION, "{e}");
    assert!(e.message.contains("nothing is captured") && e.message.contains("12345"), "{e}");
    let e = model.replay(&[u64::MAX], &[&xt]).unwrap_err();
    assert!(e.message.contains(&u64::MAX.to_string()), "the key is printed unsigned: {e}");

    // Bad inputs to capture are execute's errors, and record nothing.
    let f64s = Tensor::from_slice(&[0f64; 8], &[2, 4]).unwrap();
    let e = model.capture(&[12], &[&f64s]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("float64"), "{e}");
    let e = model.capture(&[12], &[]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert_eq!(model.replay(&[12], &[&xt]).unwrap_err().code, ffi::MAX_STATUS_FAILED_PRECONDITION);

    // Replays need the captured shapes; a refused one leaves the outputs as they were.
    let out = model.capture(&[12], &[&xt]).unwrap();
    let before = out[0].to_vec::<f32>().unwrap();
    assert_close(&before, &weights.reference(&x));
    let (_, five) = batch(5, 8);
    let e = model.replay(&[12], &[&five]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("batch=5 but graph key 12 was captured with batch=2"), "{e}");
    assert_eq!(out[0].to_vec::<f32>().unwrap(), before);
    let e = model.debug_verify_replay(&[12], &[&five]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    let e = model.replay(&[12], &[&f64s]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    let e = model.replay(&[12], &[&xt, &xt]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert_eq!(out[0].to_vec::<f32>().unwrap(), before);
    model.replay(&[12], &[&xt]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), before);
    model.debug_verify_replay(&[12], &[&xt]).unwrap();
    // The model still executes any batch.
    let (y, yt) = batch(5, 9);
    assert_close(&model.execute(&[&yt]).unwrap()[0].to_vec::<f32>().unwrap(), &weights.reference(&y));
}

#[test]
fn replays_of_one_key_from_many_threads() {
    // Replays take turns; each thread replays, then reads under the same lock, so no read
    // overlaps another thread's rewrite (the contract of the captured outputs).
    let weights = Weights::new(33);
    let model = model_with(&weights, &CompileOptions::default());
    let (x0, x0t) = batch(4, 60);
    let out = model.capture(&[5], &[&x0t]).unwrap();
    let lock = std::sync::Mutex::new(());
    let batches: Vec<(Vec<f32>, Tensor)> = (0..4).map(|t| batch(4, 61 + t)).collect();
    std::thread::scope(|s| {
        for (x, xt) in &batches {
            let (model, out, lock, weights) = (&model, &out, &lock, &weights);
            s.spawn(move || {
                for _ in 0..50 {
                    let _held = lock.lock().unwrap();
                    model.replay(&[5], &[xt]).unwrap();
                    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(x));
                }
            });
        }
    });
    model.replay(&[5], &[&x0t]).unwrap();
    assert_close(&out[0].to_vec::<f32>().unwrap(), &weights.reference(&x0));
}
