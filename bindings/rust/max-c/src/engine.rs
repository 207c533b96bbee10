//! The engine (ABI 1.2): compile a [`Graph`] into a [`CompiledModel`], bind its weights to
//! make a [`Model`], and execute it (MAX's `InferenceSession.load` and `Model.execute`).
//!
//! ```no_run
//! # use max_c::*;
//! # fn main() -> Result<()> {
//! let g = Graph::new("affine")?;
//! let x = g.add_input("x", DType::Float32, [Dim::from("batch"), Dim::from(4)])?;
//! let w = g.add_weight("w", DType::Float32, [4, 2])?;
//! let y = g.add_op("matmul", &[&x, &w], &Attrs::new())?;
//! g.set_named_outputs(&[("y", &y[0])])?;
//!
//! let ctx = Context::new(0)?;
//! let compiled = ctx.compile(&g, &CompileOptions::default())?;
//! let w = Tensor::from_slice(&[1.0f32; 8], &[4, 2])?;
//! let model = compiled.init(&[("w", &w)])?;
//! let out = model.execute(&[&Tensor::from_slice(&[1.0f32; 12], &[3, 4])?])?;
//! assert_eq!(out[0].shape()?, vec![3, 2]);
//! # Ok(()) }
//! ```

use super::*;

// ======================================================================================
// Run options
// ======================================================================================

/// Limits for [`Model::execute_with_options`], as onnxruntime's `RunOptions`: a timeout
/// counted from each call's start, and a cancel flag that any thread may set through
/// [`RunOptions::cancel`] (clones share it) to stop every call running under it.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    timeout: Option<std::time::Duration>,
    cancel: std::sync::Arc<std::sync::atomic::AtomicI32>,
}

impl RunOptions {
    /// No timeout, not cancelled.
    pub fn new() -> RunOptions {
        RunOptions::default()
    }
    /// The longest a call may run (at least one microsecond); None, the default: no limit.
    pub fn timeout(mut self, timeout: Option<std::time::Duration>) -> RunOptions {
        self.timeout = timeout;
        self
    }
    /// Stops the calls running under these options (and refuses new ones until [`reset`]).
    ///
    /// [`reset`]: RunOptions::reset
    pub fn cancel(&self) {
        self.cancel.store(1, std::sync::atomic::Ordering::Relaxed);
    }
    /// Clears a [`RunOptions::cancel`], so that calls under these options run again.
    pub fn reset(&self) {
        self.cancel.store(0, std::sync::atomic::Ordering::Relaxed);
    }
    /// Whether [`RunOptions::cancel`] was called since the last [`RunOptions::reset`].
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(std::sync::atomic::Ordering::Relaxed) != 0
    }
}

// ======================================================================================
// Compile options
// ======================================================================================

/// How [`Context::compile`] optimizes a graph. Every setting left unset keeps the library's
/// default (today: fusion and constant folding on, a 1 MiB fold limit, 16 cached plans), so
/// `CompileOptions::default()` is always "what the library recommends". Builder style:
/// `CompileOptions::new().fusion(false).plan_cache_capacity(4)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileOptions {
    fusion: Option<bool>,
    constant_folding: Option<bool>,
    fold_limit_bytes: Option<u64>,
    plan_cache_capacity: Option<i64>,
    file_device: Option<Device>,
}

impl CompileOptions {
    /// All library defaults.
    pub fn new() -> CompileOptions {
        CompileOptions::default()
    }
    /// Pattern and elementwise fusion (off gives the same results, maybe slower).
    pub fn fusion(mut self, on: bool) -> Self {
        self.fusion = Some(on);
        self
    }
    /// Folding of ops whose inputs are all constants.
    pub fn constant_folding(mut self, on: bool) -> Self {
        self.constant_folding = Some(on);
        self
    }
    /// The most bytes of results constant folding may produce.
    pub fn fold_limit_bytes(mut self, bytes: u64) -> Self {
        self.fold_limit_bytes = Some(bytes);
        self
    }
    /// Execution plans kept per compiled model, one per distinct set of concrete input
    /// shapes (least recently used goes first). At least 1: the library refuses 0 with
    /// INVALID_ARGUMENT at compile time.
    pub fn plan_cache_capacity(mut self, plans: usize) -> Self {
        self.plan_cache_capacity = Some(i64::try_from(plans).unwrap_or(i64::MAX));
        self
    }

    /// ABI 1.5, for [`Context::compile_file`]: moves a model file wholly on the host (an ONNX
    /// model, which carries no placement, or a MAXG file of a host graph) onto `device`
    /// before it compiles, so that it runs there (MAX's `InferenceSession.load(path,
    /// device=...)`). The device must be one of the context's. Unset, the file keeps its own
    /// placement. [`Context::compile`] ignores it: a graph names its own devices.
    ///
    /// Errors at compile time: FAILED_PRECONDITION when the file already places a value on
    /// another device ("already placed on gpu:0"); INVALID_ARGUMENT for a device the context
    /// was not created with; UNIMPLEMENTED with a library older than ABI 1.5.
    pub fn file_device(mut self, device: &Device) -> Self {
        self.file_device = Some(device.clone());
        self
    }

    /// The C struct: the library's defaults (from `max_compile_options_init`, so a newer
    /// library's defaults win) with this builder's settings on top. The struct borrows the
    /// file device from `self`. Its unset ABI 1.5 fields stay zero, which a 1.4 library
    /// accepts as the tail of a newer struct. `for_file`: the file device is set only for a
    /// model file (`max_context_compile` ignores it, so a graph compiles with a 1.4 library).
    fn to_raw(&self, for_file: bool) -> Result<sys::max_compile_options_t> {
        check_abi()?;
        let mut raw: sys::max_compile_options_t = unsafe { std::mem::zeroed() };
        check(unsafe { sys::max_compile_options_init(&mut raw, std::mem::size_of::<sys::max_compile_options_t>()) })?;
        if let Some(on) = self.fusion {
            raw.enable_fusion = on as i32;
        }
        if let Some(on) = self.constant_folding {
            raw.enable_constant_folding = on as i32;
        }
        if let Some(n) = self.fold_limit_bytes {
            raw.fold_limit_bytes = n;
        }
        if let Some(n) = self.plan_cache_capacity {
            raw.plan_cache_capacity = n;
        }
        if let (Some(device), true) = (&self.file_device, for_file) {
            require_abi_minor(5, "CompileOptions::file_device (a model file placed on a device)")?;
            raw.file_device = device.ptr;
        }
        Ok(raw)
    }
}

impl Context {
    /// Compiles `graph` for this context's CPU. The graph is only read (it may be changed
    /// or dropped afterwards; the compiled model does not refer to it).
    ///
    /// Errors: INVALID_ARGUMENT for a graph that does not verify or has no outputs;
    /// UNIMPLEMENTED naming the op when a node has no CPU kernel for its dtypes.
    pub fn compile(&self, graph: &Graph, options: &CompileOptions) -> Result<CompiledModel> {
        let raw = options.to_raw(false)?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_context_compile(self.ptr, graph.ptr, &raw, &mut p) })?;
        Ok(CompiledModel { ptr: p })
    }

    /// Compiles a model file: a path ending in ".onnx" is imported as an ONNX model (opset
    /// 7 or newer; its initializers become the compiled model's own weights, which
    /// [`CompiledModel::init`] binds unless given), anything else is read as a MAXG file
    /// (see [`Graph::save`]).
    ///
    /// With [`CompileOptions::file_device`], a file wholly on the host is moved onto that
    /// device first.
    ///
    /// Errors: NOT_FOUND naming a missing file; DATA_LOSS or INVALID_ARGUMENT, with the
    /// offset, for a damaged file; UNIMPLEMENTED naming an ONNX node whose operator cannot be
    /// imported; FAILED_PRECONDITION for a file_device when the file already places a value
    /// elsewhere; and those of [`Context::compile`].
    pub fn compile_file(&self, path: impl AsRef<Path>, options: &CompileOptions) -> Result<CompiledModel> {
        let raw = options.to_raw(true)?;
        let c = path_cstring(path.as_ref())?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_context_compile_file(self.ptr, c.as_ptr(), &raw, &mut p) })?;
        Ok(CompiledModel { ptr: p })
    }

    /// MAX's `InferenceSession.load(path)`: compiles a model file with the default options
    /// and binds the weights that came with it (ONNX initializers). A file whose graph
    /// declares other weights needs [`Context::compile_file`] and [`CompiledModel::init`]
    /// (or [`CompiledModel::init_from_weights`]) instead.
    ///
    /// Errors: those of [`Context::compile_file`], and NOT_FOUND naming a weight the file
    /// does not carry.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<Model> {
        self.compile_file(path, &CompileOptions::default())?.init(&[])
    }

    /// MAX's `InferenceSession.load(path, device=...)`: [`Context::load`] with the model
    /// file moved onto `device`, one of this context's devices (see
    /// [`CompileOptions::file_device`]; ABI 1.5). An ONNX model carries no placement, so this
    /// is how one runs on an accelerator.
    ///
    /// Errors: those of [`Context::load`]; FAILED_PRECONDITION when the file already places a
    /// value on another device; INVALID_ARGUMENT for a device not among the context's.
    pub fn load_on(&self, path: impl AsRef<Path>, device: &Device) -> Result<Model> {
        self.compile_file(path, &CompileOptions::default().file_device(device))?.init(&[])
    }
}

// ======================================================================================
// Tensor specs
// ======================================================================================

/// The signature of one input, output or weight (MAX's `TensorSpec`), copied out of the
/// library: it owns its data and does not refer to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSpec {
    /// The input's, output's or weight's name.
    pub name: String,
    /// The element type.
    pub dtype: DType,
    /// `Dim::Static(n)`, or `Dim::Expr("batch")` for a symbolic dim or expression.
    pub dims: Vec<Dim>,
    /// Where the tensor lives (or must live).
    pub device: Device,
}

impl TensorSpec {
    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// MAX's `TensorSpec.shape`: the static sizes, `None` where the dim is symbolic.
    pub fn shape(&self) -> Vec<Option<i64>> {
        self.dims.iter().map(|d| match d { Dim::Static(n) => Some(*n), Dim::Expr(_) => None }).collect()
    }
    /// The symbol or expression of each dim, `None` where the dim is static.
    pub fn dim_names(&self) -> Vec<Option<&str>> {
        self.dims.iter().map(|d| match d { Dim::Static(_) => None, Dim::Expr(s) => Some(s.as_str()) }).collect()
    }
}

impl fmt::Display for TensorSpec {
    /// `x: [batch, 4] float32`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(Dim::to_string).collect();
        write!(f, "{}: [{}] {}", self.name, dims.join(", "), self.dtype)
    }
}

/// One reference to a `max_tensor_spec_t`, released on drop (also on an early `?`).
struct SpecHandle(*mut sys::max_tensor_spec_t);

impl Drop for SpecHandle {
    fn drop(&mut self) {
        unsafe { sys::max_tensor_spec_release(self.0) }
    }
}

impl SpecHandle {
    fn dim(&self, axis: usize) -> Result<Dim> {
        let (mut size, mut name) = (0i64, ptr::null());
        check(unsafe { sys::max_tensor_spec_dim(self.0, axis, &mut size, &mut name) })?;
        // -1 with a name: a symbol or an expression; a name is copied before the release.
        Ok(if size >= 0 { Dim::Static(size) } else { Dim::Expr(unsafe { owned_str(name) }) })
    }

    /// Copies everything out, so the spec can be released right after.
    fn read(&self) -> Result<TensorSpec> {
        let mut name = ptr::null();
        check(unsafe { sys::max_tensor_spec_name(self.0, &mut name) })?;
        let name = unsafe { owned_str(name) };
        let mut dtype = 0;
        check(unsafe { sys::max_tensor_spec_dtype(self.0, &mut dtype) })?;
        let mut rank = 0usize;
        check(unsafe { sys::max_tensor_spec_rank(self.0, &mut rank) })?;
        let dims = (0..rank).map(|a| self.dim(a)).collect::<Result<Vec<_>>>()?;
        let mut device = ptr::null_mut();
        check(unsafe { sys::max_tensor_spec_device(self.0, &mut device) })?;
        Ok(TensorSpec { name, dtype: DType::from_raw_res(dtype)?, dims, device: Device { ptr: device } })
    }
}

// ======================================================================================
// Compiled models
// ======================================================================================

type SpecCount = unsafe extern "C" fn(*const sys::max_compiled_model_t, *mut usize) -> *mut sys::max_status_t;
type SpecAt = unsafe extern "C" fn(*const sys::max_compiled_model_t, usize, *mut *mut sys::max_tensor_spec_t) -> *mut sys::max_status_t;

/// A graph compiled for a context, without weights (refcounted; `Clone` shares it). It
/// keeps its context alive. Make a runnable [`Model`] with [`CompiledModel::init`]; one
/// compiled model can back many models with different weights.
pub struct CompiledModel {
    pub(crate) ptr: *mut sys::max_compiled_model_t,
}

// SAFETY: the header documents compiled models as immutable to their users and
// thread-safe (every accessor may be called from any thread at once), and their refcount
// is atomic, so sharing or moving the handle across threads is sound.
unsafe impl Send for CompiledModel {}
unsafe impl Sync for CompiledModel {}

impl CompiledModel {
    /// The inputs, in the order [`Model::execute`] takes them.
    pub fn inputs(&self) -> Result<Vec<TensorSpec>> {
        self.specs(sys::max_compiled_model_num_inputs, sys::max_compiled_model_input)
    }
    /// The outputs, in the order [`Model::execute`] returns them.
    pub fn outputs(&self) -> Result<Vec<TensorSpec>> {
        self.specs(sys::max_compiled_model_num_outputs, sys::max_compiled_model_output)
    }
    /// The weights [`CompiledModel::init`] must be given, each exactly once.
    pub fn weights(&self) -> Result<Vec<TensorSpec>> {
        self.specs(sys::max_compiled_model_num_weights, sys::max_compiled_model_weight)
    }

    fn specs(&self, count: SpecCount, at: SpecAt) -> Result<Vec<TensorSpec>> {
        let mut n = 0usize;
        check(unsafe { count(self.ptr, &mut n) })?;
        (0..n)
            .map(|i| {
                let mut p = ptr::null_mut();
                check(unsafe { at(self.ptr, i, &mut p) })?;
                SpecHandle(p).read()
            })
            .collect()
    }

    /// Binds the weights by name and gives a runnable model (MAX's `InferenceSession.load`
    /// with a `weights_registry`). The model keeps this compiled model alive.
    ///
    /// Ownership: contiguous CPU tensors are used in place, not copied: the model holds a
    /// reference to their storage, so writing to them afterwards (`copy_from`, a DLPack
    /// consumer) changes the model's results and races with running executes. Pass
    /// `t.copy()?` to decouple; other tensors are copied by the library.
    ///
    /// Errors: NOT_FOUND names a missing weight; INVALID_ARGUMENT an unknown or repeated
    /// name, or a weight whose dtype or shape differs from its declaration.
    pub fn init(&self, weights: &[(&str, &Tensor)]) -> Result<Model> {
        let w = NamedTensors::new(weights)?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_model_create(self.ptr, w.names_ptr(), w.tensors_ptr(), w.len(), &mut p) })?;
        Ok(Model { ptr: p })
    }

    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_compiled_model_t {
        self.ptr
    }
}

impl Clone for CompiledModel {
    fn clone(&self) -> Self {
        unsafe { sys::max_compiled_model_retain(self.ptr) };
        CompiledModel { ptr: self.ptr }
    }
}
impl Drop for CompiledModel {
    fn drop(&mut self) {
        unsafe { sys::max_compiled_model_release(self.ptr) }
    }
}
impl fmt::Debug for CompiledModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |s: Result<Vec<TensorSpec>>| s.map(|v| v.into_iter().map(|s| s.to_string()).collect::<Vec<_>>()).ok();
        f.debug_struct("CompiledModel")
            .field("inputs", &names(self.inputs()))
            .field("outputs", &names(self.outputs()))
            .finish()
    }
}

/// `(name, tensor)` pairs as the C arrays one call takes; the C strings live as long as this.
struct NamedTensors {
    _names: Vec<CString>,
    name_ptrs: Vec<*const c_char>,
    tensors: Vec<*mut sys::max_tensor_t>,
}

impl NamedTensors {
    fn new(pairs: &[(&str, &Tensor)]) -> Result<NamedTensors> {
        let names = pairs.iter().map(|(n, _)| cstring(n)).collect::<Result<Vec<_>>>()?;
        let name_ptrs = names.iter().map(|c| c.as_ptr()).collect();
        let tensors = pairs.iter().map(|(_, t)| t.ptr).collect();
        Ok(NamedTensors { _names: names, name_ptrs, tensors })
    }
    fn len(&self) -> usize {
        self.tensors.len()
    }
    fn names_ptr(&self) -> *const *const c_char {
        or_null(&self.name_ptrs)
    }
    fn tensors_ptr(&self) -> *const *mut sys::max_tensor_t {
        or_null(&self.tensors)
    }
}

/// The array's address, or NULL when empty (an empty Vec's address is dangling).
pub(crate) fn or_null<T>(v: &[T]) -> *const T {
    if v.is_empty() { ptr::null() } else { v.as_ptr() }
}

// ======================================================================================
// Models
// ======================================================================================

/// A compiled model with its weights bound: what runs (MAX's `engine.Model`). Refcounted;
/// `Clone` shares the same model (and its weights).
///
/// Thread-safety: `Send + Sync`. Many threads may call [`Model::execute`] on one model at
/// once (each call gets its own working memory), also while another thread reloads weights.
///
/// Device graphs (ABI 1.4): [`Model::capture`] records a run under a key and
/// [`Model::replay`] reruns it, rewriting the capture's outputs in place (see the
/// [`capture`](Model::capture) docs for that contract).
pub struct Model {
    pub(crate) ptr: *mut sys::max_model_t,
}

// SAFETY: the header documents every model function as thread-safe: concurrent execute
// calls on one model are supported (each has its own working memory), reload may run beside
// them (running calls finish with the old weights), and the refcount is atomic. Inputs are
// only read, so `&Model` may be used from many threads and a Model may move between them.
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

/// Takes a returned tensor list apart into owned tensors.
pub(crate) fn take_outputs(f: impl FnOnce(*mut *mut sys::max_tensor_list_t) -> *mut sys::max_status_t) -> Result<Vec<Tensor>> {
    let mut p = ptr::null_mut();
    check(f(&mut p))?;
    TensorList { ptr: p }.to_vec()
}

impl Model {
    /// Makes a model from `compiled` and its weights; the same as [`CompiledModel::init`].
    pub fn new(compiled: &CompiledModel, weights: &[(&str, &Tensor)]) -> Result<Model> {
        compiled.init(weights)
    }

    /// Runs the model on `inputs`, by position, and returns new output tensors in the order
    /// of [`Model::output_metadata`]. Inputs are only read.
    ///
    /// Errors: INVALID_ARGUMENT naming the input and the mismatch (count, dtype, rank, a
    /// static dim, a symbolic dim bound to two values, a tensor not on the CPU); checked
    /// before anything runs, so the model stays usable.
    pub fn execute(&self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let raw: Vec<*mut sys::max_tensor_t> = inputs.iter().map(|t| t.ptr).collect();
        take_outputs(|out| unsafe { sys::max_model_execute(self.ptr, or_null(&raw), raw.len(), out) })
    }

    /// As [`Model::execute`], stopping at `options`' timeout (DEADLINE_EXCEEDED) or once its
    /// cancel flag is set from any thread (CANCELLED), checked before every step and every
    /// loop iteration; the error names the op, and the model stays usable (ABI 1.8).
    pub fn execute_with_options(&self, inputs: &[&Tensor], options: &RunOptions) -> Result<Vec<Tensor>> {
        let raw: Vec<*mut sys::max_tensor_t> = inputs.iter().map(|t| t.ptr).collect();
        let mut o: sys::max_run_options_t = unsafe { std::mem::zeroed() };
        check(unsafe { sys::max_run_options_init(&mut o, std::mem::size_of::<sys::max_run_options_t>()) })?;
        if let Some(t) = options.timeout {
            o.timeout_us = i64::try_from(t.as_micros()).unwrap_or(i64::MAX).max(1);
        }
        // The flag outlives the call: `options` borrows its Arc for the call's duration.
        o.cancel_flag = options.cancel.as_ptr() as *const i32;
        take_outputs(|out| unsafe { sys::max_model_execute_with_options(self.ptr, or_null(&raw), raw.len(), &o, out) })
    }

    /// As [`Model::execute`] with every input given by name, in any order.
    ///
    /// Errors: NOT_FOUND for an unknown name; INVALID_ARGUMENT for a missing or repeated one
    /// and for the checks of `execute`.
    pub fn execute_named(&self, inputs: &[(&str, &Tensor)]) -> Result<Vec<Tensor>> {
        let n = NamedTensors::new(inputs)?;
        take_outputs(|out| unsafe { sys::max_model_execute_named(self.ptr, n.names_ptr(), n.tensors_ptr(), n.len(), out) })
    }

    /// Replaces the named weights in place without recompiling (the others stay). The same
    /// checks and ownership rules as [`CompiledModel::init`] apply; when one fails nothing
    /// changes. Executes already running finish with the old weights.
    pub fn reload(&self, weights: &[(&str, &Tensor)]) -> Result<()> {
        let w = NamedTensors::new(weights)?;
        check(unsafe { sys::max_model_reload(self.ptr, w.names_ptr(), w.tensors_ptr(), w.len()) })
    }

    /// The compiled model this model runs (a shared reference).
    pub fn compiled_model(&self) -> Result<CompiledModel> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_model_compiled_model(self.ptr, &mut p) })?;
        Ok(CompiledModel { ptr: p })
    }

    /// MAX's `Model.input_metadata`: [`CompiledModel::inputs`].
    pub fn input_metadata(&self) -> Result<Vec<TensorSpec>> {
        self.compiled_model()?.inputs()
    }
    /// MAX's `Model.output_metadata`: [`CompiledModel::outputs`].
    pub fn output_metadata(&self) -> Result<Vec<TensorSpec>> {
        self.compiled_model()?.outputs()
    }

    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_model_t {
        self.ptr
    }
}

impl Clone for Model {
    fn clone(&self) -> Self {
        unsafe { sys::max_model_retain(self.ptr) };
        Model { ptr: self.ptr }
    }
}
impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::max_model_release(self.ptr) }
    }
}
impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.compiled_model() {
            Ok(c) => write!(f, "Model({c:?})"),
            Err(_) => f.write_str("Model(?)"),
        }
    }
}
