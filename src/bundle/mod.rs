//! clang-offload-bundler containers. Binary bundles now; text, object-file
//! and compressed bundles are added per format beside it.

pub mod binary;
pub mod ccob;
