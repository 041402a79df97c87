//! clang-offload-bundler containers. Binary bundles now; text, object-file
//! and compressed bundles are added per format beside it.

pub mod binary;
pub mod ccob;
pub mod fatbin;
pub mod object;
pub mod text;
