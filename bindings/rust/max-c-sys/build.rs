//! Finds libmax_c through pkg-config (honours PKG_CONFIG_PATH, e.g. the build tree's
//! uninstalled max_c.pc) and adds an rpath to its libdir so binaries and tests run without
//! LD_LIBRARY_PATH. MAX_C_LIB_DIR (and MAX_C_INCLUDE_DIR for the header test) bypass
//! pkg-config for a library that has no .pc file.
use std::path::{Path, PathBuf};

/// The oldest library these declarations may link against: they declare ABI 1.4 symbols
/// (the device graphs, `max_model_capture` and friends). The ABI 1.5 additions are declared
/// too, but `max-c` only reaches `max_graph_add_constant_on` through a run-time lookup, so a
/// 1.4 library still links (and `file_device` is a struct field, refused by it only when set).
const MIN_VERSION: &str = "1.4";

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=MAX_C_LIB_DIR");
    println!("cargo:rerun-if-env-changed=MAX_C_INCLUDE_DIR");
    let (lib_dirs, include_dirs) = match std::env::var("MAX_C_LIB_DIR") {
        Ok(dir) => {
            println!("cargo:rustc-link-search=native={dir}");
            println!("cargo:rustc-link-lib=dylib=max_c");
            let includes = std::env::var("MAX_C_INCLUDE_DIR").map(|d| vec![PathBuf::from(d)]).unwrap_or_default();
            (vec![PathBuf::from(dir)], includes)
        }
        Err(_) => probe_pkg_config(),
    };
    for dir in &lib_dirs {
        // Emitted for this crate's own tests; dependents re-emit it from DEP_MAX_C_LIBDIR.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        println!("cargo:libdir={}", dir.display());
    }
    for dir in &include_dirs {
        println!("cargo:include={}", dir.display());
    }
    // The header the declarations are checked against (tests/header.rs).
    if let Some(header) = include_dirs.iter().map(|d| d.join("max_c.h")).find(|h| Path::exists(h)) {
        println!("cargo:rustc-env=MAX_C_HEADER={}", header.display());
    }
}

fn probe_pkg_config() -> (Vec<PathBuf>, Vec<PathBuf>) {
    match pkg_config::Config::new().atleast_version(MIN_VERSION).probe("max_c") {
        Ok(lib) => (lib.link_paths, lib.include_paths),
        Err(e) => panic!(
            "\nmax-c-sys: cannot find libmax_c >= {MIN_VERSION} through pkg-config.\n\
             Set PKG_CONFIG_PATH to the directory that holds max_c.pc: the build tree \
             (PKG_CONFIG_PATH=/path/to/max_c/build) or an install's lib/pkgconfig; \
             or set MAX_C_LIB_DIR to the directory that holds libmax_c.so.\n\
             PKG_CONFIG_PATH is now {:?}.\npkg-config said: {e}\n",
            std::env::var("PKG_CONFIG_PATH").unwrap_or_default()
        ),
    }
}
