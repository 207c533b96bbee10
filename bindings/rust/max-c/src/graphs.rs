//! Device graphs (ABI 1.4): capture one run of a [`Model`] under a key, then replay it
//! (MAX's `Model.capture`, `Model.replay` and `Model.debug_verify_replay`).
//!
//! A capture runs the model once, as [`Model::execute`] does, and records the run under a
//! key the caller picks. A replay runs the recording again on new inputs of the same dtypes
//! and shapes. On a GPU the recording is a CUDA graph, replayed with one launch instead of
//! the run's many, which is what makes small batches fast; on the CPU the captured plan is
//! rerun, so the same program serves both devices.
//!
//! Every address in a recording is fixed, so **the capture's outputs are every replay's
//! outputs too**: each replay rewrites, in place, the tensors [`Model::capture`] returned.
//! Copy a result out ([`Tensor::to_vec`], [`Tensor::copy`]) before the next replay to keep it.
//!
//! ```no_run
//! # use max_c::*;
//! # fn main() -> Result<()> {
//! # let model: Model = unimplemented!();
//! # let (first, second): (Tensor, Tensor) = unimplemented!();
//! let out = model.capture(&[7], &[&first])?; // runs once, records under key 7
//! model.replay(&[7], &[&second])?;           // rewrites out[0] in place
//! let y = out[0].to_vec::<f32>()?;           // the result for `second`
//! # Ok(()) }
//! ```
//!
//! Keys: `graph_keys` holds one key per device the model runs on, which today is always
//! exactly one (`&[key]`); any other count is INVALID_ARGUMENT. A key is any `u64`; capturing
//! under a key that already holds a graph replaces it. A graph keeps the weights it was
//! captured with ([`Model::reload`] applies to later captures) and lives as long as the model.
//!
//! Thread-safety: the three calls take `&self` and may run from many threads at once.
//! Replays of one key take turns inside the library, but reading that key's output tensors
//! while another thread replays it races with the rewrite: order those reads after the
//! replay (for example, replay and read on one thread, or under a lock of your own).

use super::*;
use crate::engine::{or_null, take_outputs};

/// `graph_keys` and the input handles of one graph call, as the C arrays it takes. Borrows
/// the keys and the tensors for the call, so neither can go away under it.
struct GraphArgs<'a> {
    keys: &'a [u64],
    inputs: Vec<*mut sys::max_tensor_t>,
    _tensors: PhantomData<&'a Tensor>,
}

impl<'a> GraphArgs<'a> {
    fn new(graph_keys: &'a [u64], inputs: &[&'a Tensor]) -> GraphArgs<'a> {
        GraphArgs { keys: graph_keys, inputs: inputs.iter().map(|t| t.ptr).collect(), _tensors: PhantomData }
    }
    // An empty slice's address is dangling: NULL goes with the count 0 instead, which the
    // library answers with INVALID_ARGUMENT for the key (or input) count.
    fn keys_ptr(&self) -> *const u64 {
        or_null(self.keys)
    }
    fn inputs_ptr(&self) -> *const *mut sys::max_tensor_t {
        or_null(&self.inputs)
    }
}

impl Model {
    /// Runs the model on `inputs` (by position, checked as [`Model::execute`] checks them)
    /// and records the run under `graph_keys` (one key per device of the model: `&[key]`),
    /// replacing what that key held. Returns the outputs, in the order of
    /// [`Model::output_metadata`], holding this run's results.
    ///
    /// Ownership: the returned tensors are shared with the graph, not copied. Every
    /// [`Model::replay`] of the key rewrites them in place, so they always hold the latest
    /// replay's results; copy one out to keep a result. Dropping them is fine (the graph
    /// keeps its own reference), and a later capture under the same key returns new tensors
    /// and leaves these with their last values.
    ///
    /// Errors: INVALID_ARGUMENT for a key count other than one, or for the input checks of
    /// `execute` (the model stays usable); FAILED_PRECONDITION when the model's work cannot
    /// be recorded (an op that waits on the host mid-run).
    pub fn capture(&self, graph_keys: &[u64], inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let a = GraphArgs::new(graph_keys, inputs);
        take_outputs(|out| unsafe {
            sys::max_model_capture(self.ptr, a.keys_ptr(), a.keys.len(), a.inputs_ptr(), a.inputs.len(), out)
        })
    }

    /// Replays the graph captured under `graph_keys` on `inputs`, which must have the dtypes
    /// and shapes it was captured with, rewriting the tensors [`Model::capture`] returned; it
    /// returns when they hold the new results. Inputs are only read.
    ///
    /// Errors: FAILED_PRECONDITION naming the key when nothing is captured under it;
    /// INVALID_ARGUMENT naming the difference when the inputs do not match the capture (say
    /// another batch size) or the key count is not one. A refused replay runs nothing, so the
    /// outputs keep their values.
    pub fn replay(&self, graph_keys: &[u64], inputs: &[&Tensor]) -> Result<()> {
        let a = GraphArgs::new(graph_keys, inputs);
        check(unsafe { sys::max_model_replay(self.ptr, a.keys_ptr(), a.keys.len(), a.inputs_ptr(), a.inputs.len()) })
    }

    /// A debugging aid: runs the model eagerly on `inputs` (into new outputs, discarded; the
    /// capture's outputs are not touched) and checks that it launches the kernels the graph
    /// of `graph_keys` recorded, in order and with the same launch shapes. `Ok` means the
    /// graph replays what `execute` would run.
    ///
    /// Errors: FAILED_PRECONDITION naming the first difference, or that nothing is captured
    /// under the key; INVALID_ARGUMENT as for [`Model::replay`].
    pub fn debug_verify_replay(&self, graph_keys: &[u64], inputs: &[&Tensor]) -> Result<()> {
        let a = GraphArgs::new(graph_keys, inputs);
        check(unsafe { sys::max_model_debug_verify_replay(self.ptr, a.keys_ptr(), a.keys.len(), a.inputs_ptr(), a.inputs.len()) })
    }
}
