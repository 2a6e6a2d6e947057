//! Build script of gprox-cuda (our own, no helper crate; DESIGN.md §3).
//!
//! 1. Device code: finds nvcc (`NVCC`, `CUDA_HOME`/`CUDA_PATH`, `PATH`, then the PyPI layout
//!    `<site-packages>/nvidia/cu13/bin/nvcc` in the workspace's `.cuda-venv` and in python3's
//!    site directories, unless `GPROX_NO_PIP_NVCC=1`), compiles every `cuda/*.cu` (one unity
//!    translation unit) into ONE fatbin — SASS sm_80 + sm_90 and PTX compute_75 by default,
//!    overridable with `GPROX_CUDA_ARCHS` (e.g. `sm_90,compute_90`) — writes the ptxas report to
//!    `$OUT_DIR/ptxas.log`, fails on register spills when `GPROX_CUDA_STRICT=1`, embeds the blob
//!    through `$OUT_DIR/fatbin.rs` and sets `cfg(gprox_device_code)`. Without nvcc: one cargo
//!    warning, an empty blob, cfg off.
//! 2. Host emulator: always compiles the same `.cu` files as C++20 with the `cc` crate into the
//!    static library `gprox_emu` (`-ffp-contract=off` so no FMA, like `nvcc --fmad=false`).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Default architectures: SASS for A100/H100, PTX for everything from Turing on (JIT).
const DEFAULT_ARCHS: &str = "sm_80,sm_90,compute_75";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let cuda_dir = manifest.join("cuda");
    let include_dir = manifest.join("include");

    println!("cargo::rustc-check-cfg=cfg(gprox_device_code)");
    println!("cargo:rerun-if-changed={}", cuda_dir.display());
    println!("cargo:rerun-if-changed={}", include_dir.display());
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "NVCC",
        "CUDA_HOME",
        "CUDA_PATH",
        "PATH",
        "GPROX_CUDA_ARCHS",
        "GPROX_CUDA_STRICT",
        "GPROX_NO_PIP_NVCC",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let mut sources: Vec<PathBuf> = fs::read_dir(&cuda_dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cu"))
                .collect()
        })
        .unwrap_or_default();
    sources.sort();

    build_emulator(&sources, &include_dir);
    build_device_code(&sources, &include_dir, &manifest, &out);
}

/// Compiles the kernels as host C++20 into the emulator library.
fn build_emulator(sources: &[PathBuf], include_dir: &Path) {
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++20")
        .include(include_dir)
        .flag("-x")
        .flag("c++")
        .flag("-ffp-contract=off")
        .flag("-pthread")
        .opt_level(2)
        .warnings(false);
    for s in sources {
        build.file(s);
    }
    build.compile("gprox_emu");
    println!("cargo:rustc-link-lib=pthread");
}

/// Compiles the fatbin with nvcc when one is found, and writes `fatbin.rs` either way.
fn build_device_code(sources: &[PathBuf], include_dir: &Path, manifest: &Path, out: &Path) {
    let strict = env::var("GPROX_CUDA_STRICT").is_ok_and(|v| v == "1");
    let fatbin_rs = out.join("fatbin.rs");
    let write_empty = || {
        fs::write(&fatbin_rs, "/// The embedded fatbin (empty: built without device code).\npub static FATBIN: &[u8] = &[];\n")
            .expect("write fatbin.rs");
    };
    let Some(nvcc) = find_nvcc(manifest) else {
        if strict {
            panic!("GPROX_CUDA_STRICT=1 but no nvcc found (NVCC, CUDA_HOME, CUDA_PATH, PATH, pip layout)");
        }
        println!("cargo:warning=gprox-cuda: nvcc not found (set NVCC or run scripts/install-cuda-toolkit.sh); building without device code, the CUDA backend will report \"built without device code\"");
        write_empty();
        return;
    };

    // One unity translation unit, so the output is one fatbin.
    let unity = out.join("gprox_kernels_all.cu");
    let body: String = sources
        .iter()
        .map(|s| format!("#include \"{}\"\n", s.display()))
        .collect();
    fs::write(&unity, body).expect("write unity source");
    let fatbin = out.join("gprox_kernels.fatbin");
    let archs = env::var("GPROX_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string());

    let mut cmd = Command::new(&nvcc);
    cmd.arg("-fatbin")
        .args(["-std=c++17", "-O3", "--fmad=false", "-Xptxas", "-v"])
        .arg("-I")
        .arg(include_dir);
    for arch in archs.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let gencode = if let Some(num) = arch.strip_prefix("sm_") {
            format!("arch=compute_{num},code=sm_{num}")
        } else if let Some(num) = arch.strip_prefix("compute_") {
            format!("arch=compute_{num},code=compute_{num}")
        } else {
            panic!("GPROX_CUDA_ARCHS entry {arch:?}: expected sm_XX or compute_XX");
        };
        cmd.arg("-gencode").arg(gencode);
    }
    cmd.arg("-o").arg(&fatbin).arg(&unity);

    let result = cmd.output();
    let (ok, log) = match result {
        Ok(o) => (
            o.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        ),
        Err(e) => (false, format!("failed to run {}: {e}", nvcc.display())),
    };
    fs::write(out.join("ptxas.log"), &log).expect("write ptxas.log");
    if !ok {
        if strict {
            panic!("nvcc ({}) failed:\n{log}", nvcc.display());
        }
        println!(
            "cargo:warning=gprox-cuda: nvcc ({}) failed, building without device code; see {}",
            nvcc.display(),
            out.join("ptxas.log").display()
        );
        write_empty();
        return;
    }
    let spills = spill_lines(&log);
    if !spills.is_empty() {
        let msg = format!("register spills in the kernels:\n{}", spills.join("\n"));
        if strict {
            panic!("GPROX_CUDA_STRICT=1: {msg}");
        }
        println!("cargo:warning=gprox-cuda: {}", msg.replace('\n', " | "));
    }
    fs::write(
        &fatbin_rs,
        format!(
            "/// The embedded fatbin (all kernels, archs {archs}).\npub static FATBIN: &[u8] = include_bytes!({:?});\n",
            fatbin.display().to_string()
        ),
    )
    .expect("write fatbin.rs");
    println!("cargo:rustc-cfg=gprox_device_code");
}

/// The ptxas lines reporting non-zero spill stores or loads.
fn spill_lines(log: &str) -> Vec<String> {
    let number_before = |line: &str, what: &str| -> u64 {
        line.find(what)
            .and_then(|at| line[..at].split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    log.lines()
        .filter(|l| {
            number_before(l, "bytes spill stores") > 0 || number_before(l, "bytes spill loads") > 0
        })
        .map(|l| l.trim().to_string())
        .collect()
}

/// nvcc from `NVCC`, `CUDA_HOME`/`CUDA_PATH`, `PATH`, then the pip layout.
fn find_nvcc(manifest: &Path) -> Option<PathBuf> {
    let exe = if cfg!(windows) { "nvcc.exe" } else { "nvcc" };
    if let Some(p) = env::var_os("NVCC").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = env::var_os(var).filter(|v| !v.is_empty()) {
            let p = Path::new(&root).join("bin").join(exe);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    if let Some(path) = env::var_os("PATH") {
        if let Some(p) = env::split_paths(&path)
            .map(|d| d.join(exe))
            .find(|p| p.is_file())
        {
            return Some(p);
        }
    }
    if env::var("GPROX_NO_PIP_NVCC").is_ok_and(|v| v == "1") {
        return None;
    }
    let mut site_dirs: Vec<PathBuf> = Vec::new();
    // The workspace's venv made by scripts/install-cuda-toolkit.sh.
    if let Some(root) = manifest.parent() {
        if let Ok(rd) = fs::read_dir(root.join(".cuda-venv").join("lib")) {
            let mut libs: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            libs.sort();
            site_dirs.extend(libs.into_iter().map(|l| l.join("site-packages")));
        }
    }
    // python3's own site directories.
    let script =
        "import site,sys\nfor d in site.getsitepackages()+[site.getusersitepackages()]: print(d)";
    if let Ok(o) = Command::new("python3").args(["-c", script]).output() {
        if o.status.success() {
            site_dirs.extend(
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .map(PathBuf::from),
            );
        }
    }
    site_dirs
        .into_iter()
        .map(|d| d.join("nvidia").join("cu13").join("bin").join(exe))
        .find(|p| p.is_file())
}
