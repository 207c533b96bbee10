//! Handles may be dropped in any order: children keep their parents alive, results outlive
//! the model that made them, registry tensors outlive the registry (and the file's name),
//! and memory handed over through DLPack is released exactly once, after its last user.
use max_c::*;
use std::sync::atomic::{AtomicUsize, Ordering};

fn affine_graph() -> Graph {
    let g = Graph::new("affine").unwrap();
    {
        let x = g.add_input("x", DType::Float32, [Dim::from("n"), Dim::from(2)]).unwrap();
        let w = g.add_weight("w", DType::Float32, [2, 2]).unwrap();
        let y = x.matmul(&w).unwrap();
        g.set_named_outputs(&[("y", &y)]).unwrap();
    }
    g
}

const W: [f32; 4] = [1.0, 2.0, 3.0, 4.0];
const X: [f32; 4] = [1.0, 1.0, 0.5, -1.0];
const Y: [f32; 4] = [4.0, 6.0, -2.5, -3.0]; // X @ W

fn x() -> Tensor {
    Tensor::from_slice(&X, &[2, 2]).unwrap()
}

#[test]
fn parents_dropped_first_stay_alive_through_children() {
    let ctx = Context::new(1).unwrap();
    let graph = affine_graph();
    let compiled = ctx.compile(&graph, &CompileOptions::default()).unwrap();
    drop(graph); // the compiled model does not refer to the graph
    drop(ctx); // ... but keeps the context alive
    let w = Tensor::from_slice(&W, &[2, 2]).unwrap();
    let model = compiled.init(&[("w", &w)]).unwrap();
    drop(compiled); // the model keeps its compiled model
    drop(w); // and its weights
    let outputs = model.execute(&[&x()]).unwrap();
    assert_eq!(model.compiled_model().unwrap().inputs().unwrap()[0].name, "x");
    drop(model); // results are plain tensors that outlive the model
    assert_eq!(outputs[0].to_vec::<f32>().unwrap(), Y);
    let device = outputs[0].device().unwrap();
    drop(outputs);
    assert!(device.is_host().unwrap());
}

#[test]
fn registry_tensors_outlive_the_registry_and_the_file_name() {
    let dir = std::env::temp_dir().join(format!("max_c_rs_drop_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("w.gguf");
    let mut source = Weights::new().unwrap();
    source.add_slice("w", &W, &[2, 2]).unwrap();
    source.save_gguf(&path, None).unwrap();
    drop(source);

    let weights = Weights::from_files([&path]).unwrap();
    let view = weights.tensor("w").unwrap();
    let model = Context::new(1).unwrap().compile(&affine_graph(), &CompileOptions::default()).unwrap().init_from_weights(&weights).unwrap();
    drop(weights);
    std::fs::remove_dir_all(&dir).unwrap(); // the mapping stays valid without the name
    assert_eq!(view.to_vec::<f32>().unwrap(), W);
    assert_eq!(model.execute(&[&x()]).unwrap()[0].to_vec::<f32>().unwrap(), Y);
}

/// A DLPack producer whose deleter counts its calls.
struct Producer {
    data: Vec<f32>,
    shape: [i64; 2],
    deletes: &'static AtomicUsize,
}

unsafe extern "C" fn producer_deleter(m: *mut ffi::DLManagedTensorVersioned) {
    let managed = Box::from_raw(m);
    let producer = Box::from_raw(managed.manager_ctx as *mut Producer);
    producer.deletes.fetch_add(1, Ordering::SeqCst);
}

fn produce(data: &[f32], deletes: &'static AtomicUsize) -> DlPackTensor {
    let mut producer = Box::new(Producer { data: data.to_vec(), shape: [2, 2], deletes });
    let dl_tensor = ffi::DLTensor {
        data: producer.data.as_mut_ptr() as *mut _,
        device: ffi::DLDevice { device_type: ffi::kDLCPU, device_id: 0 },
        ndim: 2,
        dtype: ffi::DLDataType { code: ffi::kDLFloat, bits: 32, lanes: 1 },
        shape: producer.shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let managed = Box::new(ffi::DLManagedTensorVersioned {
        version: ffi::DLPackVersion { major: 1, minor: 1 },
        manager_ctx: Box::into_raw(producer) as *mut _,
        deleter: Some(producer_deleter),
        flags: 0,
        dl_tensor,
    });
    unsafe { DlPackTensor::from_raw(Box::into_raw(managed)) }
}

#[test]
fn dlpack_weight_is_released_once_after_the_last_model() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    let w = Tensor::from_dlpack(produce(&W, &DELETES)).unwrap();
    let compiled = Context::new(1).unwrap().compile(&affine_graph(), &CompileOptions::default()).unwrap();
    let model = compiled.init(&[("w", &w)]).unwrap(); // a contiguous host weight is shared
    let mut registry = Weights::new().unwrap();
    registry.add_tensor("w", &w).unwrap();
    drop(w);
    let second = compiled.init_from_weights(&registry).unwrap();
    drop(registry);
    assert_eq!(DELETES.load(Ordering::SeqCst), 0, "the models still use the memory");
    assert_eq!(model.execute(&[&x()]).unwrap()[0].to_vec::<f32>().unwrap(), Y);
    drop(model);
    assert_eq!(second.execute(&[&x()]).unwrap()[0].to_vec::<f32>().unwrap(), Y);
    assert_eq!(DELETES.load(Ordering::SeqCst), 0);
    drop(second);
    assert_eq!(DELETES.load(Ordering::SeqCst), 1, "released once, after the last model");
}

#[test]
fn failed_dlpack_import_releases_the_producer_once() {
    static DELETES: AtomicUsize = AtomicUsize::new(0);
    let dl = produce(&W, &DELETES);
    unsafe { (*dl.as_ptr()).dl_tensor.dtype.lanes = 4 }; // vector lanes are refused
    let e = Tensor::from_dlpack(dl).unwrap_err();
    assert!(e.code == ffi::MAX_STATUS_INVALID_ARGUMENT || e.code == ffi::MAX_STATUS_UNIMPLEMENTED, "{e}");
    assert!(e.message.contains("lanes"), "{e}");
    assert_eq!(DELETES.load(Ordering::SeqCst), 1, "the binding drops what the library refused");
}

#[test]
fn exported_outputs_outlive_model_and_tensor() {
    let compiled = Context::new(1).unwrap().compile(&affine_graph(), &CompileOptions::default()).unwrap();
    let model = compiled.init(&[("w", &Tensor::from_slice(&W, &[2, 2]).unwrap())]).unwrap();
    let y = model.execute(&[&x()]).unwrap().remove(0);
    let exported = y.to_dlpack().unwrap();
    drop((y, model, compiled));
    let m = exported.managed();
    assert_eq!(m.dl_tensor.ndim, 2);
    let read = unsafe { std::slice::from_raw_parts(m.dl_tensor.data as *const f32, 4) };
    assert_eq!(read, Y);
    // Re-importing the export gives a tensor over the same memory.
    let back = Tensor::from_dlpack(exported).unwrap();
    assert_eq!(back.to_vec::<f32>().unwrap(), Y);
}
