//! `offload-kit demo`: a built-in example bundle, listed, validated and
//! extracted.

use crate::Settings;
use offload_kit_format::Error;
use offload_kit_io::output;
use offload_kit_llvm::budget::Budget;
use offload_kit_llvm::detect;
use offload_kit_llvm::Release;
use std::path::{Path, PathBuf};

/// `offload-kit demo`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Where to write the example files.
    #[arg(long, default_value = "offload-kit-demo")]
    pub(crate) dir: PathBuf,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    demo(&a.dir, settings.budget)
}

fn demo(dir: &Path, budget: Budget) -> Result<i32, Vec<Error>> {
    use offload_kit_llvm::bundle::binary;
    std::fs::create_dir_all(dir).map_err(|e| vec![e.into()])?;
    let entries: [(&[u8], &[u8]); 3] = [
        (b"host-x86_64-unknown-linux-gnu-", b"host object bytes\n"),
        (b"hip-amdgcn-amd-amdhsa--gfx906", b"gfx906 code object\n"),
        (
            b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
            b"gfx90a:xnack+ code object\n",
        ),
    ];
    let bytes = binary::write_to_vec(&entries, 4096).map_err(|e| vec![e])?;
    let path = dir.join("demo.bundle");
    output::write_in_dir(dir, "demo.bundle", &bytes).map_err(|e| vec![e])?;
    outln!(
        "wrote {} ({} bytes, 3 entries, --bundle-align=4096)",
        path.display(),
        bytes.len()
    );
    outln!("\n$ offload-kit list {}", path.display());
    let l = detect::list(&bytes, detect::ListOptions::new(None, budget))?;
    super::list::print_listing(&l);
    for r in Release::WITH_BINARY {
        let l = detect::list(&bytes, detect::ListOptions::new(Some(r), budget))?;
        let ids: Vec<&str> = l.entries.iter().map(|e| e.id.as_str()).collect();
        outln!("LLVM {r} -list order: {}", ids.join(", "));
    }
    outln!("\n$ offload-kit validate {}", path.display());
    super::validate::validate(&path, false, budget)?;
    let out = dir.join("gfx906.co");
    // extract writes a named output as LLVM would, through a link; the
    // demo's names are its own, so whatever is there goes first.
    if std::fs::symlink_metadata(&out).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        std::fs::remove_file(&out).map_err(|e| vec![e.into()])?;
    }
    let args = super::extract::Args {
        file: path.clone(),
        id: Some("hip-amdgcn-amd-amdhsa--gfx906".into()),
        output: Some(out.clone()),
        ..Default::default()
    };
    super::extract::extract(&args, budget)?;
    outln!(
        "\nextracted hip-amdgcn-amd-amdhsa--gfx906 to {}",
        out.display()
    );
    let mut bad = bytes.clone();
    bad[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
    let badp = dir.join("corrupt.bundle");
    output::write_in_dir(dir, "corrupt.bundle", &bad).map_err(|e| vec![e])?;
    outln!(
        "\n$ offload-kit validate {}   (payload size of entry 0 set to 2^64-1)",
        badp.display()
    );
    if let Err(es) = detect::list(&bad, detect::ListOptions::new(None, budget)) {
        for e in es {
            outln!("  {e}");
        }
    }
    Ok(0)
}
