# Third-party libraries and generated sources of the library, gathered in one
# INTERFACE target so the shared library and the internal archive link the same set.
add_library(max_c_deps INTERFACE)
find_package(Threads REQUIRED)
target_link_libraries(max_c_deps INTERFACE Threads::Threads)
target_link_libraries(max_c_objects PRIVATE max_c_deps)

# The MAXG graph format: flatc compiles src/serialize/graph.fbs at build time.
include(${CMAKE_CURRENT_LIST_DIR}/flatbuffers.cmake OPTIONAL)
