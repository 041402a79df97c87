# Shim: Debian ships msgpack-cxx 4.1.3 as package "msgpack"/target "msgpackc-cxx";
# rocm-kpack asks for package "msgpack-cxx" with target "msgpack-cxx" (header-only).
if(NOT TARGET msgpack-cxx)
  add_library(msgpack-cxx INTERFACE IMPORTED)
  set_target_properties(msgpack-cxx PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "/usr/include"
    INTERFACE_COMPILE_DEFINITIONS "MSGPACK_NO_BOOST;MSGPACK_DEFAULT_API_VERSION=3")
endif()
set(msgpack-cxx_FOUND TRUE)
