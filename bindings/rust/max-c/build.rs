//! `rustc-link-arg` from max-c-sys does not reach dependents, so re-emit the rpath to
//! libmax_c's libdir (published by max-c-sys through `links = "max_c"` metadata) for this
//! crate's tests, examples and binaries.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_MAX_C_LIBDIR");
    if let Ok(dirs) = std::env::var("DEP_MAX_C_LIBDIR") {
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}
