//! Raw FFI declarations for libmax_c, mirroring `include/max_c.h` (ABI 1.8).
//!
//! Written by hand; `tests/header.rs` parses the header and checks that every function,
//! constant and parameter type here matches it, so a drift fails `cargo test`.
//!
//! Everything here is `unsafe` to call; see the `max-c` crate for the safe wrapper. Enums of
//! the header are `i32` typedefs with constants, exactly as in C.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::os::raw::{c_char, c_void};

// ---- DLPack 1.1 ----
pub const DLPACK_MAJOR_VERSION: u32 = 1;
pub const DLPACK_MINOR_VERSION: u32 = 1;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// C enum `DLDeviceType` (int-sized).
pub type DLDeviceType = i32;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;
pub const kDLOpenCL: DLDeviceType = 4;
pub const kDLVulkan: DLDeviceType = 7;
pub const kDLMetal: DLDeviceType = 8;
pub const kDLVPI: DLDeviceType = 9;
pub const kDLROCM: DLDeviceType = 10;
pub const kDLROCMHost: DLDeviceType = 11;
pub const kDLExtDev: DLDeviceType = 12;
pub const kDLCUDAManaged: DLDeviceType = 13;
pub const kDLOneAPI: DLDeviceType = 14;
pub const kDLWebGPU: DLDeviceType = 15;
pub const kDLHexagon: DLDeviceType = 16;
pub const kDLMAIA: DLDeviceType = 17;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

pub const kDLInt: u8 = 0;
pub const kDLUInt: u8 = 1;
pub const kDLFloat: u8 = 2;
pub const kDLOpaqueHandle: u8 = 3;
pub const kDLBfloat: u8 = 4;
pub const kDLComplex: u8 = 5;
pub const kDLBool: u8 = 6;
pub const kDLFloat8_e3m4: u8 = 7;
pub const kDLFloat8_e4m3: u8 = 8;
pub const kDLFloat8_e4m3b11fnuz: u8 = 9;
pub const kDLFloat8_e4m3fn: u8 = 10;
pub const kDLFloat8_e4m3fnuz: u8 = 11;
pub const kDLFloat8_e5m2: u8 = 12;
pub const kDLFloat8_e5m2fnuz: u8 = 13;
pub const kDLFloat8_e8m0fnu: u8 = 14;
pub const kDLFloat6_e2m3fn: u8 = 15;
pub const kDLFloat6_e3m2fn: u8 = 16;
pub const kDLFloat4_e2m1fn: u8 = 17;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

// ---- versions ----
pub const MAX_ABI_VERSION_MAJOR: u32 = 1;
pub const MAX_ABI_VERSION_MINOR: u32 = 8;
pub const MAX_ABI_VERSION: u32 = (MAX_ABI_VERSION_MAJOR << 16) | MAX_ABI_VERSION_MINOR;

// ---- opaque handles ----
macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
        }
    )*};
}
opaque!(
    max_status_t, max_device_t, max_context_t, max_tensor_t, max_tensor_list_t, max_buffer_t,
    max_graph_t, max_value_t, max_attrs_t, max_compiled_model_t, max_model_t, max_tensor_spec_t,
    max_weights_t
);

// ---- status ----
pub type max_status_code_t = i32;
pub const MAX_STATUS_OK: i32 = 0;
pub const MAX_STATUS_CANCELLED: i32 = 1;
pub const MAX_STATUS_UNKNOWN: i32 = 2;
pub const MAX_STATUS_INVALID_ARGUMENT: i32 = 3;
pub const MAX_STATUS_DEADLINE_EXCEEDED: i32 = 4;
pub const MAX_STATUS_NOT_FOUND: i32 = 5;
pub const MAX_STATUS_ALREADY_EXISTS: i32 = 6;
pub const MAX_STATUS_PERMISSION_DENIED: i32 = 7;
pub const MAX_STATUS_RESOURCE_EXHAUSTED: i32 = 8;
pub const MAX_STATUS_FAILED_PRECONDITION: i32 = 9;
pub const MAX_STATUS_ABORTED: i32 = 10;
pub const MAX_STATUS_OUT_OF_RANGE: i32 = 11;
pub const MAX_STATUS_UNIMPLEMENTED: i32 = 12;
pub const MAX_STATUS_INTERNAL: i32 = 13;
pub const MAX_STATUS_UNAVAILABLE: i32 = 14;
pub const MAX_STATUS_DATA_LOSS: i32 = 15;
pub const MAX_STATUS_UNAUTHENTICATED: i32 = 16;

// ---- log ----
pub type max_log_level_t = i32;
pub const MAX_LOG_OFF: i32 = 0;
pub const MAX_LOG_ERROR: i32 = 1;
pub const MAX_LOG_WARNING: i32 = 2;
pub const MAX_LOG_INFO: i32 = 3;
pub const MAX_LOG_DEBUG: i32 = 4;
pub const MAX_LOG_TRACE: i32 = 5;

// ---- dtype ----
pub type max_dtype_t = i32;
pub const MAX_DTYPE_INVALID: i32 = 0;
pub const MAX_DTYPE_BOOL: i32 = 1;
pub const MAX_DTYPE_FLOAT4_E2M1FN: i32 = 64;
pub const MAX_DTYPE_FLOAT8_E8M0FNU: i32 = 73;
pub const MAX_DTYPE_FLOAT8_E4M3FN: i32 = 75;
pub const MAX_DTYPE_FLOAT8_E4M3FNUZ: i32 = 76;
pub const MAX_DTYPE_FLOAT8_E5M2: i32 = 77;
pub const MAX_DTYPE_FLOAT8_E5M2FNUZ: i32 = 78;
pub const MAX_DTYPE_FLOAT16: i32 = 79;
pub const MAX_DTYPE_BFLOAT16: i32 = 80;
pub const MAX_DTYPE_FLOAT32: i32 = 81;
pub const MAX_DTYPE_FLOAT64: i32 = 82;
pub const MAX_DTYPE_UINT2: i32 = 130;
pub const MAX_DTYPE_INT2: i32 = 131;
pub const MAX_DTYPE_UINT4: i32 = 132;
pub const MAX_DTYPE_INT4: i32 = 133;
pub const MAX_DTYPE_UINT8: i32 = 134;
pub const MAX_DTYPE_INT8: i32 = 135;
pub const MAX_DTYPE_UINT16: i32 = 136;
pub const MAX_DTYPE_INT16: i32 = 137;
pub const MAX_DTYPE_UINT32: i32 = 138;
pub const MAX_DTYPE_INT32: i32 = 139;
pub const MAX_DTYPE_UINT64: i32 = 140;
pub const MAX_DTYPE_INT64: i32 = 141;

// ---- devices ----
pub type max_device_kind_t = i32;
pub const MAX_DEVICE_KIND_CPU: i32 = 1;
pub const MAX_DEVICE_KIND_CUDA: i32 = 2;
pub const MAX_DEVICE_KIND_HIP: i32 = 3;

// ---- context ----
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct max_context_options_t {
    pub struct_size: usize,
    pub devices: *const *mut max_device_t,
    pub num_devices: usize,
    pub num_threads: i32,
    pub log_level: max_log_level_t,
}

// ---- tensors ----
pub type max_release_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;
pub const MAX_TENSOR_MAX_RANK: i32 = 64;

// ---- graphs ----
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct max_dim_t {
    pub size: i64,
    pub expr: *const c_char,
}

pub type max_device_ref_kind_t = i32;
pub const MAX_DEVICE_REF_CPU: i32 = 0;
pub const MAX_DEVICE_REF_GPU: i32 = 1;

pub type max_attr_kind_t = i32;
pub const MAX_ATTR_INT: i32 = 0;
pub const MAX_ATTR_FLOAT: i32 = 1;
pub const MAX_ATTR_STRING: i32 = 2;
pub const MAX_ATTR_DTYPE: i32 = 3;
pub const MAX_ATTR_INTS: i32 = 4;
pub const MAX_ATTR_FLOATS: i32 = 5;
pub const MAX_ATTR_DIMS: i32 = 6;
pub const MAX_ATTR_GRAPH: i32 = 7;
pub const MAX_ATTR_BOOL: i32 = 8;
pub const MAX_ATTR_DEVICE: i32 = 9;

pub type max_op_input_arity_t = i32;
pub const MAX_OP_INPUT_ONE: i32 = 0;
pub const MAX_OP_INPUT_OPTIONAL: i32 = 1;
pub const MAX_OP_INPUT_VARIADIC: i32 = 2;
/// Zero or more values; only last (ABI 1.6: the operands of `cond` and `call`).
pub const MAX_OP_INPUT_ANY: i32 = 3;

pub type max_op_attr_presence_t = i32;
pub const MAX_OP_ATTR_REQUIRED: i32 = 0;
pub const MAX_OP_ATTR_OPTIONAL: i32 = 1;
pub const MAX_OP_ATTR_DEFAULTED: i32 = 2;

// ---- engine (ABI 1.2) ----
/// Compile options. Fill with [`max_compile_options_init`] (which sets `struct_size` and the
/// defaults) before changing fields: the library reads `struct_size` to know which fields
/// this program knows about. An older library reads the fields it knows and refuses a
/// nonzero value in those it does not (INVALID_ARGUMENT): leave the newer fields at their
/// defaults to stay compatible with it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct max_compile_options_t {
    pub struct_size: usize,
    pub enable_fusion: i32,
    pub enable_constant_folding: i32,
    pub fold_limit_bytes: u64,
    pub plan_cache_capacity: i64,
    /// ABI 1.4. 1: an input on another device than the model's is copied to it on each call;
    /// 0, the default: such an input is INVALID_ARGUMENT.
    pub copy_inputs_to_device: i32,
    /// ABI 1.5. For `max_context_compile_file`: the device (one of the context's) a model file
    /// wholly on the host is moved onto before it compiles; NULL, the default, keeps the
    /// file's own placement. Borrowed for the call.
    pub file_device: *const max_device_t,
}

/// Run options (ABI 1.8): checked before every step and every loop iteration of one execute.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct max_run_options_t {
    pub struct_size: usize,
    /// Microseconds the call may run from its start; 0, the default: no limit.
    pub timeout_us: i64,
    /// A flag the caller owns; nonzero cancels the call. NULL: none. Read atomically.
    pub cancel_flag: *const i32,
}

// ---- weights (ABI 1.3) ----
pub type max_quant_encoding_t = i32;
pub const MAX_QUANT_NONE: i32 = 0;
pub const MAX_QUANT_Q4_0: i32 = 1;
pub const MAX_QUANT_Q4_K: i32 = 2;
pub const MAX_QUANT_Q5_K: i32 = 3;
pub const MAX_QUANT_Q6_K: i32 = 4;
pub const MAX_QUANT_Q8_0: i32 = 5;

type St = *mut max_status_t;

#[link(name = "max_c")]
extern "C" {
    // versions
    pub fn max_abi_version() -> u32;
    pub fn max_version_string() -> *const c_char;
    pub fn max_check_abi(header_version: u32) -> St;

    // status
    pub fn max_status_code(status: *const max_status_t) -> max_status_code_t;
    pub fn max_status_message(status: *const max_status_t) -> *const c_char;
    pub fn max_status_code_name(code: max_status_code_t) -> *const c_char;
    pub fn max_status_release(status: St);

    // log
    pub fn max_log_set_level(level: max_log_level_t) -> St;
    pub fn max_log_level() -> max_log_level_t;

    // dtype
    pub fn max_dtype_is_valid(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_size_in_bits(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_size_in_bytes(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_align(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_is_float(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_is_float8(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_is_half(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_is_integral(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_is_signed_integral(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_is_unsigned_integral(dtype: max_dtype_t) -> i32;
    pub fn max_dtype_name(dtype: max_dtype_t) -> *const c_char;
    pub fn max_dtype_from_name(name: *const c_char, out_dtype: *mut max_dtype_t) -> St;

    // devices
    pub fn max_accelerator_count(out_count: *mut i32) -> St;
    pub fn max_device_create(kind: max_device_kind_t, id: i32, out_device: *mut *mut max_device_t) -> St;
    pub fn max_device_retain(device: *mut max_device_t);
    pub fn max_device_release(device: *mut max_device_t);
    pub fn max_device_kind(device: *const max_device_t, out_kind: *mut max_device_kind_t) -> St;
    pub fn max_device_id(device: *const max_device_t, out_id: *mut i32) -> St;
    pub fn max_device_label(device: *const max_device_t, out_label: *mut *const c_char) -> St;
    pub fn max_device_api(device: *const max_device_t, out_api: *mut *const c_char) -> St;
    pub fn max_device_is_host(device: *const max_device_t, out_is_host: *mut i32) -> St;
    pub fn max_device_synchronize(device: *mut max_device_t) -> St;

    // context
    pub fn max_context_options_init(options: *mut max_context_options_t, struct_size: usize) -> St;
    pub fn max_context_create(options: *const max_context_options_t, out_context: *mut *mut max_context_t) -> St;
    pub fn max_context_retain(context: *mut max_context_t);
    pub fn max_context_release(context: *mut max_context_t);
    pub fn max_context_num_threads(context: *const max_context_t, out_num_threads: *mut i32) -> St;
    pub fn max_context_num_devices(context: *const max_context_t, out_num_devices: *mut usize) -> St;
    pub fn max_context_device(context: *const max_context_t, index: usize, out_device: *mut *mut max_device_t) -> St;

    // tensors
    pub fn max_tensor_create(device: *mut max_device_t, dtype: max_dtype_t, dims: *const i64, rank: i32, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_tensor_create_from_host(device: *mut max_device_t, dtype: max_dtype_t, dims: *const i64, rank: i32, data: *const c_void, num_bytes: usize, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_tensor_create_borrowed(dtype: max_dtype_t, dims: *const i64, rank: i32, strides: *const i64, data: *mut c_void, read_only: i32, release: max_release_fn, user_data: *mut c_void, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_tensor_retain(tensor: *mut max_tensor_t);
    pub fn max_tensor_release(tensor: *mut max_tensor_t);
    pub fn max_tensor_dtype(tensor: *const max_tensor_t, out_dtype: *mut max_dtype_t) -> St;
    pub fn max_tensor_rank(tensor: *const max_tensor_t, out_rank: *mut i32) -> St;
    pub fn max_tensor_dims(tensor: *const max_tensor_t, out_dims: *mut *const i64) -> St;
    pub fn max_tensor_strides(tensor: *const max_tensor_t, out_strides: *mut *const i64) -> St;
    pub fn max_tensor_num_elements(tensor: *const max_tensor_t, out_num_elements: *mut i64) -> St;
    pub fn max_tensor_byte_size(tensor: *const max_tensor_t, out_bytes: *mut usize) -> St;
    pub fn max_tensor_device(tensor: *const max_tensor_t, out_device: *mut *mut max_device_t) -> St;
    pub fn max_tensor_is_contiguous(tensor: *const max_tensor_t, out_is_contiguous: *mut i32) -> St;
    pub fn max_tensor_is_read_only(tensor: *const max_tensor_t, out_is_read_only: *mut i32) -> St;
    pub fn max_tensor_data(tensor: *const max_tensor_t, out_data: *mut *const c_void) -> St;
    pub fn max_tensor_mutable_data(tensor: *mut max_tensor_t, out_data: *mut *mut c_void) -> St;
    pub fn max_tensor_to_host(tensor: *const max_tensor_t, dst: *mut c_void, num_bytes: usize) -> St;
    pub fn max_tensor_copy(tensor: *const max_tensor_t, device: *mut max_device_t, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_tensor_copy_from(dst: *mut max_tensor_t, src: *const max_tensor_t) -> St;
    pub fn max_tensor_view(tensor: *const max_tensor_t, dtype: max_dtype_t, dims: *const i64, rank: i32, out_tensor: *mut *mut max_tensor_t) -> St;

    // tensor lists
    pub fn max_tensor_list_create(out_list: *mut *mut max_tensor_list_t) -> St;
    pub fn max_tensor_list_retain(list: *mut max_tensor_list_t);
    pub fn max_tensor_list_release(list: *mut max_tensor_list_t);
    pub fn max_tensor_list_append(list: *mut max_tensor_list_t, tensor: *mut max_tensor_t) -> St;
    pub fn max_tensor_list_size(list: *const max_tensor_list_t, out_size: *mut usize) -> St;
    pub fn max_tensor_list_get(list: *const max_tensor_list_t, index: usize, out_tensor: *mut *mut max_tensor_t) -> St;

    // buffers
    pub fn max_buffer_create(data: *const c_void, size: usize, out_buffer: *mut *mut max_buffer_t) -> St;
    pub fn max_buffer_retain(buffer: *mut max_buffer_t);
    pub fn max_buffer_release(buffer: *mut max_buffer_t);
    pub fn max_buffer_data(buffer: *const max_buffer_t, out_data: *mut *const c_void) -> St;
    pub fn max_buffer_size(buffer: *const max_buffer_t, out_size: *mut usize) -> St;

    // DLPack
    pub fn max_tensor_to_dlpack(tensor: *mut max_tensor_t, out_managed: *mut *mut DLManagedTensorVersioned) -> St;
    pub fn max_tensor_from_dlpack(managed: *mut DLManagedTensorVersioned, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_tensor_to_dlpack_unversioned(tensor: *mut max_tensor_t, out_managed: *mut *mut DLManagedTensor) -> St;
    pub fn max_tensor_from_dlpack_unversioned(managed: *mut DLManagedTensor, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_tensor_dlpack_device(tensor: *const max_tensor_t, out_device: *mut DLDevice) -> St;

    // graphs
    pub fn max_graph_create(name: *const c_char, out_graph: *mut *mut max_graph_t) -> St;
    pub fn max_graph_retain(graph: *mut max_graph_t);
    pub fn max_graph_release(graph: *mut max_graph_t);
    pub fn max_graph_name(graph: *const max_graph_t, out_name: *mut *const c_char) -> St;
    pub fn max_graph_add_input(graph: *mut max_graph_t, name: *const c_char, dtype: max_dtype_t, dims: *const max_dim_t, rank: i32, device_kind: max_device_ref_kind_t, device_id: i32, out_value: *mut *mut max_value_t) -> St;
    pub fn max_graph_add_constant(graph: *mut max_graph_t, tensor: *const max_tensor_t, out_value: *mut *mut max_value_t) -> St;
    // ABI 1.5 (linking a call to it needs a 1.5 library; the `max-c` crate looks it up at run time)
    pub fn max_graph_add_constant_on(graph: *mut max_graph_t, tensor: *const max_tensor_t, device_kind: max_device_ref_kind_t, device_id: i32, out_value: *mut *mut max_value_t) -> St;
    pub fn max_graph_add_weight(graph: *mut max_graph_t, name: *const c_char, dtype: max_dtype_t, dims: *const max_dim_t, rank: i32, device_kind: max_device_ref_kind_t, device_id: i32, out_value: *mut *mut max_value_t) -> St;
    pub fn max_graph_add_op(graph: *mut max_graph_t, op: *const c_char, version: i32, inputs: *const *mut max_value_t, num_inputs: usize, attrs: *const max_attrs_t, outputs: *mut *mut max_value_t, capacity: usize, out_num_outputs: *mut usize) -> St;
    pub fn max_graph_set_outputs(graph: *mut max_graph_t, values: *const *mut max_value_t, names: *const *const c_char, num_outputs: usize) -> St;
    pub fn max_graph_add_subgraph(graph: *mut max_graph_t, subgraph: *const max_graph_t, out_index: *mut i64) -> St;
    pub fn max_graph_num_inputs(graph: *const max_graph_t, out_count: *mut usize) -> St;
    pub fn max_graph_input(graph: *const max_graph_t, index: usize, out_value: *mut *mut max_value_t, out_name: *mut *const c_char) -> St;
    pub fn max_graph_num_outputs(graph: *const max_graph_t, out_count: *mut usize) -> St;
    pub fn max_graph_output(graph: *const max_graph_t, index: usize, out_value: *mut *mut max_value_t, out_name: *mut *const c_char) -> St;
    pub fn max_graph_num_ops(graph: *const max_graph_t, out_count: *mut usize) -> St;
    pub fn max_graph_verify(graph: *const max_graph_t) -> St;

    // values
    pub fn max_value_dtype(value: *const max_value_t, out_dtype: *mut max_dtype_t) -> St;
    pub fn max_value_rank(value: *const max_value_t, out_rank: *mut i32) -> St;
    pub fn max_value_dim(value: *const max_value_t, index: i32, out_size: *mut i64, out_expr: *mut *const c_char) -> St;
    pub fn max_value_device(value: *const max_value_t, out_kind: *mut max_device_ref_kind_t, out_id: *mut i32) -> St;
    pub fn max_value_type_string(value: *const max_value_t, out_text: *mut *const c_char) -> St;

    // attrs
    pub fn max_attrs_create(out_attrs: *mut *mut max_attrs_t) -> St;
    pub fn max_attrs_retain(attrs: *mut max_attrs_t);
    pub fn max_attrs_release(attrs: *mut max_attrs_t);
    pub fn max_attrs_set_int(attrs: *mut max_attrs_t, name: *const c_char, value: i64) -> St;
    pub fn max_attrs_set_float(attrs: *mut max_attrs_t, name: *const c_char, value: f64) -> St;
    pub fn max_attrs_set_bool(attrs: *mut max_attrs_t, name: *const c_char, value: i32) -> St;
    pub fn max_attrs_set_string(attrs: *mut max_attrs_t, name: *const c_char, value: *const c_char) -> St;
    pub fn max_attrs_set_dtype(attrs: *mut max_attrs_t, name: *const c_char, value: max_dtype_t) -> St;
    pub fn max_attrs_set_ints(attrs: *mut max_attrs_t, name: *const c_char, values: *const i64, count: usize) -> St;
    pub fn max_attrs_set_floats(attrs: *mut max_attrs_t, name: *const c_char, values: *const f64, count: usize) -> St;
    pub fn max_attrs_set_dims(attrs: *mut max_attrs_t, name: *const c_char, dims: *const max_dim_t, count: usize) -> St;
    pub fn max_attrs_set_graph(attrs: *mut max_attrs_t, name: *const c_char, subgraph_index: i64) -> St;
    pub fn max_attrs_set_device(attrs: *mut max_attrs_t, name: *const c_char, kind: max_device_ref_kind_t, id: i32) -> St;

    // op registry
    pub fn max_op_count(out_count: *mut usize) -> St;
    pub fn max_op_at(index: usize, out_name: *mut *const c_char, out_version: *mut i32) -> St;
    pub fn max_op_num_inputs(name: *const c_char, version: i32, out_count: *mut usize) -> St;
    pub fn max_op_input(name: *const c_char, version: i32, index: usize, out_input_name: *mut *const c_char, out_arity: *mut max_op_input_arity_t) -> St;
    pub fn max_op_num_attrs(name: *const c_char, version: i32, out_count: *mut usize) -> St;
    pub fn max_op_attr(name: *const c_char, version: i32, index: usize, out_attr_name: *mut *const c_char, out_kind: *mut max_attr_kind_t, out_presence: *mut max_op_attr_presence_t) -> St;

    // serialization and printing
    pub fn max_graph_serialize(graph: *const max_graph_t, out_buffer: *mut *mut max_buffer_t) -> St;
    pub fn max_graph_deserialize(data: *const c_void, size: usize, out_graph: *mut *mut max_graph_t) -> St;
    pub fn max_graph_save(graph: *const max_graph_t, path: *const c_char) -> St;
    pub fn max_graph_load(path: *const c_char, out_graph: *mut *mut max_graph_t) -> St;
    pub fn max_graph_to_text(graph: *const max_graph_t, out_text: *mut *mut max_buffer_t) -> St;
    pub fn max_graph_to_dot(graph: *const max_graph_t, out_dot: *mut *mut max_buffer_t) -> St;

    // engine (ABI 1.2): compile options, compiled models, tensor specs, models
    pub fn max_compile_options_init(options: *mut max_compile_options_t, struct_size: usize) -> St;
    pub fn max_context_compile(context: *mut max_context_t, graph: *const max_graph_t, options: *const max_compile_options_t, out_compiled: *mut *mut max_compiled_model_t) -> St;
    pub fn max_context_compile_file(context: *mut max_context_t, path: *const c_char, options: *const max_compile_options_t, out_compiled: *mut *mut max_compiled_model_t) -> St;
    pub fn max_compiled_model_retain(compiled: *mut max_compiled_model_t);
    pub fn max_compiled_model_release(compiled: *mut max_compiled_model_t);
    pub fn max_compiled_model_num_inputs(compiled: *const max_compiled_model_t, out_count: *mut usize) -> St;
    pub fn max_compiled_model_input(compiled: *const max_compiled_model_t, index: usize, out_spec: *mut *mut max_tensor_spec_t) -> St;
    pub fn max_compiled_model_num_outputs(compiled: *const max_compiled_model_t, out_count: *mut usize) -> St;
    pub fn max_compiled_model_output(compiled: *const max_compiled_model_t, index: usize, out_spec: *mut *mut max_tensor_spec_t) -> St;
    pub fn max_compiled_model_num_weights(compiled: *const max_compiled_model_t, out_count: *mut usize) -> St;
    pub fn max_compiled_model_weight(compiled: *const max_compiled_model_t, index: usize, out_spec: *mut *mut max_tensor_spec_t) -> St;

    pub fn max_tensor_spec_retain(spec: *mut max_tensor_spec_t);
    pub fn max_tensor_spec_release(spec: *mut max_tensor_spec_t);
    pub fn max_tensor_spec_name(spec: *const max_tensor_spec_t, out_name: *mut *const c_char) -> St;
    pub fn max_tensor_spec_dtype(spec: *const max_tensor_spec_t, out_dtype: *mut max_dtype_t) -> St;
    pub fn max_tensor_spec_rank(spec: *const max_tensor_spec_t, out_rank: *mut usize) -> St;
    pub fn max_tensor_spec_dim(spec: *const max_tensor_spec_t, axis: usize, out_dim: *mut i64, out_name: *mut *const c_char) -> St;
    pub fn max_tensor_spec_device(spec: *const max_tensor_spec_t, out_device: *mut *mut max_device_t) -> St;

    pub fn max_model_create(compiled: *mut max_compiled_model_t, weight_names: *const *const c_char, weights: *const *mut max_tensor_t, num_weights: usize, out_model: *mut *mut max_model_t) -> St;
    pub fn max_model_retain(model: *mut max_model_t);
    pub fn max_model_release(model: *mut max_model_t);
    pub fn max_model_compiled_model(model: *const max_model_t, out_compiled: *mut *mut max_compiled_model_t) -> St;
    pub fn max_model_execute(model: *mut max_model_t, inputs: *const *mut max_tensor_t, num_inputs: usize, out_outputs: *mut *mut max_tensor_list_t) -> St;
    pub fn max_model_execute_named(model: *mut max_model_t, names: *const *const c_char, inputs: *const *mut max_tensor_t, num_inputs: usize, out_outputs: *mut *mut max_tensor_list_t) -> St;
    pub fn max_model_reload(model: *mut max_model_t, weight_names: *const *const c_char, weights: *const *mut max_tensor_t, num_weights: usize) -> St;
    // run options (ABI 1.8): a deadline and a cancellation flag
    pub fn max_run_options_init(options: *mut max_run_options_t, struct_size: usize) -> St;
    pub fn max_model_execute_with_options(model: *mut max_model_t, inputs: *const *mut max_tensor_t, num_inputs: usize, options: *const max_run_options_t, out_outputs: *mut *mut max_tensor_list_t) -> St;

    // weights (ABI 1.3): quantization encodings, the registry, quantize, models from a registry
    pub fn max_quant_encoding_name(encoding: max_quant_encoding_t) -> *const c_char;
    pub fn max_quant_encoding_block(encoding: max_quant_encoding_t, out_elements_per_block: *mut i32, out_block_bytes: *mut i32) -> St;
    pub fn max_weights_create(out_weights: *mut *mut max_weights_t) -> St;
    pub fn max_weights_retain(weights: *mut max_weights_t);
    pub fn max_weights_release(weights: *mut max_weights_t);
    pub fn max_weights_add_file(weights: *mut max_weights_t, path: *const c_char) -> St;
    pub fn max_weights_add_tensor(weights: *mut max_weights_t, name: *const c_char, tensor: *mut max_tensor_t, encoding: max_quant_encoding_t) -> St;
    pub fn max_weights_count(weights: *const max_weights_t, out_count: *mut usize) -> St;
    pub fn max_weights_name(weights: *const max_weights_t, index: usize, out_name: *mut *const c_char) -> St;
    pub fn max_weights_info(weights: *const max_weights_t, name: *const c_char, out_dtype: *mut max_dtype_t, out_rank: *mut i32, out_dims: *mut *const i64, out_encoding: *mut max_quant_encoding_t) -> St;
    pub fn max_weights_tensor(weights: *const max_weights_t, name: *const c_char, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_weights_save_gguf(weights: *const max_weights_t, path: *const c_char, name: *const c_char) -> St;
    pub fn max_tensor_quantize(tensor: *const max_tensor_t, encoding: max_quant_encoding_t, out_tensor: *mut *mut max_tensor_t) -> St;
    pub fn max_model_create_from_weights(compiled: *mut max_compiled_model_t, weights: *const max_weights_t, out_model: *mut *mut max_model_t) -> St;
    pub fn max_model_reload_from_weights(model: *mut max_model_t, weights: *const max_weights_t) -> St;

    // device graphs (ABI 1.4): capture a run under a key, replay it into the same outputs
    pub fn max_model_capture(model: *mut max_model_t, graph_keys: *const u64, num_keys: usize, inputs: *const *mut max_tensor_t, num_inputs: usize, out_outputs: *mut *mut max_tensor_list_t) -> St;
    pub fn max_model_replay(model: *mut max_model_t, graph_keys: *const u64, num_keys: usize, inputs: *const *mut max_tensor_t, num_inputs: usize) -> St;
    pub fn max_model_debug_verify_replay(model: *mut max_model_t, graph_keys: *const u64, num_keys: usize, inputs: *const *mut max_tensor_t, num_inputs: usize) -> St;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};

    #[test]
    fn layouts_match_header() {
        // x86_64 / aarch64 LP64 layouts of the header's structs.
        assert_eq!(size_of::<DLDevice>(), 8);
        assert_eq!(size_of::<DLDataType>(), 4);
        assert_eq!(size_of::<DLTensor>(), 48);
        assert_eq!(size_of::<DLManagedTensor>(), 64);
        assert_eq!(size_of::<DLManagedTensorVersioned>(), 80);
        assert_eq!(size_of::<max_context_options_t>(), 32);
        assert_eq!(size_of::<max_dim_t>(), 16);
        assert_eq!(align_of::<max_dim_t>(), 8);
        assert_eq!(size_of::<max_compile_options_t>(), 48);
        assert_eq!(align_of::<max_compile_options_t>(), 8);
    }

    #[test]
    fn compile_options_offsets_match_header() {
        // offsetof() in the header's layout: size_t, int32, int32, uint64, int64, int32
        // (ABI 1.4), const max_device_t* (ABI 1.5).
        let o: max_compile_options_t = unsafe { std::mem::zeroed() };
        let base = &o as *const _ as usize;
        assert_eq!(&o.enable_fusion as *const _ as usize - base, 8);
        assert_eq!(&o.enable_constant_folding as *const _ as usize - base, 12);
        assert_eq!(&o.fold_limit_bytes as *const _ as usize - base, 16);
        assert_eq!(&o.plan_cache_capacity as *const _ as usize - base, 24);
        assert_eq!(&o.copy_inputs_to_device as *const _ as usize - base, 32);
        assert_eq!(&o.file_device as *const _ as usize - base, 40);
    }

    #[test]
    fn compile_options_init_fills_defaults() {
        let mut o: max_compile_options_t = unsafe { std::mem::zeroed() };
        let st = unsafe { max_compile_options_init(&mut o, size_of::<max_compile_options_t>()) };
        assert!(st.is_null(), "max_compile_options_init failed");
        assert_eq!(o.struct_size, size_of::<max_compile_options_t>());
        assert_eq!((o.enable_fusion, o.enable_constant_folding), (1, 1));
        assert_eq!(o.fold_limit_bytes, 1 << 20);
        assert_eq!(o.plan_cache_capacity, 16);
        assert_eq!(o.copy_inputs_to_device, 0);
        assert!(o.file_device.is_null());
    }

    #[test]
    fn abi_version_links() {
        unsafe {
            assert_eq!(max_abi_version() >> 16, MAX_ABI_VERSION_MAJOR);
            let st = max_check_abi(MAX_ABI_VERSION);
            assert!(st.is_null(), "max_check_abi failed");
        }
    }
}
