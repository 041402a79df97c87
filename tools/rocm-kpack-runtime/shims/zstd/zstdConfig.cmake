# Shim: Debian's zstd 1.5.4 exports zstd::libzstd_shared/_static but not zstd::libzstd.
include("/usr/lib/x86_64-linux-gnu/cmake/zstd/zstdTargets.cmake")
if(NOT TARGET zstd::libzstd)
  add_library(zstd::libzstd INTERFACE IMPORTED)
  set_target_properties(zstd::libzstd PROPERTIES INTERFACE_LINK_LIBRARIES zstd::libzstd_shared)
endif()
set(zstd_FOUND TRUE)
