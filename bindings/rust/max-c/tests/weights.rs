//! Weights (ABI 1.3) through the safe API: registries from safetensors files written here,
//! from memory and from GGUF files; binding and reloading models from them; quantization
//! encodings, quantize, dequantize and qmatmul; and the errors of each.
use max_c::*;
use std::path::{Path, PathBuf};

const IN: usize = 4;
const HIDDEN: usize = 8;

/// A scratch directory per test, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("max_c_rs_weights_{test}_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes a safetensors file: an 8-byte little-endian header length, the JSON header
/// `{name: {dtype, shape, data_offsets}}` (padded with spaces so the data starts 8-byte
/// aligned), then the tensors' raw bytes back to back.
fn write_safetensors(path: &Path, tensors: &[(&str, &str, &[i64], Vec<u8>)]) {
    let mut entries = Vec::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            dims.join(","),
            data.len(),
            data.len() + bytes.len()
        ));
        data.extend_from_slice(bytes);
    }
    let mut header = format!("{{{}}}", entries.join(","));
    while (8 + header.len()) % 8 != 0 {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(path, file).unwrap();
}

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// y = relu(x @ w + b): x float32[batch, 4], w float32[4, 8], b float32[8].
fn mlp_graph() -> Graph {
    let g = Graph::new("mlp").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(IN)]).unwrap();
        let w = g.add_weight("w", DType::Float32, [IN, HIDDEN]).unwrap();
        let b = g.add_weight("b", DType::Float32, [HIDDEN]).unwrap();
        let y = x.matmul(&w).and_then(|h| h.add(&b)).and_then(|h| h.relu()).unwrap();
        g.set_named_outputs(&[("y", &y)]).unwrap();
    }
    g
}

fn reference(x: &[f32], w: &[f32], b: &[f32]) -> Vec<f32> {
    let rows = x.len() / IN;
    let mut y = vec![0f32; rows * HIDDEN];
    for r in 0..rows {
        for j in 0..HIDDEN {
            let dot: f32 = (0..IN).map(|k| x[r * IN + k] * w[k * HIDDEN + j]).sum();
            y[r * HIDDEN + j] = (dot + b[j]).max(0.0);
        }
    }
    y
}

fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol + tol * w.abs(), "element {i}: {g} vs {w}");
    }
}

fn compiled_mlp() -> CompiledModel {
    Context::new(1).unwrap().compile(&mlp_graph(), &CompileOptions::default()).unwrap()
}

fn run(model: &Model, x: &[f32]) -> Vec<f32> {
    let xt = Tensor::from_slice(x, &[(x.len() / IN) as i64, IN as i64]).unwrap();
    model.execute(&[&xt]).unwrap()[0].to_vec::<f32>().unwrap()
}

#[test]
fn safetensors_file_binds_and_reloads_a_model() {
    let dir = TempDir::new("safetensors");
    let path = dir.join("mlp.safetensors");
    let (w, b) = (values(IN * HIDDEN, 1), values(HIDDEN, 2));
    let extra = [7i64, 8, 9];
    write_safetensors(&path, &[
        ("w", "F32", &[IN as i64, HIDDEN as i64], f32_bytes(&w)),
        ("b", "F32", &[HIDDEN as i64], f32_bytes(&b)),
        ("unused", "I64", &[3], extra.iter().flat_map(|v| v.to_le_bytes()).collect()),
    ]);

    let weights = Weights::from_files([&path]).unwrap();
    assert_eq!(weights.len().unwrap(), 3);
    let mut names = weights.names().unwrap();
    names.sort();
    assert_eq!(names, ["b", "unused", "w"]);
    assert_eq!(
        weights.info("w").unwrap(),
        WeightInfo { dtype: DType::Float32, shape: vec![IN as i64, HIDDEN as i64], encoding: None }
    );
    assert_eq!(weights.info("unused").unwrap().dtype, DType::Int64);
    let wt = weights.tensor("w").unwrap();
    assert_eq!(wt.to_vec::<f32>().unwrap(), w);
    assert!(wt.is_read_only().unwrap(), "a file's tensor is a read-only view");
    assert_eq!(weights.tensor("unused").unwrap().to_vec::<i64>().unwrap(), extra);
    assert!(weights.contains("b").unwrap() && !weights.contains("c").unwrap());

    // Registry tensors the graph does not declare ("unused") are ignored.
    let model = compiled_mlp().init_from_weights(&weights).unwrap();
    let x = values(5 * IN, 3);
    assert_close(&run(&model, &x), &reference(&x, &w, &b), 1e-5);

    // Reload from a registry filled from memory: every declared weight it has changes.
    let (w2, b2) = (values(IN * HIDDEN, 4), values(HIDDEN, 5));
    let mut fresh = Weights::new().unwrap();
    fresh.add_slice("w", &w2, &[IN as i64, HIDDEN as i64]).unwrap();
    fresh.add_tensor("b", &Tensor::from_slice(&b2, &[HIDDEN as i64]).unwrap()).unwrap();
    model.reload_from_weights(&fresh).unwrap();
    assert_close(&run(&model, &x), &reference(&x, &w2, &b2), 1e-5);

    // A partial registry changes only what it has.
    let mut only_b = Weights::new().unwrap();
    only_b.add_slice("b", &b, &[HIDDEN as i64]).unwrap();
    model.reload_from_weights(&only_b).unwrap();
    assert_close(&run(&model, &x), &reference(&x, &w2, &b), 1e-5);

    // A wrong shape names the weight, and nothing changes (all or nothing).
    let mut wrong = Weights::new().unwrap();
    wrong.add_slice("b", &b2, &[HIDDEN as i64]).unwrap();
    wrong.add_slice("w", &w2, &[HIDDEN as i64, IN as i64]).unwrap();
    let e = model.reload_from_weights(&wrong).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("'w'") || e.message.contains("\"w\""), "{e}");
    assert_close(&run(&model, &x), &reference(&x, &w2, &b), 1e-5);
}

#[test]
fn registry_errors_name_what_is_wrong() {
    let dir = TempDir::new("errors");
    let mut weights = Weights::new().unwrap();
    assert!(weights.is_empty().unwrap());

    let missing = dir.join("absent.safetensors");
    let e = weights.add_file(&missing).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains("absent.safetensors"), "{e}");

    // A file cut short in its data: DATA_LOSS naming the file, and nothing is added.
    let path = dir.join("short.safetensors");
    write_safetensors(&path, &[("a", "F32", &[2], f32_bytes(&[1.0, 2.0])), ("t", "F32", &[4], f32_bytes(&[1.0; 4]))]);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 6]).unwrap();
    let e = weights.add_file(&path).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_DATA_LOSS, "{e}");
    assert!(e.message.contains("short.safetensors"), "{e}");
    assert!(weights.is_empty().unwrap(), "a failed add_file adds nothing");

    // Not a weights file at all.
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, b"this is not a weights file").unwrap();
    assert!(weights.add_file(&junk).is_err());

    weights.add_slice("a", &[1.0f32, 2.0], &[2]).unwrap();
    let e = weights.add_slice("a", &[3.0f32], &[1]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_ALREADY_EXISTS, "{e}");
    assert!(e.message.contains('a'), "{e}");
    let e = weights.add_slice("", &[3.0f32], &[1]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    let e = weights.add_slice("nul\0name", &[3.0f32], &[1]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("NUL"), "{e}");
    let e = weights.add_slice("short", &[3.0f32], &[2]).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");

    let e = weights.info("nope").unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains("nope"), "{e}");
    let e = weights.tensor("nope").unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert_eq!(weights.names().unwrap(), ["a"]);

    // A float32 tensor cannot be added as quantized.
    let e = weights.add_quantized("q", &Tensor::from_slice(&[0f32; 32], &[1, 32]).unwrap(), QuantEncoding::Q8_0).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
}

#[test]
fn binding_errors_name_the_weight() {
    let compiled = compiled_mlp();
    let mut weights = Weights::new().unwrap();
    weights.add_slice("w", &values(IN * HIDDEN, 6), &[IN as i64, HIDDEN as i64]).unwrap();
    let e = compiled.init_from_weights(&weights).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains('b'), "{e}");

    weights.add_slice("b", &[0f64; HIDDEN], &[HIDDEN as i64]).unwrap();
    let e = compiled.init_from_weights(&weights).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("float64"), "{e}");
}

#[test]
fn encodings_state_their_blocks() {
    let expected = [
        (QuantEncoding::Q4_0, "q4_0", 32, 18),
        (QuantEncoding::Q4_K, "q4_k", 256, 144),
        (QuantEncoding::Q5_K, "q5_k", 256, 176),
        (QuantEncoding::Q6_K, "q6_k", 256, 210),
        (QuantEncoding::Q8_0, "q8_0", 32, 34),
    ];
    for (e, name, elements, bytes) in expected {
        assert_eq!(e.name(), name);
        assert_eq!(e.to_string(), name);
        assert_eq!(QuantEncoding::from_name(name).unwrap(), e);
        assert_eq!(QuantEncoding::from_name(&name.to_uppercase()).unwrap(), e);
        assert_eq!(QuantEncoding::from_raw(e.raw()), Some(e));
        assert_eq!(e.block().unwrap(), BlockParameters { elements_per_block: elements, block_bytes: bytes });
        assert_eq!(e.row_bytes(elements * 3).unwrap(), bytes * 3);
        let err = e.row_bytes(elements + 1).unwrap_err();
        assert_eq!(err.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{err}");
    }
    assert_eq!(QuantEncoding::from_raw(ffi::MAX_QUANT_NONE), None);
    let e = QuantEncoding::from_name("q3_k").unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT);
    assert!(e.message.contains("q3_k") && e.message.contains("q4_k"), "{e}");
}

#[test]
fn quantize_errors() {
    let ints = Tensor::from_slice(&[1i32; 32], &[1, 32]).unwrap();
    let e = ints.quantize(QuantEncoding::Q8_0).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    let ragged = Tensor::from_slice(&[1f32; 40], &[1, 40]).unwrap();
    let e = ragged.quantize(QuantEncoding::Q8_0).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("40"), "{e}");
    let scalar = Tensor::from_slice(&[1f32], &[]).unwrap();
    assert_eq!(scalar.quantize(QuantEncoding::Q4_0).unwrap_err().code, ffi::MAX_STATUS_INVALID_ARGUMENT);
}

const N: usize = 6;
const K: usize = 64;

/// dequantize(q) and x @ dequantize(q)^T through qmatmul, for a quantized weight "q".
fn quantized_graph(encoding: QuantEncoding, row_bytes: usize) -> Graph {
    let g = Graph::new("quantized").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("m"), Dim::from(K)]).unwrap();
        let q = g.add_weight("q", DType::UInt8, [N, row_bytes]).unwrap();
        let deq = q.dequantize(encoding).unwrap();
        let y = x.qmatmul(&q, encoding).unwrap();
        g.set_named_outputs(&[("deq", &deq), ("y", &y)]).unwrap();
    }
    g
}

#[test]
fn gguf_round_trip_keeps_tensors_and_encodings() {
    let dir = TempDir::new("gguf");
    let dense = values(N * K, 7);
    let enc = QuantEncoding::Q8_0;
    let q = Tensor::from_slice(&dense, &[N as i64, K as i64]).unwrap().quantize(enc).unwrap();
    let row_bytes = enc.row_bytes(K).unwrap();
    assert_eq!(q.dtype().unwrap(), DType::UInt8);
    assert_eq!(q.shape().unwrap(), vec![N as i64, row_bytes as i64]);

    let mut weights = Weights::new().unwrap();
    weights.add_quantized("q", &q, enc).unwrap();
    weights.add_slice("bias", &[0.25f32, -0.5, 1.0], &[3]).unwrap();
    weights.add_slice("ids", &[3i32, -1, 4, 1], &[2, 2]).unwrap();
    let path = dir.join("round_trip.gguf");
    weights.save_gguf(&path, Some("rust test")).unwrap();

    let loaded = Weights::from_files([&path]).unwrap();
    assert_eq!(loaded.names().unwrap(), ["q", "bias", "ids"], "GGUF keeps the order");
    for name in ["q", "bias", "ids"] {
        assert_eq!(loaded.info(name).unwrap(), weights.info(name).unwrap(), "{name}");
        assert_eq!(loaded.tensor(name).unwrap().to_bytes().unwrap(), weights.tensor(name).unwrap().to_bytes().unwrap(), "{name}");
    }
    assert_eq!(loaded.info("q").unwrap().encoding, Some(enc));
    assert_eq!(loaded.tensor("ids").unwrap().to_vec::<i32>().unwrap(), vec![3, -1, 4, 1]);

    // The loaded quantized weight feeds dequantize and qmatmul.
    let model = Context::new(1).unwrap().compile(&quantized_graph(enc, row_bytes), &CompileOptions::default()).unwrap().init_from_weights(&loaded).unwrap();
    let x = values(2 * K, 8);
    let out = model.execute(&[&Tensor::from_slice(&x, &[2, K as i64]).unwrap()]).unwrap();
    let deq = out[0].to_vec::<f32>().unwrap();
    assert_eq!(out[0].shape().unwrap(), vec![N as i64, K as i64]);
    // Q8_0 keeps each value within half a step of its block's scale (max |v| / 127).
    assert_close(&deq, &dense, 1.0 / 127.0);
    let y = out[1].to_vec::<f32>().unwrap();
    assert_eq!(out[1].shape().unwrap(), vec![2, N as i64]);
    for r in 0..2 {
        for n in 0..N {
            let want: f32 = (0..K).map(|k| x[r * K + k] * deq[n * K + k]).sum();
            let got = y[r * N + n];
            // qmatmul may quantize the activations too: a loose bound on a sum of 64 terms.
            assert!((got - want).abs() <= 0.05 * (1.0 + want.abs()), "y[{r}, {n}]: {got} vs {want}");
        }
    }

    let e = weights.save_gguf(dir.join("no/such/dir/x.gguf"), None).unwrap_err();
    assert!(e.message.contains("x.gguf"), "{e}");
    let mut unsigned = Weights::new().unwrap();
    unsigned.add_slice("u", &[1u32, 2], &[2]).unwrap();
    let e = unsigned.save_gguf(dir.join("u.gguf"), None).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
}

#[test]
fn one_registry_binds_models_from_many_threads() {
    let (w, b) = (values(IN * HIDDEN, 9), values(HIDDEN, 10));
    let mut weights = Weights::new().unwrap();
    weights.add_slice("w", &w, &[IN as i64, HIDDEN as i64]).unwrap();
    weights.add_slice("b", &b, &[HIDDEN as i64]).unwrap();
    let compiled = compiled_mlp();
    let x = values(3 * IN, 11);
    let want = reference(&x, &w, &b);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let model = compiled.init_from_weights(&weights).unwrap();
                assert_close(&run(&model, &x), &want, 1e-5);
            });
        }
    });
}
