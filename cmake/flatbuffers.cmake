# The MAXG graph file format (src/serialize/graph.fbs), compiled by flatc at build time.
#
# Needs the flatc compiler and the FlatBuffers headers; on Debian/Ubuntu:
#   apt-get install flatbuffers-compiler libflatbuffers-dev
# The generated header lands in ${PROJECT_BINARY_DIR}/generated/serialize/ (already on
# max_c_objects' include path) and is never committed.

find_program(MAX_C_FLATC NAMES flatc DOC "the FlatBuffers schema compiler")
find_path(MAX_C_FLATBUFFERS_INCLUDE_DIR NAMES flatbuffers/flatbuffers.h DOC "the FlatBuffers headers")

if(NOT MAX_C_FLATC)
  message(FATAL_ERROR
    "max_c: flatc (the FlatBuffers compiler) was not found; it compiles src/serialize/graph.fbs.\n"
    "Install it with: apt-get install flatbuffers-compiler libflatbuffers-dev\n"
    "(or point -DMAX_C_FLATC=/path/to/flatc at one).")
endif()
if(NOT MAX_C_FLATBUFFERS_INCLUDE_DIR)
  message(FATAL_ERROR
    "max_c: the FlatBuffers headers (flatbuffers/flatbuffers.h) were not found.\n"
    "Install them with: apt-get install libflatbuffers-dev flatbuffers-compiler\n"
    "(or point -DMAX_C_FLATBUFFERS_INCLUDE_DIR=/path/to/include at them).")
endif()

# The generated code refuses to compile against headers of another version
# (FLATBUFFERS_VERSION_* static_asserts), so say early which flatc was picked.
execute_process(COMMAND ${MAX_C_FLATC} --version OUTPUT_VARIABLE _max_c_flatc_version
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
message(STATUS "max_c: ${_max_c_flatc_version} (${MAX_C_FLATC}), headers in ${MAX_C_FLATBUFFERS_INCLUDE_DIR}")

set(MAX_C_GRAPH_FBS ${PROJECT_SOURCE_DIR}/src/serialize/graph.fbs)
set(MAX_C_GENERATED_SERIALIZE_DIR ${PROJECT_BINARY_DIR}/generated/serialize)
set(MAX_C_GRAPH_GENERATED_H ${MAX_C_GENERATED_SERIALIZE_DIR}/graph_generated.h)

add_custom_command(
  OUTPUT ${MAX_C_GRAPH_GENERATED_H}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${MAX_C_GENERATED_SERIALIZE_DIR}
  # --gen-mutable: tests patch fields of a valid file in place to build hostile ones.
  COMMAND ${MAX_C_FLATC} --cpp --gen-mutable --scoped-enums -o ${MAX_C_GENERATED_SERIALIZE_DIR} ${MAX_C_GRAPH_FBS}
  DEPENDS ${MAX_C_GRAPH_FBS} ${MAX_C_FLATC}
  COMMENT "flatc: src/serialize/graph.fbs -> generated/serialize/graph_generated.h"
  VERBATIM)
add_custom_target(max_c_flatbuffers_generated DEPENDS ${MAX_C_GRAPH_GENERATED_H})

target_sources(max_c_objects PRIVATE ${MAX_C_GRAPH_GENERATED_H})
add_dependencies(max_c_objects max_c_flatbuffers_generated)
# Header-only use of FlatBuffers (builder and Verifier): no library to link.
target_include_directories(max_c_deps SYSTEM INTERFACE ${MAX_C_FLATBUFFERS_INCLUDE_DIR})
