//! Weights (ABI 1.3): a registry of named tensors filled from safetensors and GGUF files or
//! from memory (MAX's `max.graph.weights`), block-quantization encodings, and models bound
//! from a registry.
//!
//! ```no_run
//! # use max_c::*;
//! # fn main() -> Result<()> {
//! let mut weights = Weights::from_files(["model.safetensors"])?;
//! weights.add_slice("scale", &[0.5f32; 16], &[16])?;
//! for name in weights.names()? {
//!     println!("{name}: {:?}", weights.info(&name)?);
//! }
//! # let compiled: CompiledModel = unimplemented!();
//! let model = compiled.init_from_weights(&weights)?;
//! # Ok(()) }
//! ```

use super::*;

// ======================================================================================
// Quantization encodings
// ======================================================================================

/// A block-quantized encoding (MAX's `QuantizationEncoding`, GGML's block layouts). A
/// tensor in such an encoding is `uint8 [rows..., row_bytes]`: each row of `k` elements is
/// `k / elements_per_block` blocks of `block_bytes` bytes. The graph ops `dequantize` and
/// `qmatmul` take its [`name`](QuantEncoding::name) as their `encoding` attribute.
#[allow(non_camel_case_types)] // GGML's own names read better than Q40 / Q4K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum QuantEncoding {
    /// 32 elements in 18 bytes: one scale, 4-bit values.
    Q4_0 = sys::MAX_QUANT_Q4_0,
    /// 256 elements in 144 bytes: super-block scales, 4-bit values.
    Q4_K = sys::MAX_QUANT_Q4_K,
    /// 256 elements in 176 bytes: super-block scales, 5-bit values.
    Q5_K = sys::MAX_QUANT_Q5_K,
    /// 256 elements in 210 bytes: super-block scales, 6-bit values.
    Q6_K = sys::MAX_QUANT_Q6_K,
    /// 32 elements in 34 bytes: one scale, 8-bit values.
    Q8_0 = sys::MAX_QUANT_Q8_0,
}

/// The shape of one block of an encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockParameters {
    /// Elements one block encodes.
    pub elements_per_block: usize,
    /// Bytes of one block.
    pub block_bytes: usize,
}

impl QuantEncoding {
    /// Every encoding, in the order of the ABI's codes.
    pub const ALL: [QuantEncoding; 5] =
        [QuantEncoding::Q4_0, QuantEncoding::Q4_K, QuantEncoding::Q5_K, QuantEncoding::Q6_K, QuantEncoding::Q8_0];

    /// The encoding with the ABI's code (`MAX_QUANT_*`); `None` for `MAX_QUANT_NONE` and
    /// unknown codes.
    pub fn from_raw(code: i32) -> Option<QuantEncoding> {
        QuantEncoding::ALL.iter().copied().find(|e| *e as i32 == code)
    }
    /// The ABI's code (`MAX_QUANT_*`).
    pub fn raw(self) -> i32 {
        self as i32
    }
    /// The library's lower-case name, as the ops' `encoding` attribute takes it: "q4_k".
    pub fn name(self) -> &'static str {
        unsafe { static_str(sys::max_quant_encoding_name(self as i32)) }
    }
    /// The encoding called `name`, in any case ("q4_k", "Q4_K").
    ///
    /// Errors: INVALID_ARGUMENT naming `name` and the valid names.
    pub fn from_name(name: &str) -> Result<QuantEncoding> {
        QuantEncoding::ALL.iter().copied().find(|e| e.name().eq_ignore_ascii_case(name)).ok_or_else(|| {
            let valid: Vec<&str> = QuantEncoding::ALL.iter().map(|e| e.name()).collect();
            invalid(format!("{name:?} is not a quantization encoding (valid: {})", valid.join(", ")))
        })
    }
    /// Elements and bytes of one block, as the library states them.
    pub fn block(self) -> Result<BlockParameters> {
        check_abi()?;
        let (mut elements, mut bytes) = (0i32, 0i32);
        check(unsafe { sys::max_quant_encoding_block(self as i32, &mut elements, &mut bytes) })?;
        Ok(BlockParameters { elements_per_block: elements as usize, block_bytes: bytes as usize })
    }
    /// Bytes of one encoded row of `k` elements.
    ///
    /// Errors: INVALID_ARGUMENT when `k` is not a whole number of blocks.
    pub fn row_bytes(self, k: usize) -> Result<usize> {
        let b = self.block()?;
        if !k.is_multiple_of(b.elements_per_block) {
            return Err(invalid(format!("a {self} row needs a multiple of {} elements, got {k}", b.elements_per_block)));
        }
        Ok(k / b.elements_per_block * b.block_bytes)
    }
}

impl fmt::Display for QuantEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn invalid(message: String) -> Error {
    Error::new(sys::MAX_STATUS_INVALID_ARGUMENT, message)
}

/// The ABI code of an optional encoding (`None`: MAX_QUANT_NONE).
fn encoding_code(encoding: Option<QuantEncoding>) -> i32 {
    encoding.map_or(sys::MAX_QUANT_NONE, QuantEncoding::raw)
}

impl Tensor {
    /// Quantizes this float32 host tensor `[..., k]` into a new `uint8 [..., row_bytes]`
    /// tensor of `encoding`, fitting each block's scales by least squares: the bytes
    /// `qmatmul` reads. A conversion step, not a fast kernel. Thread-safe.
    ///
    /// Errors: INVALID_ARGUMENT for another dtype, a scalar, or `k` not a whole number of
    /// blocks; FAILED_PRECONDITION for device memory.
    pub fn quantize(&self, encoding: QuantEncoding) -> Result<Tensor> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_tensor_quantize(self.ptr, encoding as i32, &mut p) })?;
        Ok(Tensor { ptr: p })
    }
}

// ======================================================================================
// The registry
// ======================================================================================

/// What a registry knows of one weight without reading its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightInfo {
    /// The stored dtype: `UInt8` for a quantized weight.
    pub dtype: DType,
    /// The stored shape: `[rows..., row_bytes]` for a quantized weight.
    pub shape: Vec<i64>,
    /// The block encoding of a quantized weight; `None` for a plain one.
    pub encoding: Option<QuantEncoding>,
}

/// A registry of named tensors (MAX's weights registry, `max_weights_t`): every tensor of
/// the safetensors and GGUF files added to it, plus tensors added from memory. Models bind
/// the weights their graph declares from it by name ([`CompiledModel::init_from_weights`],
/// [`Model::reload_from_weights`]).
///
/// Ownership: files are mapped, not read. A tensor whose bytes are aligned for its dtype is
/// a read-only view of the file, and the file stays mapped while such a view lives (also
/// after the registry is dropped). Tensors added from memory are shared, not copied.
///
/// Thread-safety: `Send + Sync`, not `Clone`. The header requires adding to be synchronized
/// against every other use; here adding takes `&mut self`, so the borrow checker enforces
/// it, while any number of threads may query a filled registry and bind models through
/// `&Weights`.
pub struct Weights {
    ptr: *mut sys::max_weights_t,
}

// SAFETY: the registry's queries and model binding are thread-safe once it is filled, its
// refcount is atomic, and every mutating call goes through `&mut self` (no Clone hands out a
// second handle), which is the external synchronization the header asks for.
unsafe impl Send for Weights {}
unsafe impl Sync for Weights {}

impl Weights {
    /// An empty registry.
    pub fn new() -> Result<Weights> {
        check_abi()?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_weights_create(&mut p) })?;
        Ok(Weights { ptr: p })
    }

    /// A registry holding every tensor of `paths` (see [`Weights::add_file`]).
    pub fn from_files<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Result<Weights> {
        let mut w = Weights::new()?;
        for p in paths {
            w.add_file(p)?;
        }
        Ok(w)
    }

    /// Adds every tensor of a `.safetensors`, `.gguf` or sharded `.safetensors.index.json`
    /// file (else the format is read from the content), or nothing when anything fails.
    ///
    /// Errors: NOT_FOUND or PERMISSION_DENIED for a file that cannot be opened; DATA_LOSS
    /// naming the file, tensor and offset for a truncated or corrupt one; INVALID_ARGUMENT for
    /// an unknown dtype or format; UNIMPLEMENTED for a GGUF tensor type the library does not
    /// read; ALREADY_EXISTS naming a weight the registry has.
    pub fn add_file(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let c = path_cstring(path.as_ref())?;
        check(unsafe { sys::max_weights_add_file(self.ptr, c.as_ptr()) })
    }

    /// Adds `tensor` under `name` by reference: the registry (and models bound from it)
    /// share its memory, so do not write to it while they use it.
    ///
    /// Errors: INVALID_ARGUMENT for an empty name; ALREADY_EXISTS when the name is taken.
    pub fn add_tensor(&mut self, name: &str, tensor: &Tensor) -> Result<()> {
        self.add(name, tensor, None)
    }

    /// Adds an already quantized `uint8 [rows..., row_bytes]` tensor (from
    /// [`Tensor::quantize`] or a GGUF file) under `name` with its `encoding`.
    ///
    /// Errors: as [`Weights::add_tensor`], and INVALID_ARGUMENT for a tensor that is not
    /// uint8 or whose rows are not a whole number of blocks.
    pub fn add_quantized(&mut self, name: &str, tensor: &Tensor, encoding: QuantEncoding) -> Result<()> {
        self.add(name, tensor, Some(encoding))
    }

    /// Adds a copy of `data` (row-major, `shape`) under `name`.
    ///
    /// Errors: INVALID_ARGUMENT when `data` does not have `shape`'s element count, and as
    /// [`Weights::add_tensor`].
    pub fn add_slice<T: Element>(&mut self, name: &str, data: &[T], shape: &[i64]) -> Result<()> {
        self.add_tensor(name, &Tensor::from_slice(data, shape)?)
    }

    fn add(&mut self, name: &str, tensor: &Tensor, encoding: Option<QuantEncoding>) -> Result<()> {
        let c = cstring(name)?;
        check(unsafe { sys::max_weights_add_tensor(self.ptr, c.as_ptr(), tensor.ptr, encoding_code(encoding)) })
    }

    /// The number of tensors.
    pub fn len(&self) -> Result<usize> {
        let mut n = 0usize;
        check(unsafe { sys::max_weights_count(self.ptr, &mut n) })?;
        Ok(n)
    }

    /// Whether the registry has no tensors.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Every name, in the order the tensors were added.
    pub fn names(&self) -> Result<Vec<String>> {
        (0..self.len()?)
            .map(|i| {
                let mut s = ptr::null();
                check(unsafe { sys::max_weights_name(self.ptr, i, &mut s) })?;
                Ok(unsafe { owned_str(s) })
            })
            .collect()
    }

    /// Whether the registry has a tensor called `name`.
    pub fn contains(&self, name: &str) -> Result<bool> {
        match self.info(name) {
            Ok(_) => Ok(true),
            Err(e) if e.code == sys::MAX_STATUS_NOT_FOUND => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The stored dtype, shape and encoding of `name`, without touching its bytes.
    ///
    /// Errors: NOT_FOUND naming the weight.
    pub fn info(&self, name: &str) -> Result<WeightInfo> {
        let c = cstring(name)?;
        let (mut dtype, mut rank, mut dims, mut encoding) = (0, 0i32, ptr::null(), 0);
        check(unsafe { sys::max_weights_info(self.ptr, c.as_ptr(), &mut dtype, &mut rank, &mut dims, &mut encoding) })?;
        // The dims belong to the registry: copy them out.
        let shape = if rank <= 0 || dims.is_null() { vec![] } else { unsafe { std::slice::from_raw_parts(dims, rank as usize).to_vec() } };
        let encoding = match encoding {
            sys::MAX_QUANT_NONE => None,
            code => Some(QuantEncoding::from_raw(code).ok_or_else(|| {
                Error::new(sys::MAX_STATUS_INTERNAL, format!("weight {name:?} has encoding code {code}, unknown to this binding"))
            })?),
        };
        Ok(WeightInfo { dtype: DType::from_raw_res(dtype)?, shape, encoding })
    }

    /// The tensor `name`: a read-only view of the file where its bytes are aligned, a
    /// read-only copy where not, or the tensor that was added.
    ///
    /// Errors: NOT_FOUND naming the weight.
    pub fn tensor(&self, name: &str) -> Result<Tensor> {
        let c = cstring(name)?;
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_weights_tensor(self.ptr, c.as_ptr(), &mut p) })?;
        Ok(Tensor { ptr: p })
    }

    /// Writes every tensor, in order, as one GGUF v3 file at `path` (quantized ones with
    /// their encoding), with `general.name` set to `model_name` when given. A failed write
    /// leaves `path` as it was. Safe beside other readers of the registry.
    ///
    /// Errors: INVALID_ARGUMENT for a dtype GGUF cannot hold (bool, unsigned integers wider
    /// than 8 bits, float8) or more than 4 dims; an I/O error naming the path.
    pub fn save_gguf(&self, path: impl AsRef<Path>, model_name: Option<&str>) -> Result<()> {
        let c = path_cstring(path.as_ref())?;
        let name = model_name.map(cstring).transpose()?;
        check(unsafe { sys::max_weights_save_gguf(self.ptr, c.as_ptr(), name.as_ref().map_or(ptr::null(), |n| n.as_ptr())) })
    }

    /// The raw handle, still owned by `self` (do not release it), for calls into [`ffi`].
    pub fn as_ptr(&self) -> *mut sys::max_weights_t {
        self.ptr
    }
}

impl Drop for Weights {
    fn drop(&mut self) {
        unsafe { sys::max_weights_release(self.ptr) }
    }
}

impl fmt::Debug for Weights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Weights({:?} tensors)", self.len().ok())
    }
}

// ======================================================================================
// Models from a registry
// ======================================================================================

impl CompiledModel {
    /// Binds each weight the graph declares by name from `weights` (else from the model
    /// file's own weights, e.g. ONNX initializers) and gives a runnable model. Tensors of the
    /// registry that the graph does not declare are ignored. The model shares the tensors'
    /// memory; the registry itself may be dropped afterwards. Thread-safe.
    ///
    /// Errors: NOT_FOUND naming a declared weight that neither has; INVALID_ARGUMENT naming a
    /// weight whose dtype or shape differs from the declaration.
    pub fn init_from_weights(&self, weights: &Weights) -> Result<Model> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::max_model_create_from_weights(self.ptr, weights.ptr, &mut p) })?;
        Ok(Model { ptr: p })
    }
}

impl Model {
    /// As [`Model::reload`], for every declared weight that `weights` has (the others
    /// stay). All or nothing; executes already running finish with the old weights.
    ///
    /// Errors: INVALID_ARGUMENT naming a weight whose dtype or shape differs.
    pub fn reload_from_weights(&self, weights: &Weights) -> Result<()> {
        check(unsafe { sys::max_model_reload_from_weights(self.ptr, weights.ptr) })
    }
}
