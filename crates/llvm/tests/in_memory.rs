//! Bundling and unbundling in memory (`bundle_in_memory`,
//! `unbundle_in_memory`), every modelled release: what one writes the
//! other gives back, plain and compressed (main walks every blob of the
//! input), and a target the bundle lacks is the release's failure unless
//! missing bundles are allowed.

use offload_kit_llvm::bundle::ccob::{Method, WriteOptions};
use offload_kit_llvm::bundler::{
    bundle_in_memory, unbundle_in_memory, BundleOptions, UnbundleOptions,
};
use offload_kit_llvm::Release;

const HOST: &str = "host-x86_64-unknown-linux-gnu";
const DEV: &str = "hip-amdgcn-amd-amdhsa--gfx906";

#[test]
fn what_a_release_bundles_it_unbundles() {
    let device: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    for release in Release::MODELLED {
        let compressions =
            std::iter::once(None).chain((release.ccob_versions_written().iter()).map(|&version| {
                Some(WriteOptions {
                    version,
                    method: Method::Zstd,
                    level: 3,
                })
            }));
        for compress in compressions {
            let opts = BundleOptions {
                release,
                file_type: "o",
                align: 4096,
                compress,
                budget: Default::default(),
            };
            let bundle = bundle_in_memory(&[(HOST, b"host"), (DEV, &device)], opts).unwrap();
            let un = UnbundleOptions {
                release,
                file_type: "o",
                allow_missing: false,
                budget: Default::default(),
            };
            let out = unbundle_in_memory(&bundle, &[DEV, HOST], un)
                .unwrap_or_else(|e| panic!("{release} {compress:?}: {e}"));
            assert_eq!(
                out,
                [Some(device.clone()), Some(b"host".to_vec())],
                "{release} {compress:?}"
            );
            let gfx1100 = "hip-amdgcn-amd-amdhsa--gfx1100";
            let missing = unbundle_in_memory(&bundle, &[gfx1100, HOST], un);
            assert!(missing.is_err(), "{release}: a missing target unbundled");
            let allowed = UnbundleOptions {
                allow_missing: true,
                ..un
            };
            let out = unbundle_in_memory(&bundle, &[gfx1100, HOST], allowed).unwrap();
            assert_eq!(out, [Some(Vec::new()), Some(b"host".to_vec())], "{release}");
        }
    }
}

#[test]
fn archives_and_bad_options_are_refused() {
    let un = UnbundleOptions {
        release: Release::L22,
        file_type: "a",
        allow_missing: false,
        budget: Default::default(),
    };
    assert!(unbundle_in_memory(b"!<arch>\n", &[DEV], un).is_err());
    let un = UnbundleOptions {
        file_type: "nope",
        ..un
    };
    assert!(unbundle_in_memory(b"", &[DEV, HOST], un).is_err());
    let un = UnbundleOptions {
        file_type: "o",
        ..un
    };
    assert!(unbundle_in_memory(b"", &[], un).is_err());
}
