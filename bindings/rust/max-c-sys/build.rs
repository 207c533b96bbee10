//! Finds libmax_c through pkg-config (honours PKG_CONFIG_PATH, e.g. the build tree's
//! uninstalled max_c.pc) and adds an rpath to its libdir so binaries and tests run without
//! LD_LIBRARY_PATH.
fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=MAX_C_LIB_DIR");
    if let Ok(dir) = std::env::var("MAX_C_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=max_c");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        println!("cargo:libdir={dir}");
        return;
    }
    let lib = pkg_config::Config::new()
        .atleast_version("1.2")
        .probe("max_c")
        .unwrap_or_else(|e| {
            panic!("max-c-sys: cannot find libmax_c via pkg-config (set PKG_CONFIG_PATH to the build directory holding max_c.pc, or MAX_C_LIB_DIR): {e}")
        });
    for dir in &lib.link_paths {
        // Emitted for every dependent crate's binaries (tests included).
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        println!("cargo:libdir={}", dir.display());
    }
    for dir in &lib.include_paths {
        println!("cargo:include={}", dir.display());
    }
}
