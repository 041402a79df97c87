//! clang-offload-bundler containers: binary, text, object-file and
//! compressed bundles, `.hip_fatbin` host files and heterogeneous device
//! archives.

pub mod archive;
pub mod binary;
pub mod ccob;
pub mod fatbin;
pub mod object;
pub mod text;
