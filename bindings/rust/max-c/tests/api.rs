use max_c::*;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn abi_check() {
    check_abi().unwrap();
    assert_eq!(abi_version() >> 16, ABI_VERSION >> 16);
    assert!(abi_version() >= ABI_VERSION);
    assert!(!version_string().is_empty());
    let cpu = Device::cpu().unwrap();
    assert!(cpu.is_host().unwrap());
    assert_eq!(cpu.label().unwrap(), "cpu");
    assert_eq!(cpu, Device::cpu().unwrap());
    assert!(accelerator_count().unwrap() >= 0);
    let ctx = Context::new(2).unwrap();
    assert_eq!(ctx.num_threads().unwrap(), 2);
    assert_eq!(ctx.devices().unwrap().len(), 1);
    let e = Context::new(-1).unwrap_err();
    assert_eq!(e.code, 3);
    assert!(e.to_string().starts_with("INVALID_ARGUMENT"));
    let before = log_level();
    assert!(set_log_level(LogLevel::Warning).is_ok());
    set_log_level(before).unwrap();
}

#[test]
fn dtype_traits() {
    assert_eq!(DType::Float32 as i32, 81);
    assert_eq!(DType::Int64 as i32, 141);
    assert_eq!(DType::Float32.name(), "float32");
    assert_eq!(DType::Float32.size_in_bytes(), 4);
    assert_eq!(DType::BFloat16.size_in_bits(), 16);
    assert!(DType::BFloat16.is_half() && DType::BFloat16.is_float());
    assert!(DType::Float8E5m2.is_float8());
    assert_eq!(DType::Float4E2m1fn.size_in_bits(), 4);
    assert_eq!(DType::Float4E2m1fn.size_in_bytes(), 1);
    assert_eq!(DType::Float8E8m0fnu as i32, 73);
    assert_eq!(DType::Float8E8m0fnu.name(), "float8_e8m0fnu");
    assert!(DType::Float8E8m0fnu.is_float8() && DType::Float8E8m0fnu.is_float());
    assert!(!DType::Float8E8m0fnu.is_integral() && !DType::Float8E8m0fnu.is_half());
    assert_eq!((DType::Float8E8m0fnu.size_in_bits(), DType::Float8E8m0fnu.size_in_bytes()), (8, 1));
    assert_eq!(DType::ALL.len(), 23);
    assert_eq!(DType::Int4 as i32, 133);
    assert_eq!((DType::Int4.size_in_bits(), DType::Int4.size_in_bytes()), (4, 1));
    assert_eq!((DType::UInt2.size_in_bits(), DType::UInt2.size_in_bytes()), (2, 1));
    assert!(DType::Int2.is_signed_integral() && DType::UInt4.is_unsigned_integral());
    assert!(!DType::Int4.is_float() && DType::Int4.is_integral());
    assert!(DType::Int8.is_signed_integral() && !DType::Int8.is_unsigned_integral());
    assert!(DType::UInt32.is_unsigned_integral() && DType::UInt32.is_integral());
    for d in DType::ALL {
        assert_eq!(DType::from_name(d.name()).unwrap(), d);
        assert_eq!(DType::from_raw(d as i32), Some(d));
    }
    let e = DType::from_name("float33").unwrap_err();
    assert_eq!(e.code, 5);
    assert!(e.message.contains("float33"), "{e}");
}

#[test]
fn tensor_round_trip_and_errors() {
    let data: Vec<f32> = (0..6).map(|i| i as f32 * 0.5).collect();
    let t = Tensor::from_slice(&data, &[2, 3]).unwrap();
    assert_eq!(t.shape().unwrap(), vec![2, 3]);
    assert_eq!(t.strides().unwrap(), vec![3, 1]);
    assert_eq!(t.dtype().unwrap(), DType::Float32);
    assert_eq!(t.to_vec::<f32>().unwrap(), data);
    let c = t.copy().unwrap();
    assert_eq!(c.to_vec::<f32>().unwrap(), data);
    let ints = Tensor::from_slice(&[1i64, -2, 3], &[3]).unwrap();
    assert_eq!(ints.to_vec::<i64>().unwrap(), vec![1, -2, 3]);
    assert_eq!(Tensor::from_slice(&[7i32], &[]).unwrap().to_vec::<i32>().unwrap(), vec![7]);
    let z = Tensor::zeros(DType::Int32, &[4]).unwrap();
    assert_eq!(z.to_vec::<i32>().unwrap(), vec![0; 4]);
    assert_eq!(z.to_vec::<f32>().unwrap_err().code, 3);
    // A reinterpreting view shares memory.
    let v = t.view(DType::Int32, &[6]).unwrap();
    assert_eq!(v.to_vec::<i32>().unwrap()[2], 1.0f32.to_bits() as i32);
    // Wrong byte size: INVALID_ARGUMENT naming both sizes.
    let e = Tensor::from_bytes(DType::Float32, &[2, 3], &[0u8; 20]).unwrap_err();
    assert_eq!(e.code, 3, "{e}");
    assert!(e.message.contains("24") && e.message.contains("20"), "{e}");
    let e = Tensor::from_slice(&[1.0f32; 5], &[2, 3]).unwrap_err();
    assert_eq!(e.code, 3);
    assert!(e.message.contains("24") && e.message.contains("20"), "{e}");
    // Send + Sync: read from another thread.
    let t2 = t.clone();
    let got = std::thread::spawn(move || t2.to_vec::<f32>().unwrap()).join().unwrap();
    assert_eq!(got, data);
}

#[test]
fn strided_view_reads_back() {
    // The transpose of a 2x3 row-major matrix as a strided view over the same memory.
    let data: Vec<i32> = vec![1, 2, 3, 4, 5, 6];
    let t = Tensor::from_vec_strided(data, &[3, 2], Some(&[1, 3])).unwrap();
    assert_eq!(t.strides().unwrap(), vec![1, 3]);
    assert!(!t.is_contiguous().unwrap());
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    let packed = t.copy().unwrap();
    assert!(packed.is_contiguous().unwrap());
    assert_eq!(packed.to_vec::<i32>().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    // Out-of-bounds strides are refused before reaching the library.
    assert!(Tensor::from_vec_strided(vec![0i32; 4], &[3, 2], Some(&[1, 3])).is_err());
}

static DELETED: AtomicUsize = AtomicUsize::new(0);

struct Wrapped {
    inner: *mut ffi::DLManagedTensorVersioned,
}

unsafe extern "C" fn counting_deleter(m: *mut ffi::DLManagedTensorVersioned) {
    let b = Box::from_raw(m);
    let w = Box::from_raw(b.manager_ctx as *mut Wrapped);
    if let Some(d) = (*w.inner).deleter {
        d(w.inner);
    }
    DELETED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn dlpack_round_trip_deleter_once() {
    let data = [1.5f32, 2.5, 3.5, 4.5];
    let t = Tensor::from_slice(&data, &[2, 2]).unwrap();
    let exported = t.to_dlpack().unwrap();
    {
        let m = exported.managed();
        assert_eq!(m.version.major, 1);
        assert_eq!(m.dl_tensor.ndim, 2);
        assert_eq!(m.dl_tensor.device.device_type, ffi::kDLCPU);
        assert_eq!(m.dl_tensor.dtype, ffi::DLDataType { code: ffi::kDLFloat, bits: 32, lanes: 1 });
        assert!(!m.dl_tensor.strides.is_null());
    }
    // Wrap the producer's struct in one whose deleter counts, then import it.
    let inner = exported.into_raw();
    let wrapped = Box::new(ffi::DLManagedTensorVersioned {
        version: unsafe { (*inner).version },
        manager_ctx: Box::into_raw(Box::new(Wrapped { inner })) as *mut _,
        deleter: Some(counting_deleter),
        flags: unsafe { (*inner).flags },
        dl_tensor: unsafe { (*inner).dl_tensor },
    });
    let dl = unsafe { DlPackTensor::from_raw(Box::into_raw(wrapped)) };
    drop(t); // the exported memory outlives the original handle
    let imported = Tensor::from_dlpack(dl).unwrap();
    assert_eq!(imported.shape().unwrap(), vec![2, 2]);
    assert_eq!(imported.to_vec::<f32>().unwrap(), data);
    let view = imported.clone();
    drop(imported);
    assert_eq!(DELETED.load(Ordering::SeqCst), 0);
    drop(view);
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
}

fn mlp(g: &Graph) -> Result<()> {
    let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(4)])?;
    let w1 = g.add_weight("w1", DType::Float32, [4, 8])?;
    let b1 = g.add_constant(&Tensor::from_slice(&[0.1f32; 8], &[8])?)?;
    let h = g.add_op("matmul", &[&x, &w1], &Attrs::new())?;
    assert_eq!(h.len(), 1);
    let h = g.add_op("add", &[&h[0], &b1], &Attrs::new())?;
    let h = g.add_op("relu", &[&h[0]], &Attrs::new())?;
    let w2 = g.add_weight("w2", DType::Float32, [8, 3])?;
    let y = g.add_op("matmul", &[&h[0], &w2], &Attrs::new())?;
    g.set_named_outputs(&[("y", &y[0])])
}

#[test]
fn graph_mlp_symbolic_batch() {
    let g = Graph::new("mlp").unwrap();
    mlp(&g).unwrap();
    let (name, y) = g.outputs().unwrap().remove(0);
    assert_eq!(name, "y");
    assert_eq!(y.dtype().unwrap(), DType::Float32);
    assert_eq!(y.shape().unwrap(), vec![Dim::Expr("batch".into()), Dim::Static(3)]);
    assert_eq!(y.type_string().unwrap(), "tensor<[batch, 3], float32, cpu:0>");
    assert_eq!(y.device().unwrap(), DeviceRef::Cpu(0));
    let (xname, x) = g.inputs().unwrap().remove(0);
    assert_eq!(xname, "x");
    // A failing op names the op and leaves the graph usable.
    let bad = g.add_weight("bad", DType::Float32, [5, 7]).unwrap();
    let ops_before = g.num_ops().unwrap();
    let e = g.add_op("matmul", &[&x, &bad], &Attrs::new()).unwrap_err();
    assert_eq!(e.code, 3, "{e}");
    assert!(e.message.contains("matmul"), "{e}");
    let e = g.add_op("no_such_op", &[&x], &Attrs::new()).unwrap_err();
    assert_eq!(e.code, 5, "{e}");
    assert!(e.message.contains("no_such_op"), "{e}");
    assert_eq!(g.num_ops().unwrap(), ops_before);
    let c = g.add_op("cast", &[&x], &Attrs::new().dtype("dtype", DType::Int8)).unwrap();
    assert_eq!(c[0].type_string().unwrap(), "tensor<[batch, 4], int8, cpu:0>");
    g.verify().unwrap();

    let text = g.to_string();
    assert!(text.contains("matmul"), "{text}");
    assert!(g.to_dot().unwrap().contains("digraph"));

    // Registry introspection.
    let all = ops().unwrap();
    assert!(all.iter().any(|(n, _)| n == "matmul"));
    let cast = op_schema("cast", 0).unwrap();
    assert!(cast.attrs.iter().any(|a| a.name == "dtype" && a.kind == AttrKind::DType));
    assert_eq!(op_schema("no_such_op", 0).unwrap_err().code, 5);

    // Graph is Send: build on one thread, inspect on another.
    let h = std::thread::spawn(move || g.num_ops().unwrap());
    assert!(h.join().unwrap() > 0);
}

#[test]
fn serialize_round_trip_identical_bytes() {
    let g = Graph::new("mlp").unwrap();
    mlp(&g).unwrap();
    let bytes = g.serialize().unwrap();
    assert!(!bytes.is_empty());
    let g2 = Graph::deserialize(&bytes).unwrap();
    assert_eq!(g2.serialize().unwrap(), bytes);
    assert_eq!(g2.to_text().unwrap(), g.to_text().unwrap());
    let e = Graph::deserialize(&bytes[..bytes.len() / 2]).unwrap_err();
    assert_eq!(e.code, 15, "{e}");
}

#[test]
fn save_and_load() {
    let g = Graph::new("mlp").unwrap();
    mlp(&g).unwrap();
    let dir = std::env::temp_dir().join(format!("max_c_rs_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mlp.maxg");
    g.save(&path).unwrap();
    let g2 = Graph::load(&path).unwrap();
    assert_eq!(g2.serialize().unwrap(), g.serialize().unwrap());
    assert_eq!(g2.name().unwrap(), "mlp");
    let e = Graph::load(dir.join("missing.maxg")).unwrap_err();
    assert_eq!(e.code, 5, "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn constants_are_placed_where_asked() {
    // ABI 1.5: a constant placed on a GPU carries that device in its type (a GPU graph's
    // scalars need not span devices); no GPU is needed to build such a graph.
    let g = Graph::new("placed").unwrap();
    let t = Tensor::from_slice(&[0.5f32], &[]).unwrap();
    let on_host = g.add_constant(&t).unwrap();
    let on_gpu = g.add_constant_on(&t, DeviceRef::Gpu(1)).unwrap();
    assert_eq!(on_host.device().unwrap(), DeviceRef::Cpu(0));
    assert_eq!(on_gpu.device().unwrap(), DeviceRef::Gpu(1));
    assert_eq!(on_gpu.type_string().unwrap(), "tensor<[], float32, gpu:1>");
    // The host through add_constant_on is a plain constant; the ops helpers place too.
    assert_eq!(g.add_constant_on(&t, DeviceRef::CPU).unwrap().device().unwrap(), DeviceRef::CPU);
    assert_eq!(g.scalar_on(2i64, DeviceRef::Gpu(0)).unwrap().device().unwrap(), DeviceRef::Gpu(0));
    let c = g.constant_on(&[1.0f32, 2.0], &[2], DeviceRef::Gpu(0)).unwrap();
    assert_eq!(c.type_string().unwrap(), "tensor<[2], float32, gpu:0>");
    // A bad device id is the library's INVALID_ARGUMENT.
    let e = g.add_constant_on(&t, DeviceRef::Gpu(-1)).unwrap_err();
    assert_eq!(e.code, ffi::MAX_STATUS_INVALID_ARGUMENT, "{e}");
    assert!(e.message.contains("device id -1"), "{e}");
}
