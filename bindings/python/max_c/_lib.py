"""Finds, loads and declares libmax_c (the C ABI in include/max_c.h) through ctypes.

Search order: $MAX_C_LIBRARY (a path), this package's directory, `pkg-config --variable=libdir
max_c` (PKG_CONFIG_PATH is honoured), then the system loader. The ABI is checked at import.
"""
import ctypes
import ctypes.util
import os
import shutil
import subprocess
from ctypes import (POINTER, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_void_p)

ABI_VERSION_MAJOR = 1
ABI_VERSION_MINOR = 2
ABI_VERSION = (ABI_VERSION_MAJOR << 16) | ABI_VERSION_MINOR

_SONAMES = ("libmax_c.so.1", "libmax_c.so", "libmax_c.dylib", "libmax_c.1.dylib")


def _candidates():
    env = os.environ.get("MAX_C_LIBRARY")
    if env:
        yield env, "MAX_C_LIBRARY"
        return  # an explicit path is authoritative
    here = os.path.dirname(os.path.abspath(__file__))
    for so in _SONAMES:
        p = os.path.join(here, so)
        if os.path.exists(p):
            yield p, "package directory"
    if shutil.which("pkg-config"):
        try:
            out = subprocess.run(["pkg-config", "--variable=libdir", "max_c"], capture_output=True,
                                 text=True, timeout=30)
            libdir = out.stdout.strip() if out.returncode == 0 else ""
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            for so in _SONAMES:
                p = os.path.join(libdir, so)
                if os.path.exists(p):
                    yield p, "pkg-config"
    found = ctypes.util.find_library("max_c")
    if found:
        yield found, "system"
    yield "libmax_c.so.1", "system"


def _load():
    errors = []
    for path, how in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path} ({how}): {e}")
    raise ImportError("max_c: could not load libmax_c; set MAX_C_LIBRARY to its path or "
                      "PKG_CONFIG_PATH to a directory holding max_c.pc. Tried:\n  "
                      + "\n  ".join(errors))


lib, library_path = _load()

# ---- ctypes mirrors of the header's structs -------------------------------------------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


class max_dim_t(ctypes.Structure):
    _fields_ = [("size", c_int64), ("expr", c_char_p)]


class max_context_options_t(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("devices", POINTER(c_void_p)),
                ("num_devices", c_size_t), ("num_threads", c_int32), ("log_level", c_int32)]


class max_compile_options_t(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("enable_fusion", c_int32),
                ("enable_constant_folding", c_int32), ("fold_limit_bytes", c_uint64),
                ("plan_cache_capacity", c_int64),
                ("copy_inputs_to_device", c_int32),  # ABI 1.4 (an older library reads a zero tail)
                ("file_device", c_void_p)]  # ABI 1.5


RELEASE_FN = ctypes.CFUNCTYPE(None, c_void_p)
DLPACK_DELETER = ctypes.CFUNCTYPE(None, c_void_p)

# ---- declarations --------------------------------------------------------------------------

P = c_void_p  # handles and statuses
PP = POINTER(c_void_p)
I32P = POINTER(c_int32)
I64P = POINTER(c_int64)
SZP = POINTER(c_size_t)
STRP = POINTER(c_char_p)
S = P  # status return

_DECLS = {
    "max_abi_version": (c_uint32, []),
    "max_version_string": (c_char_p, []),
    "max_check_abi": (S, [c_uint32]),
    "max_status_code": (c_int32, [P]),
    "max_status_message": (c_char_p, [P]),
    "max_status_code_name": (c_char_p, [c_int32]),
    "max_status_release": (None, [P]),
    "max_log_set_level": (S, [c_int32]),
    "max_log_level": (c_int32, []),
    # dtypes
    "max_dtype_is_valid": (c_int32, [c_int32]),
    "max_dtype_size_in_bits": (c_int32, [c_int32]),
    "max_dtype_size_in_bytes": (c_int32, [c_int32]),
    "max_dtype_align": (c_int32, [c_int32]),
    "max_dtype_is_float": (c_int32, [c_int32]),
    "max_dtype_is_float8": (c_int32, [c_int32]),
    "max_dtype_is_half": (c_int32, [c_int32]),
    "max_dtype_is_integral": (c_int32, [c_int32]),
    "max_dtype_is_signed_integral": (c_int32, [c_int32]),
    "max_dtype_is_unsigned_integral": (c_int32, [c_int32]),
    "max_dtype_name": (c_char_p, [c_int32]),
    "max_dtype_from_name": (S, [c_char_p, I32P]),
    # devices
    "max_accelerator_count": (S, [I32P]),
    "max_device_create": (S, [c_int32, c_int32, PP]),
    "max_device_retain": (None, [P]),
    "max_device_release": (None, [P]),
    "max_device_kind": (S, [P, I32P]),
    "max_device_id": (S, [P, I32P]),
    "max_device_label": (S, [P, STRP]),
    "max_device_api": (S, [P, STRP]),
    "max_device_is_host": (S, [P, I32P]),
    "max_device_synchronize": (S, [P]),
    # contexts (MAX's InferenceSession)
    "max_context_options_init": (S, [POINTER(max_context_options_t), c_size_t]),
    "max_context_create": (S, [POINTER(max_context_options_t), PP]),
    "max_context_retain": (None, [P]),
    "max_context_release": (None, [P]),
    "max_context_num_threads": (S, [P, I32P]),
    "max_context_num_devices": (S, [P, SZP]),
    "max_context_device": (S, [P, c_size_t, PP]),
    # tensors
    "max_tensor_create": (S, [P, c_int32, I64P, c_int32, PP]),
    "max_tensor_create_from_host": (S, [P, c_int32, I64P, c_int32, c_void_p, c_size_t, PP]),
    "max_tensor_create_borrowed": (S, [c_int32, I64P, c_int32, I64P, c_void_p, c_int32,
                                       RELEASE_FN, c_void_p, PP]),
    "max_tensor_retain": (None, [P]),
    "max_tensor_release": (None, [P]),
    "max_tensor_dtype": (S, [P, I32P]),
    "max_tensor_rank": (S, [P, I32P]),
    "max_tensor_dims": (S, [P, POINTER(I64P)]),
    "max_tensor_strides": (S, [P, POINTER(I64P)]),
    "max_tensor_num_elements": (S, [P, I64P]),
    "max_tensor_byte_size": (S, [P, SZP]),
    "max_tensor_device": (S, [P, PP]),
    "max_tensor_is_contiguous": (S, [P, I32P]),
    "max_tensor_is_read_only": (S, [P, I32P]),
    "max_tensor_data": (S, [P, PP]),
    "max_tensor_mutable_data": (S, [P, PP]),
    "max_tensor_to_host": (S, [P, c_void_p, c_size_t]),
    "max_tensor_copy": (S, [P, P, PP]),
    "max_tensor_copy_from": (S, [P, P]),
    "max_tensor_view": (S, [P, c_int32, I64P, c_int32, PP]),
    "max_tensor_to_dlpack": (S, [P, PP]),
    "max_tensor_from_dlpack": (S, [P, PP]),
    "max_tensor_to_dlpack_unversioned": (S, [P, PP]),
    "max_tensor_from_dlpack_unversioned": (S, [P, PP]),
    "max_tensor_dlpack_device": (S, [P, POINTER(DLDevice)]),
    # tensor lists (a model's outputs)
    "max_tensor_list_create": (S, [PP]),
    "max_tensor_list_retain": (None, [P]),
    "max_tensor_list_release": (None, [P]),
    "max_tensor_list_append": (S, [P, P]),
    "max_tensor_list_size": (S, [P, SZP]),
    "max_tensor_list_get": (S, [P, c_size_t, PP]),
    # buffers
    "max_buffer_create": (S, [c_void_p, c_size_t, PP]),
    "max_buffer_release": (None, [P]),
    "max_buffer_data": (S, [P, PP]),
    "max_buffer_size": (S, [P, SZP]),
    # graphs
    "max_graph_create": (S, [c_char_p, PP]),
    "max_graph_retain": (None, [P]),
    "max_graph_release": (None, [P]),
    "max_graph_name": (S, [P, STRP]),
    "max_graph_add_input": (S, [P, c_char_p, c_int32, POINTER(max_dim_t), c_int32, c_int32,
                                c_int32, PP]),
    "max_graph_add_constant": (S, [P, P, PP]),
    "max_graph_add_weight": (S, [P, c_char_p, c_int32, POINTER(max_dim_t), c_int32, c_int32,
                                 c_int32, PP]),
    "max_graph_add_op": (S, [P, c_char_p, c_int32, PP, c_size_t, P, PP, c_size_t, SZP]),
    "max_graph_set_outputs": (S, [P, PP, POINTER(c_char_p), c_size_t]),
    "max_graph_add_subgraph": (S, [P, P, I64P]),
    "max_graph_num_inputs": (S, [P, SZP]),
    "max_graph_input": (S, [P, c_size_t, PP, STRP]),
    "max_graph_num_outputs": (S, [P, SZP]),
    "max_graph_output": (S, [P, c_size_t, PP, STRP]),
    "max_graph_num_ops": (S, [P, SZP]),
    "max_graph_verify": (S, [P]),
    "max_value_dtype": (S, [P, I32P]),
    "max_value_rank": (S, [P, I32P]),
    "max_value_dim": (S, [P, c_int32, I64P, STRP]),
    "max_value_device": (S, [P, I32P, I32P]),
    "max_value_type_string": (S, [P, STRP]),
    "max_attrs_create": (S, [PP]),
    "max_attrs_release": (None, [P]),
    "max_attrs_set_int": (S, [P, c_char_p, c_int64]),
    "max_attrs_set_float": (S, [P, c_char_p, c_double]),
    "max_attrs_set_bool": (S, [P, c_char_p, c_int32]),
    "max_attrs_set_string": (S, [P, c_char_p, c_char_p]),
    "max_attrs_set_dtype": (S, [P, c_char_p, c_int32]),
    "max_attrs_set_ints": (S, [P, c_char_p, I64P, c_size_t]),
    "max_attrs_set_floats": (S, [P, c_char_p, POINTER(c_double), c_size_t]),
    "max_attrs_set_dims": (S, [P, c_char_p, POINTER(max_dim_t), c_size_t]),
    "max_attrs_set_graph": (S, [P, c_char_p, c_int64]),
    "max_attrs_set_device": (S, [P, c_char_p, c_int32, c_int32]),
    "max_op_count": (S, [SZP]),
    "max_op_at": (S, [c_size_t, STRP, I32P]),
    "max_op_num_inputs": (S, [c_char_p, c_int32, SZP]),
    "max_op_input": (S, [c_char_p, c_int32, c_size_t, STRP, I32P]),
    "max_op_num_attrs": (S, [c_char_p, c_int32, SZP]),
    "max_op_attr": (S, [c_char_p, c_int32, c_size_t, STRP, I32P, I32P]),
    "max_graph_serialize": (S, [P, PP]),
    "max_graph_deserialize": (S, [c_void_p, c_size_t, PP]),
    "max_graph_save": (S, [P, c_char_p]),
    "max_graph_load": (S, [c_char_p, PP]),
    "max_graph_to_text": (S, [P, PP]),
    "max_graph_to_dot": (S, [P, PP]),
}

# ABI 1.2: the engine. Kept apart so that a library still growing its engine loads for the
# driver and graph modules; max_c.engine reports the missing symbols when it is used.
_DECLS_ENGINE = {
    "max_compile_options_init": (S, [POINTER(max_compile_options_t), c_size_t]),
    "max_context_compile": (S, [P, P, POINTER(max_compile_options_t), PP]),
    "max_context_compile_file": (S, [P, c_char_p, POINTER(max_compile_options_t), PP]),
    "max_compiled_model_retain": (None, [P]),
    "max_compiled_model_release": (None, [P]),
    "max_compiled_model_num_inputs": (S, [P, SZP]),
    "max_compiled_model_input": (S, [P, c_size_t, PP]),
    "max_compiled_model_num_outputs": (S, [P, SZP]),
    "max_compiled_model_output": (S, [P, c_size_t, PP]),
    "max_compiled_model_num_weights": (S, [P, SZP]),
    "max_compiled_model_weight": (S, [P, c_size_t, PP]),
    "max_tensor_spec_retain": (None, [P]),
    "max_tensor_spec_release": (None, [P]),
    "max_tensor_spec_name": (S, [P, STRP]),
    "max_tensor_spec_dtype": (S, [P, I32P]),
    "max_tensor_spec_rank": (S, [P, SZP]),
    "max_tensor_spec_dim": (S, [P, c_size_t, I64P, STRP]),
    "max_tensor_spec_device": (S, [P, PP]),
    "max_model_create": (S, [P, STRP, PP, c_size_t, PP]),
    "max_model_retain": (None, [P]),
    "max_model_release": (None, [P]),
    "max_model_compiled_model": (S, [P, PP]),
    "max_model_execute": (S, [P, PP, c_size_t, PP]),
    "max_model_execute_named": (S, [P, STRP, PP, c_size_t, PP]),
    "max_model_reload": (S, [P, STRP, PP, c_size_t]),
}


# ABI 1.3: weights files and the registry (max_c.weights reports these when missing).
_DECLS_WEIGHTS = {
    "max_quant_encoding_name": (c_char_p, [c_int32]),
    "max_quant_encoding_block": (S, [c_int32, I32P, I32P]),
    "max_weights_create": (S, [PP]),
    "max_weights_retain": (None, [P]),
    "max_weights_release": (None, [P]),
    "max_weights_add_file": (S, [P, c_char_p]),
    "max_weights_add_tensor": (S, [P, c_char_p, P, c_int32]),
    "max_weights_count": (S, [P, SZP]),
    "max_weights_name": (S, [P, c_size_t, STRP]),
    "max_weights_info": (S, [P, c_char_p, I32P, I32P, POINTER(POINTER(c_int64)), I32P]),
    "max_weights_tensor": (S, [P, c_char_p, PP]),
    "max_weights_save_gguf": (S, [P, c_char_p, c_char_p]),
    "max_tensor_quantize": (S, [P, c_int32, PP]),
    "max_model_create_from_weights": (S, [P, P, PP]),
    "max_model_reload_from_weights": (S, [P, P]),
}


# ABI 1.4: device graphs, captured and replayed (Model.capture reports these when missing).
_DECLS_GRAPHS = {
    "max_model_capture": (S, [P, POINTER(c_uint64), c_size_t, PP, c_size_t, PP]),
    "max_model_replay": (S, [P, POINTER(c_uint64), c_size_t, PP, c_size_t]),
    "max_model_debug_verify_replay": (S, [P, POINTER(c_uint64), c_size_t, PP, c_size_t]),
}


# ABI 1.5: constants placed on a device (a GPU graph's scalars).
_DECLS_PLACEMENT = {
    "max_graph_add_constant_on": (S, [P, P, c_int32, c_int32, PP]),
}


# ABI 1.8: run options, a deadline and a cancellation flag (Model.execute reports these
# when missing).
class max_run_options_t(ctypes.Structure):
    """max_run_options_t (ABI 1.8)."""
    _fields_ = [("struct_size", c_size_t), ("timeout_us", c_int64), ("cancel_flag", POINTER(c_int32))]


_DECLS_RUN_OPTIONS = {
    "max_run_options_init": (S, [POINTER(max_run_options_t), c_size_t]),
    "max_model_execute_with_options": (S, [P, PP, c_size_t, POINTER(max_run_options_t), PP]),
}


def _declare(decls):
    missing = []
    for name, (res, args) in decls.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = res
        fn.argtypes = args
    return missing


_missing = _declare(_DECLS)
missing_engine = _declare(_DECLS_ENGINE)
missing_weights = _declare(_DECLS_WEIGHTS)
missing_graphs = _declare(_DECLS_GRAPHS)
missing_placement = _declare(_DECLS_PLACEMENT)
missing_run_options = _declare(_DECLS_RUN_OPTIONS)


def _check_abi():
    st = lib.max_check_abi(ABI_VERSION)
    if st:
        msg = lib.max_status_message(st).decode("utf-8", "replace")
        lib.max_status_release(st)
        raise ImportError(f"max_c: {library_path}: {msg}")
    if _missing:
        raise ImportError(f"max_c: {library_path} lacks the ABI 1.1 symbols {', '.join(_missing)}")


_check_abi()


def version_string():
    return lib.max_version_string().decode()


def abi_version():
    v = lib.max_abi_version()
    return (v >> 16, v & 0xFFFF)
