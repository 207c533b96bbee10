//! Compiling ONNX files: a tiny model written here byte by byte (no Python, no protobuf
//! crate), compiled through `Context::compile_file` and run, with its initializers as the
//! model's own weights; overriding them; and the errors of bad files.
use max_c::*;
use std::path::{Path, PathBuf};

// ---- a minimal protobuf writer ------------------------------------------------------------

const VARINT: u64 = 0;
const LEN: u64 = 2;

/// One protobuf message under construction; fields are appended in call order.
#[derive(Default)]
struct Proto(Vec<u8>);

impl Proto {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn key(&mut self, field: u64, wire_type: u64) {
        self.varint(field << 3 | wire_type);
    }
    /// An int32/int64/enum field (negative values as 10-byte two's complement, as protobuf
    /// encodes them).
    fn int(mut self, field: u64, v: i64) -> Self {
        self.key(field, VARINT);
        self.varint(v as u64);
        self
    }
    fn bytes(mut self, field: u64, b: &[u8]) -> Self {
        self.key(field, LEN);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn string(self, field: u64, s: &str) -> Self {
        self.bytes(field, s.as_bytes())
    }
    fn message(self, field: u64, m: Proto) -> Self {
        self.bytes(field, &m.0)
    }
    /// A packed repeated float field.
    fn floats(self, field: u64, v: &[f32]) -> Self {
        self.bytes(field, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
    }
}

// ---- ONNX messages (field numbers from onnx.proto) ----------------------------------------

const ONNX_FLOAT: i64 = 1; // TensorProto.DataType.FLOAT
const ATTR_INT: i64 = 2; // AttributeProto.AttributeType.INT

/// A dim of a ValueInfoProto: a size or a symbolic name.
enum OnnxDim {
    Size(i64),
    Param(&'static str),
}

/// ValueInfoProto{name, type: TypeProto{tensor_type{elem_type FLOAT, shape}}}.
fn value_info(name: &str, dims: &[OnnxDim]) -> Proto {
    let shape = dims.iter().fold(Proto::default(), |shape, d| {
        let dim = match d {
            OnnxDim::Size(n) => Proto::default().int(1, *n),
            OnnxDim::Param(p) => Proto::default().string(2, p),
        };
        shape.message(1, dim)
    });
    let tensor_type = Proto::default().int(1, ONNX_FLOAT).message(2, shape);
    Proto::default().string(1, name).message(2, Proto::default().message(1, tensor_type))
}

/// A float TensorProto{dims, data_type, name}, its data as raw_data (field 9) or as
/// float_data (field 4): the importer must read both.
fn initializer(name: &str, dims: &[i64], data: &[f32], raw: bool) -> Proto {
    let t = dims.iter().fold(Proto::default(), |t, d| t.int(1, *d)).int(2, ONNX_FLOAT).string(8, name);
    if raw {
        t.bytes(9, &data.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
    } else {
        t.floats(4, data)
    }
}

/// NodeProto{input..., output..., name, op_type, attribute: INT attrs}.
fn node(op_type: &str, inputs: &[&str], outputs: &[&str], int_attrs: &[(&str, i64)]) -> Proto {
    let n = inputs.iter().fold(Proto::default(), |n, i| n.string(1, i));
    let n = outputs.iter().fold(n, |n, o| n.string(2, o));
    let n = n.string(3, &format!("{op_type}_node")).string(4, op_type);
    int_attrs.iter().fold(n, |n, (name, v)| {
        n.message(5, Proto::default().string(1, name).int(3, *v).int(20, ATTR_INT))
    })
}

/// ModelProto{ir_version 8, opset_import{"" 13}, producer_name, graph}.
fn model(graph: Proto) -> Vec<u8> {
    let opset = Proto::default().string(1, "").int(2, 13);
    Proto::default().int(1, 8).string(2, "max-c rust test").message(7, graph).message(8, opset).0
}

const W: [f32; 6] = [0.5, -1.0, 2.0, 1.5, -0.25, 0.75]; // [3, 2]
const B: [f32; 2] = [0.1, -0.2];

/// Y = MatMul(X, W) + B and P = Softmax(Y, axis=1), X float[batch, 3]; W as raw_data and B
/// as float_data.
fn tiny_model(op_type: &str) -> Vec<u8> {
    let graph = Proto::default()
        .message(1, node(op_type, &["X", "W"], &["XW"], &[]))
        .message(1, node("Add", &["XW", "B"], &["Y"], &[]))
        .message(1, node("Softmax", &["Y"], &["P"], &[("axis", 1)]))
        .string(2, "tiny")
        .message(5, initializer("W", &[3, 2], &W, true))
        .message(5, initializer("B", &[2], &B, false))
        .message(11, value_info("X", &[OnnxDim::Param("batch"), OnnxDim::Size(3)]))
        .message(12, value_info("Y", &[OnnxDim::Param("batch"), OnnxDim::Size(2)]))
        .message(12, value_info("P", &[OnnxDim::Param("batch"), OnnxDim::Size(2)]));
    model(graph)
}

// ---- the tests ----------------------------------------------------------------------------

struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("max_c_rs_{}_{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

/// (Y, P) for X [rows, 3] with weights w [3, 2] and b [2].
fn reference(x: &[f32], w: &[f32], b: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut y = Vec::new();
    let mut p = Vec::new();
    for row in x.chunks(3) {
        let r: Vec<f32> = (0..2).map(|j| (0..3).map(|k| row[k] * w[k * 2 + j]).sum::<f32>() + b[j]).collect();
        let m = r[0].max(r[1]);
        let s: f32 = r.iter().map(|v| (v - m).exp()).sum();
        p.extend(r.iter().map(|v| (v - m).exp() / s));
        y.extend(r);
    }
    (y, p)
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{got:?} vs {want:?}");
    }
}

fn run(model: &Model, x: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let xt = Tensor::from_slice(x, &[(x.len() / 3) as i64, 3]).unwrap();
    let out = model.execute(&[&xt]).unwrap();
    assert_eq!(out.len(), 2);
    (out[0].to_vec::<f32>().unwrap(), out[1].to_vec::<f32>().unwrap())
}

const X: [f32; 9] = [1.0, 2.0, 3.0, -1.0, 0.5, 0.25, 0.0, -2.0, 4.0];

#[test]
fn onnx_file_compiles_and_runs_with_its_initializers() {
    let file = TempFile::new("tiny.onnx", &tiny_model("MatMul"));
    let ctx = Context::new(1).unwrap();
    let compiled = ctx.compile_file(file.path(), &CompileOptions::default()).unwrap();
    let inputs = compiled.inputs().unwrap();
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].name, "X");
    assert_eq!(inputs[0].dims, vec![Dim::Expr("batch".into()), Dim::Static(3)]);
    let outputs: Vec<String> = compiled.outputs().unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(outputs, ["Y", "P"]);

    // The initializers come with the file: nothing needs binding.
    let model = compiled.init(&[]).unwrap();
    let (want_y, want_p) = reference(&X, &W, &B);
    let (y, p) = run(&model, &X);
    close(&y, &want_y);
    close(&p, &want_p);
    let (y1, _) = run(&model, &X[..3]);
    close(&y1, &want_y[..2]);

    // MAX's InferenceSession.load(path) does the same in one call.
    close(&run(&ctx.load(file.path()).unwrap(), &X).0, &want_y);

    // A given weight replaces the file's, by tensor or from a registry.
    let w2: Vec<f32> = W.iter().map(|v| v * 2.0).collect();
    let model = compiled.init(&[("W", &Tensor::from_slice(&w2, &[3, 2]).unwrap())]).unwrap();
    close(&run(&model, &X).0, &reference(&X, &w2, &B).0);
    let mut registry = Weights::new().unwrap();
    registry.add_slice("B", &[1.0f32, 2.0], &[2]).unwrap();
    let model = compiled.init_from_weights(&registry).unwrap();
    close(&run(&model, &X).0, &reference(&X, &W, &[1.0, 2.0]).0);
    model.reload(&[("W", &Tensor::from_slice(&w2, &[3, 2]).unwrap())]).unwrap();
    close(&run(&model, &X).0, &reference(&X, &w2, &[1.0, 2.0]).0);
}

#[test]
fn file_device_places_an_onnx_model() {
    // ABI 1.5: an ONNX model carries no placement; file_device moves it onto one of the
    // context's devices (here the host, the one device every machine has) and it runs there.
    let file = TempFile::new("placed.onnx", &tiny_model("MatMul"));
    let ctx = Context::new(1).unwrap();
    let cpu = Device::cpu().unwrap();
    let options = CompileOptions::default().file_device(&cpu);
    assert_ne!(options, CompileOptions::default());
    let compiled = ctx.compile_file(file.path(), &options).unwrap();
    assert!(compiled.inputs().unwrap()[0].device.is_host().unwrap());
    let (want_y, want_p) = reference(&X, &W, &B);
    let (y, p) = run(&compiled.init(&[]).unwrap(), &X);
    close(&y, &want_y);
    close(&p, &want_p);
    // MAX's InferenceSession.load(path, device=CPU()).
    let model = ctx.load_on(file.path(), &cpu).unwrap();
    assert!(model.input_metadata().unwrap()[0].device.is_host().unwrap());
    close(&run(&model, &X).0, &want_y);
}

#[test]
fn bad_onnx_files_are_errors_naming_the_problem() {
    let ctx = Context::new(1).unwrap();
    let options = CompileOptions::default();

    let unknown = TempFile::new("unknown_op.onnx", &tiny_model("NoSuchOp"));
    let e = ctx.compile_file(unknown.path(), &options).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_UNIMPLEMENTED, "{e}");
    assert!(e.message.contains("NoSuchOp"), "{e}");

    let bytes = tiny_model("MatMul");
    let truncated = TempFile::new("truncated.onnx", &bytes[..bytes.len() * 2 / 3]);
    let e = ctx.compile_file(truncated.path(), &options).unwrap_err();
    assert!(e.code == ffi::MAX_STATUS_DATA_LOSS || e.code == ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("byte"), "the message gives the offset: {e}");

    let junk = TempFile::new("junk.onnx", b"\xff\xff\xff\xff not protobuf");
    assert!(ctx.compile_file(junk.path(), &options).is_err());

    let e = ctx.compile_file("/nonexistent/model.onnx", &options).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_NOT_FOUND, "{e}");
    assert!(e.message.contains("model.onnx"), "{e}");
}

#[test]
fn protobuf_writer_encodes_like_the_spec() {
    // The examples of the protobuf encoding guide: 150 in field 1, "testing" in field 2.
    assert_eq!(Proto::default().int(1, 150).0, [0x08, 0x96, 0x01]);
    assert_eq!(Proto::default().string(2, "testing").0, b"\x12\x07testing");
    assert_eq!(Proto::default().int(1, -1).0.len(), 11, "negative ints take ten bytes");
}
