# The GPU side of the library (DESIGN §8), which needs no GPU toolkit to build:
#   - the CUDA driver and NVRTC are opened with dlopen (src/driver/cuda/), so the library
#     links only the dynamic loader;
#   - the kernel sources (kernels/cuda/*.cu, *.cuh) are compiled at run time by NVRTC, so
#     the library carries their text: cmake/embed_cuda_kernels.cmake writes it into a
#     generated source whenever a kernel file changes.
target_link_libraries(max_c_deps INTERFACE ${CMAKE_DL_LIBS})

file(GLOB_RECURSE MAX_C_CUDA_KERNEL_FILES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cu ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cuh)
set(MAX_C_CUDA_KERNEL_SOURCES_CC ${PROJECT_BINARY_DIR}/generated/kernels/cuda_kernel_sources.cc)
add_custom_command(
  OUTPUT ${MAX_C_CUDA_KERNEL_SOURCES_CC}
  COMMAND ${CMAKE_COMMAND} -DKERNEL_DIR=${PROJECT_SOURCE_DIR}/kernels/cuda
          -DOUTPUT=${MAX_C_CUDA_KERNEL_SOURCES_CC} -P ${CMAKE_CURRENT_LIST_DIR}/embed_cuda_kernels.cmake
  DEPENDS ${MAX_C_CUDA_KERNEL_FILES} ${CMAKE_CURRENT_LIST_DIR}/embed_cuda_kernels.cmake
  COMMENT "embedding the kernels/cuda sources"
  VERBATIM)
target_sources(max_c_objects PRIVATE ${MAX_C_CUDA_KERNEL_SOURCES_CC})

# tests/gpu compares the embedded sources with the files on disk and looks for the NVRTC
# wheel in the source tree's .venv; it learns where the tree is here. Called after
# add_subdirectory(tests), when the target exists.
function(max_c_configure_gpu_tests)
  if(TARGET gpu_tests)
    target_compile_definitions(gpu_tests PRIVATE MAX_C_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  endif()
endfunction()
