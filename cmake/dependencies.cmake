# Third-party libraries and generated sources of the library, gathered in one
# INTERFACE target so the shared library and the internal archive link the same set.
add_library(max_c_deps INTERFACE)
find_package(Threads REQUIRED)
target_link_libraries(max_c_deps INTERFACE Threads::Threads)

# The one thread team (DESIGN §5): OpenMP, the runtime Debian's oneDNN is built with.
find_package(OpenMP REQUIRED COMPONENTS CXX)
target_link_libraries(max_c_deps INTERFACE OpenMP::OpenMP_CXX)

# oneDNN for matmul and convolution (Debian's libdnnl-dev; DNNL_CPU_RUNTIME=OMP). Found by
# header and library rather than through its CMake package: Debian's dnnl-config.cmake
# requires the OpenCL headers of its GPU runtime, which only recommends them, and we use none.
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(DNNL_LIBRARY dnnl REQUIRED)
target_include_directories(max_c_deps INTERFACE ${DNNL_INCLUDE_DIR})
target_link_libraries(max_c_deps INTERFACE ${DNNL_LIBRARY})
target_link_libraries(max_c_objects PRIVATE max_c_deps)

# The MAXG graph format: flatc compiles src/serialize/graph.fbs at build time.
include(${CMAKE_CURRENT_LIST_DIR}/flatbuffers.cmake OPTIONAL)
