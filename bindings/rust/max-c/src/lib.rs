//! Safe Rust bindings for libmax_c (the C ABI in `include/max_c.h`, ABI 1.8), named like
//! Modular's MAX: a [`Context`] (InferenceSession) compiles a [`Graph`] built with typed op
//! helpers ([`ops`](mod@ops)), or a MAXG or ONNX file ([`Context::compile_file`]), into a
//! [`CompiledModel`]; binding weights (tensors by name, or a [`Weights`] registry filled from
//! safetensors/GGUF files or memory) gives a [`Model`] that executes by position or by name.
//! [`Tensor`]s take and give Rust slices and exchange memory through DLPack.
//!
//! ```
//! use max_c::*;
//!
//! fn main() -> Result<()> {
//!     let g = Graph::new("mlp")?;
//!     let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(4)])?;
//!     let w = g.add_weight("w", DType::Float32, [4, 3])?;
//!     g.set_named_outputs(&[("y", &x.matmul(&w)?.relu()?)])?;
//!     // Or a file: ctx.compile_file("model.onnx", &CompileOptions::default())?
//!     let compiled = Context::new(0)?.compile(&g, &CompileOptions::default())?;
//!     // Or a registry: compiled.init_from_weights(&Weights::from_files(["w.safetensors"])?)?
//!     let model = compiled.init(&[("w", &Tensor::from_slice(&[1.0f32; 12], &[4, 3])?)])?;
//!     let y = model.execute(&[&Tensor::from_slice(&[0.5f32; 8], &[2, 4])?])?;
//!     println!("{:?}", y[0].to_vec::<f32>()?); // [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
//! #   assert_eq!(y[0].to_vec::<f32>()?, [2.0; 6]);
//!     Ok(())
//! }
//! ```
//!
//! * Every fallible call returns [`Result<T>`]; the library's status (code + message) becomes an
//!   [`Error`] and the status object is always released. Bad input is an `Err`, never a panic.
//! * The ABI is checked once ([`check_abi`]) before the first handle is made: a library older
//!   than ABI 1.4 ([`MIN_ABI_VERSION`]) gives FAILED_PRECONDITION with the library's readable
//!   message. The ABI 1.5 additions ([`CompileOptions::file_device`],
//!   [`Graph::add_constant_on`]) and 1.6 ([`Graph::cond`], [`Graph::while_loop`],
//!   [`Graph::call`]) are used only when asked for, and give UNIMPLEMENTED on an older
//!   library; everything else works with it. The 1.7 dtypes ([`DType::UInt2`], [`DType::Int2`],
//!   [`DType::UInt4`], [`DType::Int4`], [`DType::Float8E8m0fnu`]) are unknown codes to an
//!   older library, which refuses them as it refuses any unknown dtype.
//! * Handles release on `Drop`; `Clone` retains where sharing is sound. Children keep their
//!   parents alive, so handles may be dropped in any order.
//! * `Context`, `Device` and `Tensor` are `Send + Sync` (the header says thread-safe);
//!   `Graph` and `Attrs` are `Send` but not `Sync` (they need external synchronization) and
//!   are not `Clone` (a retained second handle could be mutated from another thread).
//! * Graph [`Value`]s borrow their [`Graph`], so they cannot outlive it.
//! * The engine ([`Context::compile`], [`CompiledModel`], [`Model`]) is `Send + Sync`:
//!   many threads may execute one model at once. [`Model::capture`] records a run under a
//!   key and [`Model::replay`] reruns it (MAX's device graphs), rewriting the capture's
//!   outputs in place.
//! * [`Weights`] (a registry of named tensors from safetensors/GGUF files or memory) is
//!   `Send + Sync`; adding to it takes `&mut self`, which is the synchronization the header
//!   asks for.
//! * The enums that mirror the header's code sets ([`DType`], [`LogLevel`], [`DeviceKind`],
//!   [`DeviceRef`], [`InputArity`], [`AttrKind`], [`AttrPresence`], [`QuantEncoding`]) are
//!   `#[non_exhaustive]`: a new ABI minor may add codes (1.7 added five dtypes), and a
//!   variant added then must not break a caller's `match`, so one needs a `_` arm.
//!
//! The compiler enforces these rules. A value does not outlive its graph:
//!
//! ```compile_fail,E0597
//! # use max_c::*;
//! let x = {
//!     let g = Graph::new("g").unwrap();
//!     g.add_input("x", DType::Float32, [2]).unwrap()
//! };
//! ```
//!
//! A graph is not shared between threads:
//!
//! ```compile_fail,E0277
//! # use max_c::*;
//! let g = Graph::new("g").unwrap();
//! std::thread::scope(|s| { s.spawn(|| g.num_ops()); });
//! ```
//!
//! A shared registry is read-only:
//!
//! ```compile_fail,E0596
//! # use max_c::*;
//! let w = Weights::new().unwrap();
//! let shared = &w;
//! shared.add_slice("a", &[1.0f32], &[1]).unwrap();
//! ```
//!
//! A `match` on a dtype, outside this crate, needs an arm for dtypes yet to come:
//!
//! ```compile_fail,E0004
//! # use max_c::*;
//! fn bits(d: DType) -> u32 {
//!     match d {
//!         DType::Bool | DType::Float8E8m0fnu | DType::Float8E4m3fn | DType::Float8E4m3fnuz
//!         | DType::Float8E5m2 | DType::Float8E5m2fnuz | DType::UInt8 | DType::Int8 => 8,
//!         DType::Float4E2m1fn | DType::UInt4 | DType::Int4 => 4,
//!         DType::UInt2 | DType::Int2 => 2,
//!         DType::Float16 | DType::BFloat16 | DType::UInt16 | DType::Int16 => 16,
//!         DType::Float32 | DType::UInt32 | DType::Int32 => 32,
//!         DType::Float64 | DType::UInt64 | DType::Int64 => 64,
//!     }
//! }
//! ```
//!
//! ```
//! # use max_c::*;
//! fn is_packed(d: DType) -> bool {
//!     match d {
//!         DType::Float4E2m1fn | DType::UInt4 | DType::Int4 | DType::UInt2 | DType::Int2 => true,
//!         _ => false,
//!     }
//! }
//! assert!(is_packed(DType::Int4) && !is_packed(DType::Float8E8m0fnu));
//! ```
//!
//! Binaries that use this crate need libmax_c at run time; the tests of this crate get an
//! rpath to the pkg-config libdir (see build.rs). A downstream crate can do the same with
//! `DEP_MAX_C_LIBDIR`-style metadata or LD_LIBRARY_PATH.

#![warn(missing_docs)]

use max_c_sys as sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr;
use std::sync::OnceLock;

pub use max_c_sys as ffi;

mod engine;
mod graphs;
pub mod ops;
mod weights;
pub use engine::{CompileOptions, CompiledModel, Model, RunOptions, TensorSpec};
pub use ops::{Conv2d, GeluApproximation, Index, Pool2d};
pub use weights::{BlockParameters, QuantEncoding, WeightInfo, Weights};

// ======================================================================================
// Errors
// ======================================================================================

/// A failed call: the library's status code (`MAX_STATUS_*`, 1..16) and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The status code, `MAX_STATUS_*` (1..=16; see [`Error::code_name`]).
    pub code: i32,
    /// What was wrong, as the library (or the binding) worded it.
    pub message: String,
}

impl Error {
    /// An error raised by the binding itself (not by the library).
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Error { code, message: message.into() }
    }
    /// The code's upper-case name, e.g. "INVALID_ARGUMENT".
    pub fn code_name(&self) -> &'static str {
        unsafe { static_str(sys::max_status_code_name(self.code)) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code_name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Every fallible call of this crate returns this.
pub type Result<T> = std::result::Result<T, Error>;

/// Turns a status into a `Result`, always releasing it.
fn check(status: *mut sys::max_status_t) -> Result<()> {
    if status.is_null() {
        return Ok(());
    }
    unsafe {
        let code = sys::max_status_code(status);
        let msg = sys::max_status_message(status);
        let message = if msg.is_null() { String::new() } else { CStr::from_ptr(msg).to_string_lossy().into_owned() };
        sys::max_status_release(status);
        Err(Error { code, message })
    }
}

unsafe fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        ""
    } else {
        CStr::from_ptr(p).to_str().unwrap_or("")
    }
}

unsafe fn owned_str(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, format!("string {s:?} contains a NUL byte")))
}

// ======================================================================================
// Versions, ABI check, logging
// ======================================================================================

/// The ABI version the bindings were written against, packed as `(major << 16) | minor`.
pub const ABI_VERSION: u32 = sys::MAX_ABI_VERSION;

/// The oldest library ABI the bindings run against, packed like [`ABI_VERSION`]: 1.4, whose
/// device graphs ([`Model::capture`]) they link. Newer features check the library's version
/// when they are used (see [`check_abi`]).
pub const MIN_ABI_VERSION: u32 = 1 << 16 | 4;

/// The ABI version of the loaded library.
pub fn abi_version() -> u32 {
    unsafe { sys::max_abi_version() }
}

/// The library's release version, e.g. "1.1.0".
pub fn version_string() -> &'static str {
    unsafe { static_str(sys::max_version_string()) }
}

/// Checks (once per process; the result is cached) that the loaded library serves
/// [`MIN_ABI_VERSION`], the oldest header these bindings need. Called automatically before
/// the first handle is made. A library between that and [`ABI_VERSION`] works for everything
/// but the newer features, which say so (UNIMPLEMENTED) when used.
pub fn check_abi() -> Result<()> {
    static ABI: OnceLock<Result<()>> = OnceLock::new();
    ABI.get_or_init(|| check(unsafe { sys::max_check_abi(MIN_ABI_VERSION) })).clone()
}

/// UNIMPLEMENTED unless the loaded library has ABI 1.`minor` (same major) for `what`.
pub(crate) fn require_abi_minor(minor: u32, what: &str) -> Result<()> {
    let have = abi_version();
    if have >> 16 == sys::MAX_ABI_VERSION_MAJOR && have & 0xFFFF >= minor {
        return Ok(());
    }
    Err(Error::new(
        sys::MAX_STATUS_UNIMPLEMENTED,
        format!("{what} needs libmax_c ABI {}.{minor}; the loaded library has ABI {}.{}", sys::MAX_ABI_VERSION_MAJOR, have >> 16, have & 0xFFFF),
    ))
}

extern "C" {
    // From the C library (libc, or libdl before glibc 2.34, which std links).
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

type AddConstantOnFn = unsafe extern "C" fn(
    *mut sys::max_graph_t,
    *const sys::max_tensor_t,
    sys::max_device_ref_kind_t,
    i32,
    *mut *mut sys::max_value_t,
) -> *mut sys::max_status_t;

/// `max_graph_add_constant_on` (ABI 1.5), looked up at run time rather than linked, so that
/// these bindings still link and load with a 1.4 library (whose symbol table lacks it).
fn add_constant_on_fn() -> Result<AddConstantOnFn> {
    static FN: OnceLock<Option<AddConstantOnFn>> = OnceLock::new();
    require_abi_minor(5, "a constant placed on a device (max_graph_add_constant_on)")?;
    let f = FN.get_or_init(|| {
        // RTLD_DEFAULT (NULL on glibc) searches this object's scope, which holds libmax_c.
        let p = unsafe { dlsym(ptr::null_mut(), c"max_graph_add_constant_on".as_ptr()) };
        // SAFETY: the symbol is the header's function, whose signature the type mirrors (and
        // max-c-sys's header test checks the declaration).
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, AddConstantOnFn>(p) })
    });
    // A library claiming 1.5 exports it; the lookup can only miss for an odd link setup.
    f.ok_or_else(|| Error::new(sys::MAX_STATUS_UNIMPLEMENTED, "max_graph_add_constant_on is not found in the loaded libmax_c"))
}

/// The library's process-wide log level (messages go to stderr; the default is `Warning`,
/// or what the environment variable MAX_C_LOG_LEVEL says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum LogLevel {
    /// Nothing is printed.
    Off = 0,
    /// Errors only.
    Error = 1,
    /// Errors and warnings (the default).
    Warning = 2,
    /// Also progress messages.
    Info = 3,
    /// Also details for debugging.
    Debug = 4,
    /// Everything.
    Trace = 5,
}

/// Sets the process-wide log level. Thread-safe.
pub fn set_log_level(level: LogLevel) -> Result<()> {
    check(unsafe { sys::max_log_set_level(level as i32) })
}

/// The process-wide log level. Thread-safe.
pub fn log_level() -> LogLevel {
    match unsafe { sys::max_log_level() } {
        0 => LogLevel::Off,
        1 => LogLevel::Error,
        2 => LogLevel::Warning,
        3 => LogLevel::Info,
        4 => LogLevel::Debug,
        _ => LogLevel::Trace,
    }
}

// ======================================================================================
// DType
// ======================================================================================

/// MAX's element types, with MAX's own numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum DType {
    /// bool: one byte, 0 or 1.
    Bool = 1,
    /// 4-bit float (e2m1, finite), packed two per byte.
    Float4E2m1fn = 64,
    /// 8-bit exponent alone (e8m0, unsigned, no zero; 0xFF is NaN): the MX formats' scale.
    Float8E8m0fnu = 73,
    /// 8-bit float e4m3 (finite).
    Float8E4m3fn = 75,
    /// 8-bit float e4m3 (finite, unsigned zero).
    Float8E4m3fnuz = 76,
    /// 8-bit float e5m2.
    Float8E5m2 = 77,
    /// 8-bit float e5m2 (finite, unsigned zero).
    Float8E5m2fnuz = 78,
    /// IEEE half precision.
    Float16 = 79,
    /// bfloat16.
    BFloat16 = 80,
    /// IEEE single precision.
    Float32 = 81,
    /// IEEE double precision.
    Float64 = 82,
    /// 2-bit unsigned integer, packed four per byte, the first in the lowest bits.
    UInt2 = 130,
    /// 2-bit signed integer, packed four per byte, the first in the lowest bits.
    Int2 = 131,
    /// 4-bit unsigned integer, packed two per byte, the first in the low nibble.
    UInt4 = 132,
    /// 4-bit signed integer, packed two per byte, the first in the low nibble.
    Int4 = 133,
    /// 8-bit unsigned integer (also the storage of quantized weights).
    UInt8 = 134,
    /// 8-bit signed integer.
    Int8 = 135,
    /// 16-bit unsigned integer.
    UInt16 = 136,
    /// 16-bit signed integer.
    Int16 = 137,
    /// 32-bit unsigned integer.
    UInt32 = 138,
    /// 32-bit signed integer.
    Int32 = 139,
    /// 64-bit unsigned integer.
    UInt64 = 140,
    /// 64-bit signed integer.
    Int64 = 141,
}

impl DType {
    /// Every dtype, in the order of MAX's codes.
    pub const ALL: [DType; 23] = [
        DType::Bool, DType::Float4E2m1fn, DType::Float8E8m0fnu, DType::Float8E4m3fn, DType::Float8E4m3fnuz,
        DType::Float8E5m2, DType::Float8E5m2fnuz, DType::Float16, DType::BFloat16,
        DType::Float32, DType::Float64, DType::UInt2, DType::Int2, DType::UInt4, DType::Int4,
        DType::UInt8, DType::Int8, DType::UInt16, DType::Int16, DType::UInt32, DType::Int32,
        DType::UInt64, DType::Int64,
    ];

    /// The dtype with MAX's code `code`, if any.
    pub fn from_raw(code: i32) -> Option<DType> {
        DType::ALL.iter().copied().find(|d| *d as i32 == code)
    }
    fn from_raw_res(code: i32) -> Result<DType> {
        DType::from_raw(code).ok_or_else(|| Error::new(sys::MAX_STATUS_INTERNAL, format!("unknown dtype code {code} from the library")))
    }
    /// MAX's code (`MAX_DTYPE_*`).
    pub fn raw(self) -> i32 {
        self as i32
    }
    /// Looks a dtype up by MAX's member name ("float32").
    pub fn from_name(name: &str) -> Result<DType> {
        let c = cstring(name)?;
        let mut out = 0;
        check(unsafe { sys::max_dtype_from_name(c.as_ptr(), &mut out) })?;
        DType::from_raw_res(out)
    }
    /// MAX's member name, e.g. "float32".
    pub fn name(self) -> &'static str {
        unsafe { static_str(sys::max_dtype_name(self as i32)) }
    }
    /// Bits of one element (4 for `Float4E2m1fn` and `Int4`, 2 for `Int2`).
    pub fn size_in_bits(self) -> usize {
        unsafe { sys::max_dtype_size_in_bits(self as i32) as usize }
    }
    /// Bytes of one element, sub-byte types rounded up.
    pub fn size_in_bytes(self) -> usize {
        unsafe { sys::max_dtype_size_in_bytes(self as i32) as usize }
    }
    /// The alignment an element needs, in bytes.
    pub fn align(self) -> usize {
        unsafe { sys::max_dtype_align(self as i32) as usize }
    }
    /// Whether this is a floating-point type (float8, half and wider).
    pub fn is_float(self) -> bool {
        unsafe { sys::max_dtype_is_float(self as i32) != 0 }
    }
    /// Whether this is one of the 8-bit floats (`Float8E8m0fnu` too).
    pub fn is_float8(self) -> bool {
        unsafe { sys::max_dtype_is_float8(self as i32) != 0 }
    }
    /// Whether this is `Float16` or `BFloat16`.
    pub fn is_half(self) -> bool {
        unsafe { sys::max_dtype_is_half(self as i32) != 0 }
    }
    /// Whether this is an integer type (signed or not).
    pub fn is_integral(self) -> bool {
        unsafe { sys::max_dtype_is_integral(self as i32) != 0 }
    }
    /// Whether this is a signed integer type.
    pub fn is_signed_integral(self) -> bool {
        unsafe { sys::max_dtype_is_signed_integral(self as i32) != 0 }
    }
    /// Whether this is an unsigned integer type.
    pub fn is_unsigned_integral(self) -> bool {
        unsafe { sys::max_dtype_is_unsigned_integral(self as i32) != 0 }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Rust element types with a MAX dtype of the same size and layout.
///
/// # Safety
/// `DTYPE` must have exactly `size_of::<Self>()` bytes per element and every bit pattern the
/// library may produce for it must be a valid `Self`.
pub unsafe trait Element: Copy + 'static {
    /// The MAX dtype of `Self`.
    const DTYPE: DType;
}
unsafe impl Element for f32 { const DTYPE: DType = DType::Float32; }
unsafe impl Element for f64 { const DTYPE: DType = DType::Float64; }
unsafe impl Element for i8 { const DTYPE: DType = DType::Int8; }
unsafe impl Element for i16 { const DTYPE: DType = DType::Int16; }
unsafe impl Element for i32 { const DTYPE: DType = DType::Int32; }
unsafe impl Element for i64 { const DTYPE: DType = DType::Int64; }
unsafe impl Element for u8 { const DTYPE: DType = DType::UInt8; }
unsafe impl Element for u16 { const DTYPE: DType = DType::UInt16; }
unsafe impl Element for u32 { const DTYPE: DType = DType::UInt32; }
unsafe impl Element for u64 { const DTYPE: DType = DType::UInt64; }

// ======================================================================================
// Devices and context
// ======================================================================================

/// The kind of a [`Device`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceKind {
    /// The host.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
    /// An AMD GPU.
    Hip,
}

impl DeviceKind {
    fn raw(self) -> i32 {
        match self {
            DeviceKind::Cpu => sys::MAX_DEVICE_KIND_CPU,
            DeviceKind::Cuda => sys::MAX_DEVICE_KIND_CUDA,
            DeviceKind::Hip => sys::MAX_DEVICE_KIND_HIP,
        }
    }
}

/// A device handle (refcounted; thread-safe).
pub struct Device {
    ptr: *mut sys::max_device_t,
}
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Device {
    /// The host CPU.
    pub fn cpu() -> Result<Device> {
        Device::new(DeviceKind::Cpu, 0)
    }
    /// The first accelerator (NOT_FOUND on a machine without one).
    pub fn accelerator() -> Result<Device> {
        Device::new(DeviceKind::Cuda, -1)
    }
    /// The device of `kind` and `id` (devices are singletons per kind and id; for the CPU
    /// id -1 and 0 both mean the host, for an accelerator -1 means the first one).
    ///
    /// Errors: NOT_FOUND when no such device exists; FAILED_PRECONDITION when the library's ABI
    /// is too old.
    pub fn new(kind: DeviceKind, id: i32) -> Result<Device> {
        check_abi()?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_device_create(kind.raw(), id, &mut p) })?;
        Ok(Device { ptr: p })
    }
    /// The device's kind.
    pub fn kind(&self) -> Result<DeviceKind> {
        let mut k = 0;
        check(unsafe { sys::max_device_kind(self.ptr, &mut k) })?;
        Ok(match k {
            sys::MAX_DEVICE_KIND_CUDA => DeviceKind::Cuda,
            sys::MAX_DEVICE_KIND_HIP => DeviceKind::Hip,
            _ => DeviceKind::Cpu,
        })
    }
    /// Zero-based index among devices of its kind; always 0 for the CPU.
    pub fn id(&self) -> Result<i32> {
        let mut v = 0;
        check(unsafe { sys::max_device_id(self.ptr, &mut v) })?;
        Ok(v)
    }
    /// "cpu" or "gpu".
    pub fn label(&self) -> Result<String> {
        let mut s = ptr::null();
        check(unsafe { sys::max_device_label(self.ptr, &mut s) })?;
        Ok(unsafe { owned_str(s) })
    }
    /// "cpu", "cuda" or "hip".
    pub fn api(&self) -> Result<String> {
        let mut s = ptr::null();
        check(unsafe { sys::max_device_api(self.ptr, &mut s) })?;
        Ok(unsafe { owned_str(s) })
    }
    /// Whether this is the host CPU.
    pub fn is_host(&self) -> Result<bool> {
        let mut v = 0;
        check(unsafe { sys::max_device_is_host(self.ptr, &mut v) })?;
        Ok(v != 0)
    }
    /// Waits for every operation queued on the device.
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::max_device_synchronize(self.ptr) })
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_device_t {
        self.ptr
    }
}

impl Clone for Device {
    fn clone(&self) -> Self {
        unsafe { sys::max_device_retain(self.ptr) };
        Device { ptr: self.ptr }
    }
}
impl Drop for Device {
    fn drop(&mut self) {
        unsafe { sys::max_device_release(self.ptr) }
    }
}
impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({}:{})", self.label().unwrap_or_default(), self.id().unwrap_or(-1))
    }
}
impl PartialEq for Device {
    /// Devices are singletons per (kind, id).
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}
impl Eq for Device {}

/// Number of accelerators this process can use.
pub fn accelerator_count() -> Result<i32> {
    check_abi()?;
    let mut n = 0;
    check(unsafe { sys::max_accelerator_count(&mut n) })?;
    Ok(n)
}

/// MAX's InferenceSession: devices plus a thread team (refcounted; thread-safe).
pub struct Context {
    ptr: *mut sys::max_context_t,
}
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    /// A CPU context with `num_threads` threads (0: one per core).
    pub fn new(num_threads: i32) -> Result<Context> {
        Context::with_devices(num_threads, &[])
    }
    /// A context over `devices` (empty: the CPU alone).
    pub fn with_devices(num_threads: i32, devices: &[&Device]) -> Result<Context> {
        check_abi()?;
        let mut opts: sys::max_context_options_t = unsafe { std::mem::zeroed() };
        check(unsafe { sys::max_context_options_init(&mut opts, std::mem::size_of::<sys::max_context_options_t>()) })?;
        let raw: Vec<*mut sys::max_device_t> = devices.iter().map(|d| d.ptr).collect();
        opts.num_threads = num_threads;
        if !raw.is_empty() {
            opts.devices = raw.as_ptr();
            opts.num_devices = raw.len();
        }
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_context_create(&opts, &mut p) })?;
        Ok(Context { ptr: p })
    }
    /// Threads of the context's team.
    pub fn num_threads(&self) -> Result<i32> {
        let mut v = 0;
        check(unsafe { sys::max_context_num_threads(self.ptr, &mut v) })?;
        Ok(v)
    }
    /// The devices the context may use (the CPU first).
    pub fn devices(&self) -> Result<Vec<Device>> {
        let mut n = 0usize;
        check(unsafe { sys::max_context_num_devices(self.ptr, &mut n) })?;
        (0..n)
            .map(|i| {
                let mut p = ptr::null_mut();
                check(unsafe { sys::max_context_device(self.ptr, i, &mut p) })?;
                Ok(Device { ptr: p })
            })
            .collect()
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_context_t {
        self.ptr
    }
}
impl Clone for Context {
    fn clone(&self) -> Self {
        unsafe { sys::max_context_retain(self.ptr) };
        Context { ptr: self.ptr }
    }
}
impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Context(num_threads={:?})", self.num_threads().ok())
    }
}
impl Drop for Context {
    fn drop(&mut self) {
        unsafe { sys::max_context_release(self.ptr) }
    }
}

// ======================================================================================
// Tensors
// ======================================================================================

/// A driver tensor: storage on a device plus dtype, shape and strides (in elements).
/// Refcounted; `Clone` shares the storage (use [`Tensor::copy`] for a deep copy).
pub struct Tensor {
    ptr: *mut sys::max_tensor_t,
}
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

fn rank_of(shape: &[i64]) -> Result<i32> {
    i32::try_from(shape.len()).map_err(|_| Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, "rank too large"))
}

unsafe extern "C" fn drop_boxed_vec<T>(user_data: *mut c_void) {
    drop(Box::from_raw(user_data as *mut Vec<T>));
}

impl Tensor {
    /// A zero-filled contiguous CPU tensor.
    pub fn zeros(dtype: DType, shape: &[i64]) -> Result<Tensor> {
        Tensor::zeros_on(None, dtype, shape)
    }
    /// A zero-filled contiguous tensor on `device` (`None`: the CPU).
    ///
    /// Errors: INVALID_ARGUMENT for a negative dim or a rank over 64; RESOURCE_EXHAUSTED when the
    /// size overflows or memory runs out.
    pub fn zeros_on(device: Option<&Device>, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        check_abi()?;
        let mut p = ptr::null_mut();
        let dev = device.map_or(ptr::null_mut(), |d| d.ptr);
        check(unsafe { sys::max_tensor_create(dev, dtype as i32, shape.as_ptr(), rank_of(shape)?, &mut p) })?;
        Ok(Tensor { ptr: p })
    }
    /// A CPU tensor holding a copy of `data` (row-major) with `shape`. The library checks
    /// that the byte sizes agree.
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) };
        Tensor::from_bytes(T::DTYPE, shape, bytes)
    }
    /// A CPU tensor holding a copy of raw row-major bytes of `dtype` (any dtype, sub-byte
    /// types packed).
    pub fn from_bytes(dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Tensor> {
        check_abi()?;
        let mut p = ptr::null_mut();
        check(unsafe {
            sys::max_tensor_create_from_host(ptr::null_mut(), dtype as i32, shape.as_ptr(), rank_of(shape)?,
                bytes.as_ptr() as *const c_void, bytes.len(), &mut p)
        })?;
        Ok(Tensor { ptr: p })
    }
    /// A CPU tensor over `data` without copying, with element `strides` (None: contiguous).
    /// The tensor owns the vector and frees it when the last view goes away. Strides must be
    /// non-negative and stay inside `data`.
    pub fn from_vec_strided<T: Element>(data: Vec<T>, shape: &[i64], strides: Option<&[i64]>) -> Result<Tensor> {
        check_abi()?;
        let bad = |m: String| Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, m);
        let contiguous: Vec<i64>;
        let st = match strides {
            Some(s) => {
                if s.len() != shape.len() {
                    return Err(bad(format!("{} strides for rank {}", s.len(), shape.len())));
                }
                s
            }
            None => {
                let mut c = vec![1i64; shape.len()];
                for i in (0..shape.len().saturating_sub(1)).rev() {
                    c[i] = c[i + 1] * shape[i + 1].max(0);
                }
                contiguous = c;
                &contiguous
            }
        };
        if shape.iter().any(|&d| d < 0) || st.iter().any(|&s| s < 0) {
            return Err(bad("negative dims or strides".into()));
        }
        if !shape.contains(&0) {
            let mut last: i128 = 0;
            for (&d, &s) in shape.iter().zip(st) {
                last += (d as i128 - 1) * s as i128;
            }
            if last >= data.len() as i128 {
                return Err(bad(format!("strides {st:?} with shape {shape:?} reach element {last} of a buffer of {}", data.len())));
            }
        }
        let mut boxed = Box::new(data);
        let data_ptr = boxed.as_mut_ptr() as *mut c_void;
        let user = Box::into_raw(boxed) as *mut c_void;
        let mut p = ptr::null_mut();
        let status = unsafe {
            sys::max_tensor_create_borrowed(T::DTYPE as i32, shape.as_ptr(), rank_of(shape)?,
                st.as_ptr(), data_ptr, 0, Some(drop_boxed_vec::<T>), user, &mut p)
        };
        if let Err(e) = check(status) {
            // On failure the library never calls release: the memory is still ours.
            unsafe { drop_boxed_vec::<T>(user) };
            return Err(e);
        }
        Ok(Tensor { ptr: p })
    }

    /// The element type.
    pub fn dtype(&self) -> Result<DType> {
        let mut d = 0;
        check(unsafe { sys::max_tensor_dtype(self.ptr, &mut d) })?;
        DType::from_raw_res(d)
    }
    /// The number of dims (0 for a scalar).
    pub fn rank(&self) -> Result<usize> {
        let mut r = 0;
        check(unsafe { sys::max_tensor_rank(self.ptr, &mut r) })?;
        Ok(r as usize)
    }
    /// The dims (empty for a scalar).
    pub fn shape(&self) -> Result<Vec<i64>> {
        let r = self.rank()?;
        let mut d = ptr::null();
        check(unsafe { sys::max_tensor_dims(self.ptr, &mut d) })?;
        Ok(if r == 0 || d.is_null() { vec![] } else { unsafe { std::slice::from_raw_parts(d, r).to_vec() } })
    }
    /// Strides in elements.
    pub fn strides(&self) -> Result<Vec<i64>> {
        let r = self.rank()?;
        let mut s = ptr::null();
        check(unsafe { sys::max_tensor_strides(self.ptr, &mut s) })?;
        Ok(if r == 0 || s.is_null() { vec![] } else { unsafe { std::slice::from_raw_parts(s, r).to_vec() } })
    }
    /// The number of elements (1 for a scalar).
    pub fn num_elements(&self) -> Result<i64> {
        let mut n = 0;
        check(unsafe { sys::max_tensor_num_elements(self.ptr, &mut n) })?;
        Ok(n)
    }
    /// Bytes the elements occupy when contiguous.
    pub fn byte_size(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::max_tensor_byte_size(self.ptr, &mut n) })?;
        Ok(n)
    }
    /// The device holding the storage.
    pub fn device(&self) -> Result<Device> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_tensor_device(self.ptr, &mut p) })?;
        Ok(Device { ptr: p })
    }
    /// Whether the elements are dense and row-major.
    pub fn is_contiguous(&self) -> Result<bool> {
        let mut v = 0;
        check(unsafe { sys::max_tensor_is_contiguous(self.ptr, &mut v) })?;
        Ok(v != 0)
    }
    /// Whether writes through the library are refused (e.g. a view of a weights file).
    pub fn is_read_only(&self) -> Result<bool> {
        let mut v = 0;
        check(unsafe { sys::max_tensor_is_read_only(self.ptr, &mut v) })?;
        Ok(v != 0)
    }
    /// The elements in row-major order as raw bytes (works for strided views).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let n = self.byte_size()?;
        let mut out = vec![0u8; n];
        check(unsafe { sys::max_tensor_to_host(self.ptr, out.as_mut_ptr() as *mut c_void, n) })?;
        Ok(out)
    }
    /// The elements in row-major order; INVALID_ARGUMENT when `T` is not the tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let dt = self.dtype()?;
        if dt != T::DTYPE {
            return Err(Error::new(sys::MAX_STATUS_INVALID_ARGUMENT,
                format!("tensor has dtype {dt}, cannot read it as {}", T::DTYPE)));
        }
        let n = self.num_elements()? as usize;
        let mut out: Vec<T> = Vec::with_capacity(n);
        let bytes = n * std::mem::size_of::<T>();
        check(unsafe { sys::max_tensor_to_host(self.ptr, out.as_mut_ptr() as *mut c_void, bytes) })?;
        unsafe { out.set_len(n) };
        Ok(out)
    }
    /// A deep contiguous copy on the same device.
    pub fn copy(&self) -> Result<Tensor> {
        self.copy_to(None)
    }
    /// A deep contiguous copy on `device` (`None`: this tensor's device).
    pub fn copy_to(&self, device: Option<&Device>) -> Result<Tensor> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_tensor_copy(self.ptr, device.map_or(ptr::null_mut(), |d| d.ptr), &mut p) })?;
        Ok(Tensor { ptr: p })
    }
    /// Copies `src`'s elements into this tensor (same dtype and shape).
    pub fn copy_from(&self, src: &Tensor) -> Result<()> {
        check(unsafe { sys::max_tensor_copy_from(self.ptr, src.ptr) })
    }
    /// A view of this contiguous tensor's memory with another dtype and shape (same byte
    /// size).
    pub fn view(&self, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_tensor_view(self.ptr, dtype as i32, shape.as_ptr(), rank_of(shape)?, &mut p) })?;
        Ok(Tensor { ptr: p })
    }
    /// Exports to DLPack 1.x, sharing memory.
    pub fn to_dlpack(&self) -> Result<DlPackTensor> {
        let mut m = ptr::null_mut();
        check(unsafe { sys::max_tensor_to_dlpack(self.ptr, &mut m) })?;
        Ok(DlPackTensor { ptr: m })
    }
    /// Imports a DLPack 1.x tensor. On success the tensor owns it (its deleter runs once when
    /// the last view goes away); on failure it is dropped here, which calls its deleter.
    pub fn from_dlpack(managed: DlPackTensor) -> Result<Tensor> {
        check_abi()?;
        let raw = managed.into_raw();
        let mut p = ptr::null_mut();
        let st = unsafe { sys::max_tensor_from_dlpack(raw, &mut p) };
        if let Err(e) = check(st) {
            drop(unsafe { DlPackTensor::from_raw(raw) });
            return Err(e);
        }
        Ok(Tensor { ptr: p })
    }
    /// The DLPack device of the storage (for `__dlpack_device__`-style protocols).
    pub fn dlpack_device(&self) -> Result<sys::DLDevice> {
        let mut d = sys::DLDevice { device_type: 0, device_id: 0 };
        check(unsafe { sys::max_tensor_dlpack_device(self.ptr, &mut d) })?;
        Ok(d)
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_tensor_t {
        self.ptr
    }
    /// Takes ownership of one reference to a raw tensor handle.
    ///
    /// # Safety
    /// `ptr` must be a live tensor handle whose reference the caller gives up.
    pub unsafe fn from_raw(ptr: *mut sys::max_tensor_t) -> Tensor {
        Tensor { ptr }
    }
}
impl Clone for Tensor {
    fn clone(&self) -> Self {
        unsafe { sys::max_tensor_retain(self.ptr) };
        Tensor { ptr: self.ptr }
    }
}
impl Drop for Tensor {
    fn drop(&mut self) {
        unsafe { sys::max_tensor_release(self.ptr) }
    }
}
impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor").field("dtype", &self.dtype().ok()).field("shape", &self.shape().ok()).finish()
    }
}

/// An owned `DLManagedTensorVersioned*`: dropping it calls its deleter (once).
pub struct DlPackTensor {
    ptr: *mut sys::DLManagedTensorVersioned,
}
unsafe impl Send for DlPackTensor {}

impl DlPackTensor {
    /// # Safety
    /// `ptr` must be a valid DLPack 1.x managed tensor that the caller gives up.
    pub unsafe fn from_raw(ptr: *mut sys::DLManagedTensorVersioned) -> DlPackTensor {
        DlPackTensor { ptr }
    }
    /// Gives up ownership; the caller must arrange for the deleter to be called.
    pub fn into_raw(self) -> *mut sys::DLManagedTensorVersioned {
        let p = self.ptr;
        std::mem::forget(self);
        p
    }
    /// The raw struct, still owned by `self`.
    pub fn as_ptr(&self) -> *mut sys::DLManagedTensorVersioned {
        self.ptr
    }
    /// The DLPack struct: version, flags and the `DLTensor` (data, device, dtype, shape, strides).
    pub fn managed(&self) -> &sys::DLManagedTensorVersioned {
        unsafe { &*self.ptr }
    }
}
impl Drop for DlPackTensor {
    fn drop(&mut self) {
        unsafe {
            if !self.ptr.is_null() {
                if let Some(d) = (*self.ptr).deleter {
                    d(self.ptr);
                }
            }
        }
    }
}

/// An ordered list of tensors (e.g. a model's outputs).
pub struct TensorList {
    ptr: *mut sys::max_tensor_list_t,
}
unsafe impl Send for TensorList {}

impl TensorList {
    /// An empty list.
    pub fn new() -> Result<TensorList> {
        check_abi()?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_tensor_list_create(&mut p) })?;
        Ok(TensorList { ptr: p })
    }
    /// Appends a shared reference to `t`.
    pub fn push(&mut self, t: &Tensor) -> Result<()> {
        check(unsafe { sys::max_tensor_list_append(self.ptr, t.ptr) })
    }
    /// The number of tensors.
    pub fn len(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::max_tensor_list_size(self.ptr, &mut n) })?;
        Ok(n)
    }
    /// Whether the list has no tensors.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
    /// The `i`-th tensor (shared). OUT_OF_RANGE past the end.
    pub fn get(&self, i: usize) -> Result<Tensor> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_tensor_list_get(self.ptr, i, &mut p) })?;
        Ok(Tensor { ptr: p })
    }
    /// Every tensor, in order (shared).
    pub fn to_vec(&self) -> Result<Vec<Tensor>> {
        (0..self.len()?).map(|i| self.get(i)).collect()
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_tensor_list_t {
        self.ptr
    }
}
impl Drop for TensorList {
    fn drop(&mut self) {
        unsafe { sys::max_tensor_list_release(self.ptr) }
    }
}

/// Owned immutable bytes from the library (always NUL-terminated past `len`).
pub struct Buffer {
    ptr: *mut sys::max_buffer_t,
}
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A buffer holding a copy of `bytes`.
    pub fn new(bytes: &[u8]) -> Result<Buffer> {
        check_abi()?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_buffer_create(bytes.as_ptr() as *const c_void, bytes.len(), &mut p) })?;
        Ok(Buffer { ptr: p })
    }
    /// The bytes (without the trailing NUL the library keeps after them).
    pub fn as_bytes(&self) -> &[u8] {
        unsafe {
            let mut d = ptr::null();
            let mut n = 0usize;
            if check(sys::max_buffer_data(self.ptr, &mut d)).is_err() || check(sys::max_buffer_size(self.ptr, &mut n)).is_err() || d.is_null() || n == 0 {
                return &[];
            }
            std::slice::from_raw_parts(d as *const u8, n)
        }
    }
}
impl Clone for Buffer {
    fn clone(&self) -> Self {
        unsafe { sys::max_buffer_retain(self.ptr) };
        Buffer { ptr: self.ptr }
    }
}
impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { sys::max_buffer_release(self.ptr) }
    }
}

fn take_buffer(f: impl FnOnce(*mut *mut sys::max_buffer_t) -> *mut sys::max_status_t) -> Result<Buffer> {
    let mut p = ptr::null_mut();
    check(f(&mut p))?;
    Ok(Buffer { ptr: p })
}

// ======================================================================================
// Graphs
// ======================================================================================

/// A dimension: a static size or a symbolic expression ("batch", "seq * 2").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A known size.
    Static(i64),
    /// A symbol ("batch") or an expression of symbols and integers ("seq * 2").
    Expr(String),
}
impl From<i64> for Dim {
    fn from(v: i64) -> Dim { Dim::Static(v) }
}
impl From<i32> for Dim {
    fn from(v: i32) -> Dim { Dim::Static(v as i64) }
}
impl From<usize> for Dim {
    fn from(v: usize) -> Dim { Dim::Static(v as i64) }
}
impl From<&str> for Dim {
    fn from(v: &str) -> Dim { Dim::Expr(v.to_string()) }
}
impl From<String> for Dim {
    fn from(v: String) -> Dim { Dim::Expr(v) }
}
impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(v) => write!(f, "{v}"),
            Dim::Expr(s) => f.write_str(s),
        }
    }
}

/// The C dims plus the strings they point into.
struct RawDims {
    _strings: Vec<CString>,
    dims: Vec<sys::max_dim_t>,
}
fn raw_dims<D: Into<Dim>>(dims: impl IntoIterator<Item = D>) -> Result<RawDims> {
    let dims: Vec<Dim> = dims.into_iter().map(Into::into).collect();
    let mut strings = Vec::new();
    for d in &dims {
        if let Dim::Expr(s) = d {
            strings.push(cstring(s)?);
        }
    }
    let mut it = strings.iter();
    let raw = dims
        .iter()
        .map(|d| match d {
            Dim::Static(v) => sys::max_dim_t { size: *v, expr: ptr::null() },
            Dim::Expr(_) => sys::max_dim_t { size: 0, expr: it.next().unwrap().as_ptr() },
        })
        .collect();
    Ok(RawDims { _strings: strings, dims: raw })
}

/// Where a graph value lives (MAX's DeviceRef).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceRef {
    /// The host (id 0).
    Cpu(i32),
    /// Accelerator `id`.
    Gpu(i32),
}
impl DeviceRef {
    /// The host.
    pub const CPU: DeviceRef = DeviceRef::Cpu(0);
    fn raw(self) -> (i32, i32) {
        match self {
            DeviceRef::Cpu(i) => (sys::MAX_DEVICE_REF_CPU, i),
            DeviceRef::Gpu(i) => (sys::MAX_DEVICE_REF_GPU, i),
        }
    }
}

/// A graph under construction (MAX's `max.graph.Graph`). `Send` but not `Sync`, not `Clone`.
pub struct Graph {
    ptr: *mut sys::max_graph_t,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}
unsafe impl Send for Graph {}

/// A value of a graph; borrows the graph, so it cannot outlive it. Values are owned by
/// their graph (never released one by one) and are `Copy`. The typed op helpers
/// (`x.matmul(&w)?.add(&b)?.relu()?`, see the `ops` module) add ops to the value's graph.
#[derive(Clone, Copy)]
pub struct Value<'g> {
    ptr: *mut sys::max_value_t,
    graph: &'g Graph,
}

impl Graph {
    /// An empty graph named `name`.
    pub fn new(name: &str) -> Result<Graph> {
        check_abi()?;
        let c = cstring(name)?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_graph_create(c.as_ptr(), &mut p) })?;
        Ok(Graph { ptr: p, _not_sync: PhantomData })
    }
    fn wrap(p: *mut sys::max_graph_t) -> Graph {
        Graph { ptr: p, _not_sync: PhantomData }
    }
    fn value(&self, p: *mut sys::max_value_t) -> Value<'_> {
        Value { ptr: p, graph: self }
    }
    /// The graph's name.
    pub fn name(&self) -> Result<String> {
        let mut s = ptr::null();
        check(unsafe { sys::max_graph_name(self.ptr, &mut s) })?;
        Ok(unsafe { owned_str(s) })
    }
    /// Adds a CPU input `name` of type tensor<dims, dtype>.
    pub fn add_input<D: Into<Dim>>(&self, name: &str, dtype: DType, dims: impl IntoIterator<Item = D>) -> Result<Value<'_>> {
        self.add_input_on(name, dtype, dims, DeviceRef::CPU)
    }
    /// Adds an input on `device`.
    ///
    /// Errors: ALREADY_EXISTS when the name is taken; INVALID_ARGUMENT for a bad dim expression.
    pub fn add_input_on<D: Into<Dim>>(&self, name: &str, dtype: DType, dims: impl IntoIterator<Item = D>, device: DeviceRef) -> Result<Value<'_>> {
        let c = cstring(name)?;
        let d = raw_dims(dims)?;
        let (k, id) = device.raw();
        let mut v = ptr::null_mut();
        check(unsafe { sys::max_graph_add_input(self.ptr, c.as_ptr(), dtype as i32, d.dims.as_ptr(), rank_of_len(d.dims.len())?, k, id, &mut v) })?;
        Ok(self.value(v))
    }
    /// Declares the external weight `name` (bound when a model is initialized).
    pub fn add_weight<D: Into<Dim>>(&self, name: &str, dtype: DType, dims: impl IntoIterator<Item = D>) -> Result<Value<'_>> {
        self.add_weight_on(name, dtype, dims, DeviceRef::CPU)
    }
    /// Declares the external weight `name` on `device`. The same name and type gives the same
    /// value; another type is INVALID_ARGUMENT.
    pub fn add_weight_on<D: Into<Dim>>(&self, name: &str, dtype: DType, dims: impl IntoIterator<Item = D>, device: DeviceRef) -> Result<Value<'_>> {
        let c = cstring(name)?;
        let d = raw_dims(dims)?;
        let (k, id) = device.raw();
        let mut v = ptr::null_mut();
        check(unsafe { sys::max_graph_add_weight(self.ptr, c.as_ptr(), dtype as i32, d.dims.as_ptr(), rank_of_len(d.dims.len())?, k, id, &mut v) })?;
        Ok(self.value(v))
    }
    /// Adds a constant holding a copy of a host tensor's elements, placed on the host (cpu:0).
    pub fn add_constant(&self, tensor: &Tensor) -> Result<Value<'_>> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::max_graph_add_constant(self.ptr, tensor.ptr, &mut v) })?;
        Ok(self.value(v))
    }
    /// Adds a constant holding a copy of `tensor`'s elements placed on `device` (ABI 1.5): a
    /// GPU graph's scalars and tables live on its GPU, as a graph does not span devices. The
    /// tensor may be on any device (its elements are read now); no GPU is needed to build
    /// the graph. `DeviceRef::CPU` is [`Graph::add_constant`].
    ///
    /// Errors: INVALID_ARGUMENT for a bad device kind or id; UNIMPLEMENTED for another device
    /// than the host with a library older than ABI 1.5.
    pub fn add_constant_on(&self, tensor: &Tensor, device: DeviceRef) -> Result<Value<'_>> {
        if device == DeviceRef::CPU {
            return self.add_constant(tensor);
        }
        let add = add_constant_on_fn()?;
        let (k, id) = device.raw();
        let mut v = ptr::null_mut();
        check(unsafe { add(self.ptr, tensor.ptr, k, id, &mut v) })?;
        Ok(self.value(v))
    }
    /// Adds op `op` (newest version) and returns its outputs. A failure leaves the graph as
    /// it was.
    pub fn add_op(&self, op: &str, inputs: &[&Value<'_>], attrs: &Attrs) -> Result<Vec<Value<'_>>> {
        self.add_op_version(op, 0, inputs, attrs)
    }
    /// Adds version `version` of op `op` (0: the newest).
    ///
    /// Errors: NOT_FOUND for an unknown op; INVALID_ARGUMENT naming the op, the input and the
    /// mismatch (also for a value of another graph, or the first failed setter of `attrs`).
    pub fn add_op_version(&self, op: &str, version: i32, inputs: &[&Value<'_>], attrs: &Attrs) -> Result<Vec<Value<'_>>> {
        if let Some(e) = &attrs.error {
            return Err(e.clone());
        }
        let c = cstring(op)?;
        let ins: Vec<*mut sys::max_value_t> = inputs.iter().map(|v| v.ptr).collect();
        let mut outs: Vec<*mut sys::max_value_t> = vec![ptr::null_mut(); 8];
        loop {
            let mut n = 0usize;
            let st = unsafe {
                sys::max_graph_add_op(self.ptr, c.as_ptr(), version, ins.as_ptr(), ins.len(), attrs.ptr,
                    outs.as_mut_ptr(), outs.len(), &mut n)
            };
            match check(st) {
                Ok(()) => {
                    outs.truncate(n);
                    return Ok(outs.into_iter().map(|p| self.value(p)).collect());
                }
                Err(e) if e.code == sys::MAX_STATUS_OUT_OF_RANGE && n > outs.len() => outs.resize(n, ptr::null_mut()),
                Err(e) => return Err(e),
            }
        }
    }
    /// Sets the outputs, named `output<i>`.
    pub fn set_outputs(&self, values: &[&Value<'_>]) -> Result<()> {
        let v: Vec<*mut sys::max_value_t> = values.iter().map(|v| v.ptr).collect();
        check(unsafe { sys::max_graph_set_outputs(self.ptr, v.as_ptr(), ptr::null(), v.len()) })
    }
    /// Sets named outputs.
    pub fn set_named_outputs(&self, outputs: &[(&str, &Value<'_>)]) -> Result<()> {
        let names: Vec<CString> = outputs.iter().map(|(n, _)| cstring(n)).collect::<Result<_>>()?;
        let np: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
        let v: Vec<*mut sys::max_value_t> = outputs.iter().map(|(_, v)| v.ptr).collect();
        check(unsafe { sys::max_graph_set_outputs(self.ptr, v.as_ptr(), np.as_ptr(), v.len()) })
    }
    /// Appends a copy of `subgraph` and returns its index (for MAX_ATTR_GRAPH attributes).
    pub fn add_subgraph(&self, subgraph: &Graph) -> Result<i64> {
        let mut i = 0;
        check(unsafe { sys::max_graph_add_subgraph(self.ptr, subgraph.ptr, &mut i) })?;
        Ok(i)
    }
    /// The inputs with their names, in order.
    pub fn inputs(&self) -> Result<Vec<(String, Value<'_>)>> {
        let mut n = 0;
        check(unsafe { sys::max_graph_num_inputs(self.ptr, &mut n) })?;
        (0..n)
            .map(|i| {
                let (mut v, mut s) = (ptr::null_mut(), ptr::null());
                check(unsafe { sys::max_graph_input(self.ptr, i, &mut v, &mut s) })?;
                Ok((unsafe { owned_str(s) }, self.value(v)))
            })
            .collect()
    }
    /// The outputs with their names, in order.
    pub fn outputs(&self) -> Result<Vec<(String, Value<'_>)>> {
        let mut n = 0;
        check(unsafe { sys::max_graph_num_outputs(self.ptr, &mut n) })?;
        (0..n)
            .map(|i| {
                let (mut v, mut s) = (ptr::null_mut(), ptr::null());
                check(unsafe { sys::max_graph_output(self.ptr, i, &mut v, &mut s) })?;
                Ok((unsafe { owned_str(s) }, self.value(v)))
            })
            .collect()
    }
    /// The number of ops (constants and weights included).
    pub fn num_ops(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::max_graph_num_ops(self.ptr, &mut n) })?;
        Ok(n)
    }
    /// Re-checks the whole graph.
    pub fn verify(&self) -> Result<()> {
        check(unsafe { sys::max_graph_verify(self.ptr) })
    }
    /// The graph in the MAXG format.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        Ok(take_buffer(|p| unsafe { sys::max_graph_serialize(self.ptr, p) })?.as_bytes().to_vec())
    }
    /// Reads a MAXG image.
    pub fn deserialize(bytes: &[u8]) -> Result<Graph> {
        check_abi()?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_graph_deserialize(bytes.as_ptr() as *const c_void, bytes.len(), &mut p) })?;
        Ok(Graph::wrap(p))
    }
    /// Writes the graph to a MAXG file (large constants go to its aligned data segment).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let c = path_cstring(path.as_ref())?;
        check(unsafe { sys::max_graph_save(self.ptr, c.as_ptr()) })
    }
    /// Loads a MAXG file.
    ///
    /// Errors: NOT_FOUND for a missing file; DATA_LOSS for a truncated or corrupt one;
    /// INVALID_ARGUMENT for a well-formed but invalid graph.
    pub fn load(path: impl AsRef<Path>) -> Result<Graph> {
        check_abi()?;
        let c = path_cstring(path.as_ref())?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_graph_load(c.as_ptr(), &mut p) })?;
        Ok(Graph::wrap(p))
    }
    /// The graph as readable text (also what `Display` prints).
    pub fn to_text(&self) -> Result<String> {
        Ok(String::from_utf8_lossy(take_buffer(|p| unsafe { sys::max_graph_to_text(self.ptr, p) })?.as_bytes()).into_owned())
    }
    /// The graph in Graphviz DOT.
    pub fn to_dot(&self) -> Result<String> {
        Ok(String::from_utf8_lossy(take_buffer(|p| unsafe { sys::max_graph_to_dot(self.ptr, p) })?.as_bytes()).into_owned())
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_graph_t {
        self.ptr
    }
}
impl Drop for Graph {
    fn drop(&mut self) {
        unsafe { sys::max_graph_release(self.ptr) }
    }
}
impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_text() {
            Ok(t) => f.write_str(&t),
            Err(e) => write!(f, "<graph: {e}>"),
        }
    }
}
impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({:?})", self.name().unwrap_or_default())
    }
}

fn rank_of_len(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, "rank too large"))
}

fn path_cstring(p: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, format!("path {p:?} contains a NUL byte")))
}

impl<'g> Value<'g> {
    /// The element type.
    pub fn dtype(&self) -> Result<DType> {
        let mut d = 0;
        check(unsafe { sys::max_value_dtype(self.ptr, &mut d) })?;
        DType::from_raw_res(d)
    }
    /// The number of dims (0 for a scalar).
    pub fn rank(&self) -> Result<usize> {
        let mut r = 0;
        check(unsafe { sys::max_value_rank(self.ptr, &mut r) })?;
        Ok(r as usize)
    }
    /// The dims: `Static` sizes, or the canonical expression text for symbolic ones.
    pub fn shape(&self) -> Result<Vec<Dim>> {
        (0..self.rank()?)
            .map(|i| {
                let (mut size, mut expr) = (0i64, ptr::null());
                check(unsafe { sys::max_value_dim(self.ptr, i as i32, &mut size, &mut expr) })?;
                Ok(if size >= 0 { Dim::Static(size) } else { Dim::Expr(unsafe { owned_str(expr) }) })
            })
            .collect()
    }
    /// Where the value lives.
    pub fn device(&self) -> Result<DeviceRef> {
        let (mut k, mut id) = (0, 0);
        check(unsafe { sys::max_value_device(self.ptr, &mut k, &mut id) })?;
        Ok(if k == sys::MAX_DEVICE_REF_GPU { DeviceRef::Gpu(id) } else { DeviceRef::Cpu(id) })
    }
    /// The type as text: "tensor<[batch, 10], float32, cpu:0>".
    pub fn type_string(&self) -> Result<&'g str> {
        let mut s = ptr::null();
        check(unsafe { sys::max_value_type_string(self.ptr, &mut s) })?;
        Ok(unsafe { if s.is_null() { "" } else { CStr::from_ptr(s).to_str().unwrap_or("") } })
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_value_t {
        self.ptr
    }
}
impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Value({})", self.type_string().unwrap_or("?"))
    }
}

// ======================================================================================
// Attributes
// ======================================================================================

/// Op attributes, built fluently: `Attrs::new().int("axis", 1).dtype("dtype", DType::Int8)`.
/// A failing setter is remembered and reported by `Graph::add_op` (or [`Attrs::status`]).
/// `Send` but not `Sync`.
pub struct Attrs {
    ptr: *mut sys::max_attrs_t,
    error: Option<Error>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}
unsafe impl Send for Attrs {}

impl Default for Attrs {
    fn default() -> Self {
        Attrs::new()
    }
}

impl Attrs {
    /// An empty attribute map (a failure to make one is reported by `Graph::add_op`).
    pub fn new() -> Attrs {
        let mut a = Attrs { ptr: ptr::null_mut(), error: None, _not_sync: PhantomData };
        match check_abi().and_then(|_| check(unsafe { sys::max_attrs_create(&mut a.ptr) })) {
            Ok(()) => {}
            Err(e) => a.error = Some(e),
        }
        a
    }
    /// The first error a setter hit, if any.
    pub fn status(&self) -> Result<()> {
        self.error.clone().map_or(Ok(()), Err)
    }
    fn set(mut self, name: &str, f: impl FnOnce(*mut sys::max_attrs_t, *const c_char) -> *mut sys::max_status_t) -> Self {
        if self.error.is_some() {
            return self;
        }
        match cstring(name).and_then(|c| check(f(self.ptr, c.as_ptr()))) {
            Ok(()) => {}
            Err(e) => self.error = Some(e),
        }
        self
    }
    /// An integer attribute. Replaces an earlier value of the same name.
    pub fn int(self, name: &str, v: i64) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_int(a, n, v) })
    }
    /// A float attribute. Replaces an earlier value of the same name.
    pub fn float(self, name: &str, v: f64) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_float(a, n, v) })
    }
    /// A bool attribute. Replaces an earlier value of the same name.
    pub fn bool(self, name: &str, v: bool) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_bool(a, n, v as i32) })
    }
    /// A string attribute (a NUL byte in it is reported by `Graph::add_op`). Replaces an earlier value of the same name.
    pub fn string(self, name: &str, v: &str) -> Self {
        match cstring(v) {
            Ok(c) => self.set(name, |a, n| unsafe { sys::max_attrs_set_string(a, n, c.as_ptr()) }),
            Err(e) => Attrs { error: Some(e), ..self },
        }
    }
    /// A dtype attribute. Replaces an earlier value of the same name.
    pub fn dtype(self, name: &str, v: DType) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_dtype(a, n, v as i32) })
    }
    /// An integer list attribute. Replaces an earlier value of the same name.
    pub fn ints(self, name: &str, v: &[i64]) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_ints(a, n, v.as_ptr(), v.len()) })
    }
    /// A float list attribute. Replaces an earlier value of the same name.
    pub fn floats(self, name: &str, v: &[f64]) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_floats(a, n, v.as_ptr(), v.len()) })
    }
    /// A list of dims (static or symbolic). Replaces an earlier value of the same name.
    pub fn dims<D: Into<Dim>>(self, name: &str, v: impl IntoIterator<Item = D>) -> Self {
        match raw_dims(v) {
            Ok(d) => self.set(name, |a, n| unsafe { sys::max_attrs_set_dims(a, n, d.dims.as_ptr(), d.dims.len()) }),
            Err(e) => Attrs { error: Some(e), ..self },
        }
    }
    /// A subgraph attribute: the index from [`Graph::add_subgraph`]. Replaces an earlier value of the same name.
    pub fn graph(self, name: &str, subgraph_index: i64) -> Self {
        self.set(name, |a, n| unsafe { sys::max_attrs_set_graph(a, n, subgraph_index) })
    }
    /// A device attribute. Replaces an earlier value of the same name.
    pub fn device(self, name: &str, v: DeviceRef) -> Self {
        let (k, id) = v.raw();
        self.set(name, |a, n| unsafe { sys::max_attrs_set_device(a, n, k, id) })
    }
    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_attrs_t {
        self.ptr
    }
}
impl Drop for Attrs {
    fn drop(&mut self) {
        unsafe { sys::max_attrs_release(self.ptr) }
    }
}

// ======================================================================================
// Op registry
// ======================================================================================

/// How many values an op input takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputArity {
    /// Exactly one.
    One,
    /// Zero or one.
    Optional,
    /// One or more (a list, e.g. `concat`'s values).
    Variadic,
    /// Zero or more; only last (ABI 1.6: the operands of `cond` and `call`).
    Any,
}

/// The type of an op attribute (which [`Attrs`] setter it takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttrKind {
    /// [`Attrs::int`].
    Int,
    /// [`Attrs::float`].
    Float,
    /// [`Attrs::string`].
    String,
    /// [`Attrs::dtype`].
    DType,
    /// [`Attrs::ints`].
    Ints,
    /// [`Attrs::floats`].
    Floats,
    /// [`Attrs::dims`].
    Dims,
    /// [`Attrs::graph`].
    Graph,
    /// [`Attrs::bool`].
    Bool,
    /// [`Attrs::device`].
    Device,
    /// A kind newer than this binding (the library's code).
    Unknown(i32),
}

/// Whether an op attribute must be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttrPresence {
    /// It must be set.
    Required,
    /// It may be left out, which means something of its own (e.g. "no bound").
    Optional,
    /// It may be left out for the registry's default.
    Defaulted,
}

/// One input of an op schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpInput {
    /// The input's name in the schema ("lhs").
    pub name: String,
    /// How many values it takes.
    pub arity: InputArity,
}

/// One attribute of an op schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpAttr {
    /// The attribute's name ("axis").
    pub name: String,
    /// Its type.
    pub kind: AttrKind,
    /// Whether it must be given.
    pub presence: AttrPresence,
}

/// One registered (op, version) with its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSchema {
    /// The op's name ("matmul").
    pub name: String,
    /// Its version.
    pub version: i32,
    /// Its inputs, in order.
    pub inputs: Vec<OpInput>,
    /// Its attributes.
    pub attrs: Vec<OpAttr>,
}

/// Every registered (name, version), sorted by name then version.
pub fn ops() -> Result<Vec<(String, i32)>> {
    check_abi()?;
    let mut n = 0;
    check(unsafe { sys::max_op_count(&mut n) })?;
    (0..n)
        .map(|i| {
            let (mut s, mut v) = (ptr::null(), 0);
            check(unsafe { sys::max_op_at(i, &mut s, &mut v) })?;
            Ok((unsafe { owned_str(s) }, v))
        })
        .collect()
}

/// The schema of op `name` (version 0: newest). NOT_FOUND for an unknown op.
pub fn op_schema(name: &str, version: i32) -> Result<OpSchema> {
    check_abi()?;
    let c = cstring(name)?;
    let mut n = 0;
    check(unsafe { sys::max_op_num_inputs(c.as_ptr(), version, &mut n) })?;
    let inputs = (0..n)
        .map(|i| {
            let (mut s, mut a) = (ptr::null(), 0);
            check(unsafe { sys::max_op_input(c.as_ptr(), version, i, &mut s, &mut a) })?;
            let arity = match a {
                sys::MAX_OP_INPUT_OPTIONAL => InputArity::Optional,
                sys::MAX_OP_INPUT_VARIADIC => InputArity::Variadic,
                sys::MAX_OP_INPUT_ANY => InputArity::Any,
                _ => InputArity::One,
            };
            Ok(OpInput { name: unsafe { owned_str(s) }, arity })
        })
        .collect::<Result<Vec<_>>>()?;
    check(unsafe { sys::max_op_num_attrs(c.as_ptr(), version, &mut n) })?;
    let attrs = (0..n)
        .map(|i| {
            let (mut s, mut k, mut p) = (ptr::null(), 0, 0);
            check(unsafe { sys::max_op_attr(c.as_ptr(), version, i, &mut s, &mut k, &mut p) })?;
            let kind = match k {
                0 => AttrKind::Int,
                1 => AttrKind::Float,
                2 => AttrKind::String,
                3 => AttrKind::DType,
                4 => AttrKind::Ints,
                5 => AttrKind::Floats,
                6 => AttrKind::Dims,
                7 => AttrKind::Graph,
                8 => AttrKind::Bool,
                9 => AttrKind::Device,
                other => AttrKind::Unknown(other),
            };
            let presence = match p {
                sys::MAX_OP_ATTR_OPTIONAL => AttrPresence::Optional,
                sys::MAX_OP_ATTR_DEFAULTED => AttrPresence::Defaulted,
                _ => AttrPresence::Required,
            };
            Ok(OpAttr { name: unsafe { owned_str(s) }, kind, presence })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(OpSchema { name: name.to_string(), version, inputs, attrs })
}

#[cfg(test)]
mod tests {
    use super::*;
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    #[test]
    fn thread_traits() {
        assert_send_sync::<Context>();
        assert_send_sync::<Device>();
        assert_send_sync::<Tensor>();
        assert_send_sync::<CompiledModel>();
        assert_send_sync::<Model>();
        assert_send_sync::<TensorSpec>();
        assert_send_sync::<Weights>();
        assert_send::<Graph>();
        assert_send::<Attrs>();
    }
}
