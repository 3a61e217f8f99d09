# The CMake package of nerve's C library, installed with the Python package:
#   find_package(nerve CONFIG REQUIRED)   # with -Dnerve_DIR="$(nerve --cmake-dir)"
#   target_link_libraries(my_node PRIVATE nerve::nerve)
# Everything is found relative to this file, wherever pip put the package.
get_filename_component(_nerve_prefix "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

if(NOT TARGET nerve::nerve)
  add_library(nerve::nerve SHARED IMPORTED)
  set_target_properties(nerve::nerve PROPERTIES
    IMPORTED_LOCATION "${_nerve_prefix}/lib/libnerve.so"
    IMPORTED_SONAME "libnerve.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_nerve_prefix}/include")
endif()

set(nerve_INCLUDE_DIR "${_nerve_prefix}/include")
set(nerve_LIBRARY "${_nerve_prefix}/lib/libnerve.so")
unset(_nerve_prefix)
