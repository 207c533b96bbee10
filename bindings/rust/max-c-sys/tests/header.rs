//! Checks the hand-written declarations of `src/lib.rs` against `include/max_c.h`: every
//! `MAX_API` function is declared with the same parameter names and types and the same
//! return type, every integer `#define` and DLPack enum value is a constant with the same
//! value, and every `int32_t` typedef is a type alias. The header is the one pkg-config
//! found (MAX_C_HEADER from build.rs), else the repository's own.
//!
//! The parsers are small on purpose: they understand exactly the declaration style the
//! header and lib.rs use (one declaration per `;`, no macros in signatures), and fail loudly
//! on anything else rather than skip it.
use std::collections::BTreeMap;
use std::path::PathBuf;

const RUST_SOURCE: &str = include_str!("../src/lib.rs");

fn header_path() -> PathBuf {
    match option_env!("MAX_C_HEADER") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../include/max_c.h"),
    }
}

fn header() -> String {
    let path = header_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the header {}: {e} (set MAX_C_INCLUDE_DIR)", path.display()));
    strip_c_comments(&text)
}

fn strip_c_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("unterminated comment in the header");
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    out.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// One function: parameters as (name, type) and the return type, both in Rust spelling.
#[derive(Debug, PartialEq, Eq)]
struct Signature {
    params: Vec<(String, String)>,
    ret: String,
}

// ---- the C side -------------------------------------------------------------------------

/// A C scalar or typedef name in Rust spelling.
fn rust_base(c: &str) -> String {
    match c {
        "void" => "c_void",
        "char" => "c_char",
        "int32_t" => "i32",
        "uint32_t" => "u32",
        "int64_t" => "i64",
        "uint64_t" => "u64",
        "uint8_t" => "u8",
        "size_t" => "usize",
        "double" => "f64",
        other => other,
    }
    .to_string()
}

/// A C type (without a declarator name) in Rust spelling: `const int64_t**` is
/// `*mut *const i64`, `max_tensor_t* const*` is `*const *mut max_tensor_t`.
fn rust_type(c: &str) -> String {
    let spaced = c.replace('*', " * ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut base = None;
    // const_levels[0]: the base is const; const_levels[i]: the i-th pointer is const.
    let mut const_levels = vec![false];
    for t in tokens {
        match t {
            "const" => *const_levels.last_mut().unwrap() = true,
            "*" => const_levels.push(false),
            name => {
                assert!(base.is_none(), "unexpected C type {c:?}");
                base = Some(name);
            }
        }
    }
    let mut ty = rust_base(base.unwrap_or_else(|| panic!("no base type in {c:?}")));
    // Each pointer level wraps the type inside it; the const before a `*` is its pointee's.
    for &pointee_const in &const_levels[..const_levels.len() - 1] {
        ty = format!("{} {ty}", if pointee_const { "*const" } else { "*mut" });
    }
    ty
}

/// Splits `const char* name` into (name, Rust type).
fn c_param(p: &str) -> (String, String) {
    let p = p.trim();
    let split = p.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or_else(|| panic!("unnamed parameter {p:?}"));
    (p[split + 1..].to_string(), rust_type(&p[..=split]))
}

fn header_functions(header: &str) -> BTreeMap<String, Signature> {
    let mut out = BTreeMap::new();
    for decl in header.split(';') {
        // A declaration starts a line with MAX_API (unlike `#define MAX_API ...`).
        let Some(at) = decl.find("\nMAX_API ") else { continue };
        let decl = decl[at + "\nMAX_API ".len()..].split_whitespace().collect::<Vec<_>>().join(" ");
        let open = decl.find('(').unwrap_or_else(|| panic!("not a function: {decl:?}"));
        let close = decl.rfind(')').unwrap();
        let head = &decl[..open];
        let split = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap();
        let name = head[split + 1..].to_string();
        let ret = match head[..=split].trim() {
            "void" => String::new(),
            c => rust_type(c),
        };
        let args = decl[open + 1..close].trim();
        let params = if args == "void" { vec![] } else { args.split(',').map(c_param).collect() };
        assert!(out.insert(name.clone(), Signature { params, ret }).is_none(), "{name} declared twice");
    }
    out
}

/// `#define NAME <integer>` (plain or `(1UL << 2UL)`) and `kDLxxx = N` enum values.
fn header_constants(header: &str) -> BTreeMap<String, i128> {
    let mut out = BTreeMap::new();
    for line in header.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#define ") {
            let mut parts = rest.splitn(2, ' ');
            let (name, value) = (parts.next().unwrap(), parts.next().unwrap_or("").trim());
            if let Some(v) = int_expr(value) {
                out.insert(name.to_string(), v);
            }
        } else if line.starts_with("kDL") {
            let (name, value) = line.trim_end_matches(',').split_once(" = ").expect("enum value");
            out.insert(name.to_string(), int_expr(value).expect("integer enum value"));
        }
    }
    out
}

/// An integer literal (with C's or Rust's suffixes) or a parenthesised `a << b`.
fn int_expr(text: &str) -> Option<i128> {
    let t = text.trim().trim_start_matches('(').trim_end_matches(')');
    if let Some((a, b)) = t.split_once("<<") {
        return Some(int_expr(a)? << int_expr(b)?);
    }
    let digits = t.trim_end_matches(['U', 'L', 'u', 'l']);
    digits.parse().ok()
}

fn header_int_typedefs(header: &str) -> Vec<String> {
    header
        .lines()
        .filter_map(|l| l.trim().strip_prefix("typedef int32_t "))
        .map(|rest| rest.trim_end_matches(';').trim().to_string())
        .collect()
}

// ---- the Rust side ----------------------------------------------------------------------

fn rust_functions() -> BTreeMap<String, Signature> {
    let mut out = BTreeMap::new();
    for line in RUST_SOURCE.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("pub fn ") else { continue };
        let open = rest.find('(').unwrap();
        let close = rest.rfind(')').unwrap();
        let name = rest[..open].to_string();
        let args = rest[open + 1..close].trim();
        let params = if args.is_empty() {
            vec![]
        } else {
            args.split(", ")
                .map(|a| {
                    let (n, t) = a.split_once(": ").unwrap_or_else(|| panic!("{name}: parameter {a:?}"));
                    (n.to_string(), expand_alias(t))
                })
                .collect()
        };
        let ret = rest[close + 1..].trim_end_matches(';').trim().trim_start_matches("->").trim();
        let ret = expand_alias(ret);
        assert!(out.insert(name.clone(), Signature { params, ret }).is_none(), "{name} declared twice");
    }
    out
}

/// lib.rs abbreviates `*mut max_status_t` as `St`.
fn expand_alias(rust_type: &str) -> String {
    if rust_type == "St" { "*mut max_status_t".to_string() } else { rust_type.to_string() }
}

fn rust_consts() -> BTreeMap<String, String> {
    RUST_SOURCE
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|rest| {
            let (name, rest) = rest.split_once(':')?;
            let (_, value) = rest.split_once('=')?;
            Some((name.trim().to_string(), value.trim().trim_end_matches(';').to_string()))
        })
        .collect()
}

// ---- the checks -------------------------------------------------------------------------

#[test]
fn every_function_matches_the_header() {
    let c = header_functions(&header());
    let rust = rust_functions();
    assert!(c.len() >= 160, "only {} MAX_API functions parsed from {}", c.len(), header_path().display());
    let mut problems = Vec::new();
    for (name, sig) in &c {
        match rust.get(name) {
            None => problems.push(format!("{name}: not declared in max-c-sys")),
            Some(r) if r != sig => problems.push(format!("{name}: header {sig:?}\n    max-c-sys {r:?}")),
            Some(_) => {}
        }
    }
    for name in rust.keys().filter(|n| !c.contains_key(*n)) {
        problems.push(format!("{name}: declared in max-c-sys but not in the header"));
    }
    assert!(problems.is_empty(), "declarations differ from {}:\n{}", header_path().display(), problems.join("\n"));
}

#[test]
fn every_constant_matches_the_header() {
    let c = header_constants(&header());
    let rust = rust_consts();
    assert!(c.len() > 80, "only {} constants parsed", c.len());
    let mut problems = Vec::new();
    for (name, value) in &c {
        match rust.get(name).map(|v| int_expr(v)) {
            None => problems.push(format!("{name}: missing")),
            Some(v) if v != Some(*value) => problems.push(format!("{name}: header {value}, max-c-sys {:?}", rust[name])),
            Some(_) => {}
        }
    }
    assert!(problems.is_empty(), "constants differ:\n{}", problems.join("\n"));
    // The packed version is an expression in the header; check it through its parts.
    assert_eq!(max_c_sys::MAX_ABI_VERSION, (c["MAX_ABI_VERSION_MAJOR"] as u32) << 16 | c["MAX_ABI_VERSION_MINOR"] as u32);
}

#[test]
fn every_int_typedef_is_an_alias() {
    for name in header_int_typedefs(&header()) {
        assert!(RUST_SOURCE.contains(&format!("pub type {name} = i32;")), "typedef {name} is not `pub type {name} = i32;`");
    }
}

#[test]
fn parser_understands_c_pointer_constness() {
    assert_eq!(rust_type("const int64_t**"), "*mut *const i64");
    assert_eq!(rust_type("max_tensor_t* const*"), "*const *mut max_tensor_t");
    assert_eq!(rust_type("const char* const*"), "*const *const c_char");
    assert_eq!(rust_type("void*"), "*mut c_void");
    assert_eq!(c_param("max_model_t** out_model"), ("out_model".into(), "*mut *mut max_model_t".into()));
    assert_eq!(int_expr("(1UL << 2UL)"), Some(4));
}

#[test]
fn check_abi_refuses_a_newer_header_readably() {
    // What a program built against a newer header sees from this (older) library.
    let newer = (max_c_sys::MAX_ABI_VERSION_MAJOR << 16) | 999;
    unsafe {
        let st = max_c_sys::max_check_abi(newer);
        assert!(!st.is_null(), "a header 1.999 must be refused");
        assert_eq!(max_c_sys::max_status_code(st), max_c_sys::MAX_STATUS_FAILED_PRECONDITION);
        let msg = std::ffi::CStr::from_ptr(max_c_sys::max_status_message(st)).to_string_lossy().into_owned();
        max_c_sys::max_status_release(st);
        assert!(msg.contains("1.999") && msg.contains("older"), "{msg}");
    }
}
